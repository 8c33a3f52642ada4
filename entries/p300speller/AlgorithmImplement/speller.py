"""The baseline's signal processing, shared by training and the online run so that both
see exactly the same numbers: a causal band-pass, per-channel scaling from the block's
recent past, one feature vector per flash once its epoch is complete, and the trial
bookkeeping that says when a sequence can be decided.

Everything here works packet by packet (any packet length) and never looks ahead.
numpy only.
"""

from collections import deque

import numpy as np

FS = 250

# The Neuracle 64-channel cap in row order (as crates/synth/src/p300.rs CHANNELS).
CHANNELS = (
    "Fpz Fp1 Fp2 AF3 AF4 AF7 AF8 Fz F1 F2 F3 F4 F5 F6 F7 F8 FCz FC1 FC2 FC3 FC4 FC5 FC6 "
    "FT7 FT8 Cz C1 C2 C3 C4 C5 C6 T7 T8 CP1 CP2 CP3 CP4 CP5 CP6 TP7 TP8 Pz P3 P4 P5 P6 "
    "P7 P8 POz PO3 PO4 PO5 PO6 PO7 PO8 Oz O1 O2 ECG HEOR HEOL VEOU VEOL"
).split()
assert len(CHANNELS) == 64

# The 6x6 matrix, row-major: character i reports code 101 + i.
MATRIX = "ABCDEFGHIJKLMNOPQRSTUVWXYZ123456789_"
# The two flash groups (1-12) of each character (docs/challenges.md).
GROUPS = (
    (1, 4), (1, 5), (1, 6), (1, 7), (1, 8), (1, 9),
    (2, 10), (2, 5), (2, 6), (2, 7), (2, 8), (2, 9),
    (3, 10), (3, 11), (3, 6), (3, 7), (3, 8), (3, 9),
    (4, 10), (4, 11), (4, 12), (4, 7), (4, 8), (4, 9),
    (5, 10), (5, 11), (5, 12), (1, 10), (5, 8), (5, 9),
    (6, 10), (6, 11), (6, 12), (3, 12), (2, 11), (6, 9),
)  # fmt: skip
# 36 x 12: which groups each character is in.
CHAR_GROUPS = np.zeros((36, 12))
for _i, (_a, _b) in enumerate(GROUPS):
    CHAR_GROUPS[_i, _a - 1] = CHAR_GROUPS[_i, _b - 1] = 1.0

SEQUENCES = 5

# Trigger codes.
TRIAL_START = (101, 136)
FLASH = (1, 12)
SEQUENCE_END = 200
TRIAL_END = 241


# --------------------------------------------------------------------------------------
# Filter design: Butterworth biquads by the bilinear transform (prewarped), cascaded into
# one state-space system, run a whole packet at a time with precomputed block matrices.


