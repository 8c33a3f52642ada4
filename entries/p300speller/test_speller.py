"""Tests of the baseline's processing (not part of the entry's run).

From the repository root, with the judge's runtime (numpy; scipy for the filter check):
    PYTHONPATH=entries/p300client target/tmp/runtime/bin/python3 entries/p300speller/test_speller.py
"""

import pathlib
import sys
import tempfile
import unittest

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "AlgorithmImplement"))

import speller as sp  # noqa: E402
import training  # noqa: E402

# The contest's trial layout (crates/synth/src/p300.rs), in samples.
LEAD, CUE, SEQ, GAP, REST = 250, 250, 450, 212, 250


def flash_offset(k):
    return (75 * k + 1) // 2


def make_block(targets, amplitude, seed, dead=()):
    """65 rows: white noise, and on the centro-parietal rows a positive bump 350 ms
    after each flash of a target group; the trigger row with the true codes."""
    rng = np.random.default_rng(seed)
    n = LEAD + len(targets) * (CUE + 5 * (SEQ + GAP) + REST)
    data = rng.normal(size=(65, n))
    trig = data[64]
    trig[:] = 0
    bump = amplitude * np.exp(-0.5 * ((np.arange(200) / 250 - 0.35) / 0.06) ** 2)
    rows = [sp.CHANNELS.index(c) for c in ("Cz", "CP1", "CP2", "Pz", "P3", "P4", "POz", "PO3", "PO4", "Oz")]
    t0 = LEAD
    for target in targets:
        trig[t0] = 101 + target
        for s in range(5):
            start = t0 + CUE + s * (SEQ + GAP)
            order = rng.permutation(12) + 1
            for k, g in enumerate(order):
                pos = start + flash_offset(k)
                trig[pos] = g
                if g in sp.GROUPS[target]:
                    data[rows, pos : pos + 200] += bump
            trig[start + SEQ] = 200
        end = t0 + CUE + 5 * (SEQ + GAP)
        trig[end] = 241
        t0 = end + REST
    data[list(dead)] = 0
    return data


def stream(decoder, block):
    """Plays `block` as the session does (targets masked); returns [(point, code)]."""
    block = block.copy()
    t = block[-1]
    t[(t >= 101) & (t <= 136)] = 101
    out = []
    for start in range(0, block.shape[1], 10):
        for code in decoder.feed(block[:, start : start + 10], start):
            out.append((min(start + 10, block.shape[1]), code))
    return out


class Filter(unittest.TestCase):
    def test_matches_scipy_and_any_packet_length(self):
        sections = sp.butterworth_sections(250, 0.5, 12.0)
        x = np.random.default_rng(1).normal(size=(3, 1003)) + 40.0  # a DC offset
        whole = sp.BlockFilter(sections)(x)
        for chunk in (1, 7, 10, 250):
            f = sp.BlockFilter(sections)
            y = np.concatenate([f(x[:, i : i + chunk]) for i in range(0, x.shape[1], chunk)], axis=1)
            np.testing.assert_allclose(y, whole, atol=1e-9)
        # Started at the first value's steady state: a constant gives nothing.
        self.assertLess(np.abs(sp.BlockFilter(sections)(np.full((1, 500), 40.0))).max(), 1e-9)
        try:
            import scipy.signal as ss
        except ImportError:
            self.skipTest("scipy not installed")
        sos = np.vstack(
            [ss.butter(2, 0.5, "highpass", fs=250, output="sos"), ss.butter(4, 12.0, "lowpass", fs=250, output="sos")]
        )
        mine = np.array([[b0, b1, b2, 1.0, a1, a2] for b0, b1, b2, a1, a2 in sections])
        np.testing.assert_allclose(ss.sosfreqz(mine, 512, fs=250)[1], ss.sosfreqz(sos, 512, fs=250)[1], atol=1e-9)
        zi = ss.sosfilt_zi(mine)
        ref = np.stack([ss.sosfilt(mine, r, zi=zi * r[0])[0] for r in x])
        np.testing.assert_allclose(whole, ref, atol=1e-8)