def butterworth_sections(fs, high_hz, low_hz, high_order=2, low_order=4):
    """Biquads (b0, b1, b2, a1, a2) of a Butterworth high-pass at `high_hz` followed by a
    Butterworth low-pass at `low_hz` (even orders)."""

    def qs(order):
        return [1.0 / (2.0 * np.cos(np.pi * (2 * k + 1) / (2 * order))) for k in range(order // 2)]

    sections = []
    for kind, fc, order in (("high", high_hz, high_order), ("low", low_hz, low_order)):
        k = np.tan(np.pi * fc / fs)
        for q in qs(order):
            norm = 1.0 / (1.0 + k / q + k * k)
            a1 = 2.0 * (k * k - 1.0) * norm
            a2 = (1.0 - k / q + k * k) * norm
            if kind == "low":
                b0 = k * k * norm
                b = (b0, 2.0 * b0, b0)
            else:
                b = (norm, -2.0 * norm, norm)
            sections.append((*b, a1, a2))
    return sections


def state_space(sections):
    """(A, B, C, D) of the cascade, one sample per step: s' = A s + B x, y = C s + D x
    (each biquad in transposed direct form II)."""
    A = np.zeros((0, 0))
    B = np.zeros(0)
    C = np.zeros(0)
    D = 1.0
    for b0, b1, b2, a1, a2 in sections:
        a2x2 = np.array([[-a1, 1.0], [-a2, 0.0]])
        b2x = np.array([b1 - a1 * b0, b2 - a2 * b0])
        c2x = np.array([1.0, 0.0])
        n = A.shape[0]
        # Series: the previous output feeds this section.
        A_new = np.zeros((n + 2, n + 2))
        A_new[:n, :n] = A
        A_new[n:, :n] = np.outer(b2x, C)
        A_new[n:, n:] = a2x2
        B = np.concatenate([B, b2x * D])
        C = np.concatenate([b0 * C, c2x])
        D = b0 * D
        A = A_new
    return A, B, C, D


class BlockFilter:
    """The cascade applied to (channels x L) arrays, L samples at a time, with its state
    carried between calls; started at the steady state of the first sample's value (so a
    DC offset does not ring)."""

    def __init__(self, sections):
        self.A, self.B, self.C, self.D = state_space(sections)
        self.k = self.A.shape[0]
        self._steady = np.linalg.solve(np.eye(self.k) - self.A, self.B)
        self._blocks = {}
        self.state = None

    def _matrices(self, L):
        m = self._blocks.get(L)
        if m is None:
            A, B, C, D, k = self.A, self.B, self.C, self.D, self.k
            powers = [np.eye(k)]
            for _ in range(L):
                powers.append(A @ powers[-1])
            h = [D] + [C @ powers[j] @ B for j in range(L - 1)]
            mx = np.zeros((L, L))
            for j in range(L):
                for i in range(j + 1):
                    mx[j, i] = h[j - i]
            ms = np.array([C @ powers[j] for j in range(L)])
            bl = np.stack([powers[L - 1 - i] @ B for i in range(L)], axis=1)
            m = (mx.T.copy(), ms.T.copy(), powers[L].T.copy(), bl.T.copy())
            self._blocks[L] = m
        return m

    def reset(self):
        self.state = None

    def __call__(self, x):
        if x.shape[1] == 0:
            return x.copy()
        if self.state is None:
            self.state = x[:, :1] * self._steady[None, :]
        mxt, mst, alt, blt = self._matrices(x.shape[1])
        y = x @ mxt + self.state @ mst
        self.state = self.state @ alt + x @ blt
        return y


# --------------------------------------------------------------------------------------
# The front end: filter, scale, epochs, trials.


class Params:
    """The processing constants (saved with the model, so a model is run as trained)."""

    def __init__(
        self,
        channels=(
            "Fz", "FCz", "Cz", "C1", "C2", "CP1", "CP2", "CP3", "CP4", "Pz", "P3", "P4",
            "P5", "P6", "P7", "P8", "POz", "PO3", "PO4", "PO7", "PO8", "Oz", "O1", "O2",
        ),  # fmt: skip
        high_hz=0.5,
        low_hz=12.0,
        epoch=200,
        bin=10,
        scale_window=250,
        scale_windows=20,
        scale_quantile=0.3,
        deadline=190,
    ):
        self.channels = tuple(channels)
        self.rows = np.array([CHANNELS.index(c) for c in self.channels])
        self.high_hz = high_hz
        self.low_hz = low_hz
        self.epoch = epoch  # samples after the flash (0-800 ms)
        self.bin = bin  # samples averaged per feature
        self.scale_window = scale_window
        self.scale_windows = scale_windows
        self.scale_quantile = scale_quantile
        # If the last sequence's epochs are not complete this many samples after its 200,
        # report with what there is. The trial end comes 212 samples (850 ms) after the
        # 200, so a report at the first packet end at least 190 samples after it is still
        # before the packet holding the 241; in the contest's layout the last epoch (200
        # samples) is complete 163 samples after the 200, before the deadline.
        self.deadline = deadline

    @property
    def bins(self):
        return self.epoch // self.bin

    def to_dict(self):
        return {
            "channels": np.array(self.channels),
            "high_hz": self.high_hz,
            "low_hz": self.low_hz,
            "epoch": self.epoch,
            "bin": self.bin,
            "scale_window": self.scale_window,
            "scale_windows": self.scale_windows,
            "scale_quantile": self.scale_quantile,
            "deadline": self.deadline,
        }

    @classmethod
    def from_dict(cls, d):
        return cls(
            channels=[str(c) for c in d["channels"]],
            high_hz=float(d["high_hz"]),
            low_hz=float(d["low_hz"]),
            epoch=int(d["epoch"]),
            bin=int(d["bin"]),
            scale_window=int(d["scale_window"]),
            scale_windows=int(d["scale_windows"]),
            scale_quantile=float(d["scale_quantile"]),
            deadline=int(d["deadline"]),
        )


class Scaler:
    """Per-channel scale of the filtered signal from the block's recent past: the mean
    square of each `window`-sample window, and a low quantile over the last `windows` of
    them (so that a start-up transient or an artefact does not blow it up). Channels with
    no signal get a scale factor of 0 (their features stay 0)."""

    def __init__(self, p, channels):
        self.p = p
        self.channels = channels
        self.reset()

    def reset(self):
        self.sum = np.zeros(self.channels)
        self.count = 0
        self.windows = deque(maxlen=self.p.scale_windows)
        self.factor = None

    def push(self, y):
        i = 0
        n = y.shape[1]
        while i < n:
            take = min(n - i, self.p.scale_window - self.count)
            part = y[:, i : i + take]
            self.sum += np.einsum("ij,ij->i", part, part)
            self.count += take
            i += take
            if self.count == self.p.scale_window:
                self.windows.append(self.sum / self.count)
                self.sum = np.zeros(self.channels)
                self.count = 0
                self.factor = None

    def inverse(self):
        """1 / scale per channel (0 for a dead channel)."""
        if self.factor is not None:
            return self.factor
        if self.windows:
            ms = np.quantile(np.array(self.windows), self.p.scale_quantile, axis=0)
        elif self.count:
            ms = self.sum / self.count  # before the first whole window: what there is
        else:
            return np.zeros(self.channels)
        live = ms > 1e-10
        factor = np.where(live, 1.0 / np.sqrt(np.where(live, ms, 1.0)), 0.0)
        if self.windows:
            self.factor = factor
        return factor


class Trial:
    __slots__ = (
        "index", "start", "code", "flashes", "seq_ends", "ended", "pending", "ready",
        "sums", "reported",
    )  # fmt: skip

    def __init__(self, index, start, code):
        self.index = index
        self.start = start
        self.code = code  # the true code in training data; 101 when streamed
        self.flashes = []  # (position, group 1-12, sequence index)
        self.seq_ends = []  # positions of the 200s
        self.ended = False  # 241 seen: too late to report
        self.pending = [0] * 16  # epochs not yet delivered, per sequence
        self.ready = 0  # sequences announced complete
        self.sums = None  # the decoder's per-sequence group scores
        self.reported = False


class EpochStream:
    """Feeds on packets (rows x n, the trigger row last; `start` its block position) and
    yields what happened, in order:

    - ``("epoch", trial, sequence, group, features)``: a flash's features (channels x
      bins) once its epoch is complete;
    - ``("ready", trial, sequences, point)``: all epochs of the trial's first `sequences`
      sequences have been delivered (so they can be decided on) at `point` samples;
    - ``("deadline", trial, point)``: the last sequence is late; decide now.
    """

    def __init__(self, p):
        self.p = p
        self.filter = BlockFilter(butterworth_sections(FS, p.high_hz, p.low_hz))
        self.scaler = Scaler(p, len(p.rows))
        self.ring_len = 1 << int(np.ceil(np.log2(p.epoch + 64)))
        self.epoch_offsets = np.arange(p.epoch)
        self.reset()

    def reset(self):
        """A new block."""
        self.filter.reset()
        self.scaler.reset()
        self.ring = np.zeros((len(self.p.rows), self.ring_len))
        self.end = 0
        self.trials = []
        self.waiting = deque()  # (position, group, trial, sequence) in time order
        self.deadline_sent = set()

    def feed(self, data, start):
        p = self.p
        out = []
        if start == 0 or start != self.end:
            self.reset()
            self.end = start
        n = data.shape[1]
        if n == 0:
            return out
        y = self.filter(data[p.rows])
        self.scaler.push(y)
        idx = (self.end + np.arange(n)) % self.ring_len
        self.ring[:, idx] = y
        self.end += n

        trig = data[-1]
        for i in np.flatnonzero(trig):
            code = int(round(trig[i]))
            pos = start + int(i)
            trial = self.trials[-1] if self.trials else None
            if TRIAL_START[0] <= code <= TRIAL_START[1]:
                self.trials.append(Trial(len(self.trials), pos, code))
            elif trial is None or trial.ended:
                continue
            elif FLASH[0] <= code <= FLASH[1]:
                seq = len(trial.seq_ends)
                if seq < len(trial.pending):
                    trial.flashes.append((pos, code, seq))
                    trial.pending[seq] += 1
                    self.waiting.append((pos, code, trial, seq))
            elif code == SEQUENCE_END:
                trial.seq_ends.append(pos)
            elif code == TRIAL_END:
                trial.ended = True

        inverse = None
        while self.waiting and self.waiting[0][0] + p.epoch <= self.end:
            pos, group, trial, seq = self.waiting.popleft()
            trial.pending[seq] -= 1
            if pos < self.end - self.ring_len:
                continue  # fell out of the ring (only with packets longer than it)
            if inverse is None:
                inverse = self.scaler.inverse()
            epoch = self.ring[:, (pos + self.epoch_offsets) % self.ring_len]
            feats = epoch.reshape(len(p.rows), p.bins, p.bin).mean(axis=2) * inverse[:, None]
            out.append(("epoch", trial, seq, group, feats))

        trial = self.trials[-1] if self.trials else None
        if trial is not None and not trial.ended:
            while trial.ready < len(trial.seq_ends) and trial.pending[trial.ready] == 0:
                trial.ready += 1
                out.append(("ready", trial, trial.ready, self.end))
            if (
                len(trial.seq_ends) >= SEQUENCES
                and trial.ready < SEQUENCES
                and self.end >= trial.seq_ends[SEQUENCES - 1] + p.deadline
                and trial.index not in self.deadline_sent
            ):
                self.deadline_sent.add(trial.index)
                out.append(("deadline", trial, self.end))
        return out


def sequences_used(trial, point):
    """m as the session counts it: sequences with at least 3 flashes before `point`."""
    counts = [0] * (len(trial.seq_ends) + 1)
    for pos, _, seq in trial.flashes:
        if pos < point:
            counts[seq] += 1
    return max(1, sum(c >= 3 for c in counts))


def posterior(group_sums, alpha):
    """Character posteriors (36) from per-group score sums (12), uniform prior."""
    ll = alpha * (CHAR_GROUPS @ group_sums)
    ll -= ll.max()
    e = np.exp(ll)
    return e / e.sum()


def features_of_block(p, block, chunk=10):
    """Runs the front end over a whole block as the session streams it (packets of
    `chunk`). Returns (trials, epochs): the Trial objects and a list of
    (trial index, sequence, group, features), plus the ready points per trial."""
    stream = EpochStream(p)
    epochs = []
    ready = {}
    for start in range(0, block.shape[1], chunk):
        for ev in stream.feed(block[:, start : start + chunk], start):
            if ev[0] == "epoch":
                _, trial, seq, group, feats = ev
                epochs.append((trial.index, seq, group, feats))
            elif ev[0] == "ready":
                _, trial, s, point = ev
                ready.setdefault(trial.index, {})[s] = point
            else:
                _, trial, point = ev
                ready.setdefault(trial.index, {}).setdefault(SEQUENCES, point)
    return stream.trials, epochs, ready


class Decoder:
    """The online speller: per flash an LDA score of its features, per group the sum of
    its flashes' scores, per character the sum of its two groups; a character posterior
    (uniform prior, scores scaled by `alpha`) after each complete sequence. It reports
    the best character when the posterior passes `theta` (dynamic stopping) or after the
    last sequence."""

    def __init__(self, params, weights, alpha, theta, dynamic=True):
        self.stream = EpochStream(params)
        self.weights = np.asarray(weights, dtype=np.float64).reshape(len(params.rows), params.bins)
        self.alpha = float(alpha)
        self.theta = float(theta)
        self.dynamic = dynamic

    def feed(self, data, start):
        """The codes (101-136) to report now, after the packet `data` at `start`."""
        reports = []
        for ev in self.stream.feed(data, start):
            kind, trial = ev[0], ev[1]
            if trial.sums is None:
                trial.sums = np.zeros((len(trial.pending), 12))
            if kind == "epoch":
                _, _, seq, group, feats = ev
                trial.sums[seq, group - 1] += np.vdot(self.weights, feats)
                continue
            if trial.reported:
                continue
            if kind == "ready":
                s = ev[2]
                post = posterior(trial.sums[:s].sum(axis=0), self.alpha)
                if not (s >= SEQUENCES or (self.dynamic and post.max() >= self.theta)):
                    continue
            else:  # deadline
                post = posterior(trial.sums.sum(axis=0), self.alpha)
            trial.reported = True
            reports.append(TRIAL_START[0] + int(np.argmax(post)))
        return reports