class Decoding(unittest.TestCase):
    def setUp(self):
        self.params, self.weights, _, _ = training.untrained()

    def test_reports_before_the_next_sequence_counts_and_before_the_trial_end(self):
        targets = [0, 20, 35]
        block = make_block(targets, amplitude=3.0, seed=2)
        trials = sp.features_of_block(self.params, block)[0]
        for dynamic, want_m in ((True, 1), (False, 5)):
            d = sp.Decoder(self.params, self.weights, alpha=5.0, theta=0.9, dynamic=dynamic)
            reports = stream(d, block)
            self.assertEqual([c for _, c in reports], [101 + t for t in targets])
            for (point, _), trial in zip(reports, trials):
                end = (trial.seq_ends[-1] // 10) * 10  # 241 is GAP samples after the 200
                last_flash = max(p for p, _, s in trial.flashes if s == want_m - 1)
                self.assertEqual(point, (last_flash + self.params.epoch + 9) // 10 * 10)
                self.assertEqual(sp.sequences_used(trial, point), want_m)
                self.assertLess(point, end + GAP)
            # Deterministic.
            d2 = sp.Decoder(self.params, self.weights, alpha=5.0, theta=0.9, dynamic=dynamic)
            self.assertEqual(stream(d2, block), reports)

    def test_an_epoch_too_long_for_the_last_sequence_meets_the_deadline(self):
        params = sp.Params(epoch=240)
        block = make_block([9], amplitude=3.0, seed=4)
        trial = sp.features_of_block(params, block)[0][0]
        d = sp.Decoder(params, np.ones((len(params.channels), params.bins)), alpha=1.0, theta=2.0)
        [(point, _)] = stream(d, block)
        pos241 = trial.seq_ends[-1] + GAP
        self.assertEqual(point, (trial.seq_ends[-1] + params.deadline + 9) // 10 * 10)
        self.assertLess(point, (pos241 // 10 + 1) * 10)

    def test_dead_channels_and_a_new_block(self):
        block = make_block([5, 6], amplitude=3.0, seed=3, dead=range(0, 42))
        d = sp.Decoder(self.params, self.weights, alpha=5.0, theta=2.0)
        first = stream(d, block)
        self.assertEqual([c for _, c in first], [106, 107])
        # The same block again, from position 0: everything starts afresh.
        self.assertEqual(stream(d, block), first)
        feats = sp.features_of_block(self.params, block)[1]
        rows = list(self.params.channels).index("Fz")
        self.assertTrue(all(np.all(f[3][rows] == 0) and np.isfinite(f[3]).all() for f in feats))


class Training(unittest.TestCase):
    def test_trains_tunes_and_saves(self):
        with tempfile.TemporaryDirectory() as tmp:
            tmp = pathlib.Path(tmp)
            for s in range(3):
                (tmp / "data" / f"S{s + 1:02}").mkdir(parents=True)
                block = make_block([(7 * s + 5 * t) % 36 for t in range(4)], amplitude=1.0, seed=10 + s)
                np.save(tmp / "data" / f"S{s + 1:02}" / "block_1.npy", block.astype(np.float32))
            lines = []
            training.train(tmp / "data", tmp / "model", log=lines.append)
            self.assertIn("3-fold cross-validation by subject", lines[1])
            params, weights, alpha, theta = training.load(tmp / "model")
            self.assertEqual(weights.shape, (len(params.channels), params.bins))
            self.assertGreater(alpha, 0)
            self.assertIn(theta, training.THRESHOLDS)
            d = sp.Decoder(params, weights, alpha, theta)
            test = make_block([1, 2, 3, 4], amplitude=1.0, seed=99)
            self.assertEqual([c for _, c in stream(d, test)], [102, 103, 104, 105])
        self.assertIsNone(training.load(None))


if __name__ == "__main__":
    unittest.main()
