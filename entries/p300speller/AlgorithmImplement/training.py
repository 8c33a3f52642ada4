"""Training of the baseline: a pooled shrinkage LDA over every training subject's target
and non-target flashes, a score scale for the character posterior, and the dynamic
stopping threshold that maximises the mean ITR of the training subjects when the online
decision is simulated on scores the LDA gave them without having seen them
(cross-validated by subject)."""

import math
import pathlib
import re
import time

import numpy as np

try:
    from . import speller as sp
except ImportError:
    import speller as sp

MODEL_FILE = "p300_baseline.npz"
FOLDS = 5
# Posterior thresholds tried; above 1 means never stop early.
THRESHOLDS = np.concatenate([np.arange(0.20, 0.951, 0.05), [0.97, 0.98, 0.99, 0.995, 0.999, 1.01]])
TS = 1.8  # seconds per sequence
PENALTY_S = 9.0  # a trial without a valid report


def natural_key(name):
    return [(int(t) if t.isdigit() else t) for t in re.split(r"(\d+)", name)]


def blocks_of(data_dir):
    """[(subject, block name, path)] in the organiser layout, in natural order."""
    out = []
    subjects = [d for d in pathlib.Path(data_dir).iterdir() if d.is_dir() and not d.name.startswith(".")]
    for sd in sorted(subjects, key=lambda d: natural_key(d.name)):
        files = [f for f in sd.iterdir() if f.is_file() and f.name.endswith(".npy")]
        for f in sorted(files, key=lambda f: natural_key(f.name)):
            out.append((sd.name, f"{sd.name}/{f.stem}", f))
    return out


class BlockData:
    """One training block through the online front end."""

    def __init__(self, subject, name, params, array):
        if array.ndim != 2 or array.shape[0] < max(params.rows) + 2:
            raise ValueError(f"{name}: expected 65 rows x samples, found shape {array.shape}")
        self.subject = subject
        self.name = name
        trials, epochs, ready = sp.features_of_block(params, array)
        self.codes = np.array([t.code for t in trials])
        bad = [c for c in self.codes if not sp.TRIAL_START[0] <= c <= sp.TRIAL_START[1]]
        if bad:
            raise ValueError(f"{name}: trial start code {bad[0]} is not a target code 101-136")
        self.n_trials = len(trials)
        if epochs:
            self.X = np.stack([e[3].ravel() for e in epochs])
        else:
            self.X = np.zeros((0, len(params.rows) * params.bins))
        self.trial = np.array([e[0] for e in epochs], dtype=int)
        self.seq = np.array([e[1] for e in epochs], dtype=int)
        self.group = np.array([e[2] for e in epochs], dtype=int)
        pairs = [sp.GROUPS[c - 101] for c in self.codes]
        self.target = np.array([g in pairs[t] for t, g in zip(self.trial, self.group)], dtype=bool)
        # m of a report made when the first s sequences were complete.
        self.m = [
            {s: sp.sequences_used(t, point) for s, point in ready.get(t.index, {}).items()} for t in trials
        ]


def shrinkage_lda(X, y):
    """LDA weights with a Ledoit-Wolf shrunk pooled covariance, and the shrinkage."""
    m1, m0 = X[y].mean(axis=0), X[~y].mean(axis=0)
    Z = np.where(y[:, None], X - m1, X - m0)
    n, p = Z.shape
    S = Z.T @ Z / n
    mu = np.trace(S) / p
    Z2 = Z * Z
    beta = ((Z2.T @ Z2).sum() / n - (S * S).sum()) / n
    delta = (S * S).sum() - 2.0 * mu * np.trace(S) + p * mu * mu
    beta = min(beta, delta)
    lam = 0.0 if delta <= 0 else beta / delta
    C = (1.0 - lam) * S + lam * mu * np.eye(p)
    return np.linalg.solve(C, m1 - m0), lam


def itr(p, seconds):
    """Bits per minute as the session scores a subject (0 when P <= 0.5)."""
    if p <= 0.5:
        return 0.0
    bits = math.log2(36) + p * math.log2(p)
    if p < 1:
        bits += (1 - p) * math.log2((1 - p) / 35)
    return bits * 60.0 / seconds


def decisions(block, scores, alpha):
    """Per trial: (target index, [posterior after s sequences for s = 1..], m per s)."""
    out = []
    for t in range(block.n_trials):
        sel = block.trial == t
        sums = np.zeros((16, 12))
        np.add.at(sums, (block.seq[sel], block.group[sel] - 1), scores[sel])
        cum = np.cumsum(sums, axis=0)
        ready = block.m[t]
        posts = {s: sp.posterior(cum[s - 1], alpha) for s in ready}
        out.append((block.codes[t] - 101, posts, ready))
    return out


def simulate(subject_trials, theta, dynamic=True):
    """Mean ITR, mean accuracy, mean m over subjects, deciding as the Decoder does."""
    itrs, accs, ms = [], [], []
    for trials in subject_trials:
        correct, seconds = 0, 0.0
        for target, posts, ready in trials:
            chosen = None
            for s in sorted(posts):
                if s >= sp.SEQUENCES or (dynamic and posts[s].max() >= theta):
                    chosen = s
                    break
            if chosen is None:
                seconds += PENALTY_S
                continue
            correct += int(np.argmax(posts[chosen]) == target)
            m = min(ready[chosen], sp.SEQUENCES)
            seconds += TS * m
            ms.append(m)
        n = max(1, len(trials))
        accs.append(correct / n)
        itrs.append(itr(correct / n, seconds / n))
    return float(np.mean(itrs)), float(np.mean(accs)), float(np.mean(ms)) if ms else float("nan")


def train(data_dir, model_dir, log=print):
    started = time.time()
    params = sp.Params()
    blocks = []
    for subject, name, path in blocks_of(data_dir):
        array = np.load(path).astype(np.float64)
        blocks.append(BlockData(subject, name, params, array))
        del array
    if not blocks:
        raise ValueError(f"{data_dir}: no training blocks (subject folders of .npy files)")
    subjects = sorted({b.subject for b in blocks}, key=natural_key)
    n_flashes = sum(len(b.X) for b in blocks)
    log(
        f"{len(subjects)} subjects, {len(blocks)} blocks, {sum(b.n_trials for b in blocks)} trials, "
        f"{n_flashes} flashes ({time.time() - started:.1f} s)"
    )

    # Cross-validation units: subjects; with one subject its blocks; with one block, trials.
    if len(subjects) >= 2:
        unit_of = [subjects.index(b.subject) for b in blocks]
        units = len(subjects)
        per_flash_unit = [np.full(len(b.X), u) for b, u in zip(blocks, unit_of)]
    elif len(blocks) >= 2:
        units = len(blocks)
        per_flash_unit = [np.full(len(b.X), i) for i, b in enumerate(blocks)]
    else:
        units = blocks[0].n_trials
        per_flash_unit = [blocks[0].trial.copy()]
    k = min(FOLDS, units)
    fold = [u % k for u in per_flash_unit]

    X = np.concatenate([b.X for b in blocks])
    y = np.concatenate([b.target for b in blocks])
    f_all = np.concatenate(fold)
    if y.sum() == 0 or (~y).sum() == 0:
        raise ValueError("the training data hold no target or no non-target flashes")

    oof = np.zeros(len(X))
    for f in range(k):
        test = f_all == f
        if test.all() or not test.any():
            continue
        w, _ = shrinkage_lda(X[~test], y[~test])
        oof[test] = X[test] @ w
    # The score scale of the posterior: the log-likelihood ratio slope of two Gaussians.
    mt, mn = oof[y].mean(), oof[~y].mean()
    var = (((oof[y] - mt) ** 2).sum() + ((oof[~y] - mn) ** 2).sum()) / len(oof)
    alpha = (mt - mn) / var if var > 0 else 0.0

    offsets = np.cumsum([0] + [len(b.X) for b in blocks])
    by_subject = {s: [] for s in subjects}
    for i, b in enumerate(blocks):
        by_subject[b.subject].extend(decisions(b, oof[offsets[i] : offsets[i + 1]], alpha))
    trials = list(by_subject.values())
    results = [simulate(trials, th) for th in THRESHOLDS]
    best = max(r[0] for r in results)
    # Ties go to the highest threshold (the most careful).
    pick = max(i for i, r in enumerate(results) if r[0] >= best - 1e-9)
    theta = float(THRESHOLDS[pick])
    static = simulate(trials, 2.0, dynamic=False)

    weights, lam = shrinkage_lda(X, y)
    model_dir = pathlib.Path(model_dir)
    model_dir.mkdir(parents=True, exist_ok=True)
    np.savez(
        model_dir / MODEL_FILE,
        weights=weights.reshape(len(params.rows), params.bins),
        alpha=alpha,
        theta=theta,
        **params.to_dict(),
    )
    log(
        f"{k}-fold cross-validation by {'subject' if len(subjects) >= 2 else 'block' if len(blocks) >= 2 else 'trial'}: "
        f"alpha {alpha:.3f}; threshold {theta:.3f}: ITR {results[pick][0]:.1f} bits/min, "
        f"accuracy {results[pick][1]:.3f}, mean m {results[pick][2]:.2f}; "
        f"all 5 sequences: ITR {static[0]:.1f}, accuracy {static[1]:.3f}"
    )
    log(f"final LDA on {len(X)} flashes (shrinkage {lam:.3f}); saved {model_dir / MODEL_FILE} ({time.time() - started:.1f} s)")


def load(model_dir):
    """(params, weights, alpha, theta) from `model_dir`, or None if there is no model."""
    if model_dir is None:
        return None
    path = pathlib.Path(model_dir) / MODEL_FILE
    if not path.is_file():
        return None
    with np.load(path, allow_pickle=False) as z:
        d = {k: z[k] for k in z.files}
    params = sp.Params.from_dict(d)
    return params, d["weights"], float(d["alpha"]), float(d["theta"])


def untrained():
    """A model for when there is none: the mean of the centro-parietal channels 250-500
    ms after each flash, with no dynamic stopping (no threshold was tuned)."""
    params = sp.Params()
    weights = np.zeros((len(params.rows), params.bins))
    for name in ("Cz", "CP1", "CP2", "Pz", "P3", "P4", "POz", "PO3", "PO4"):
        t0, t1 = (int(ms / 1000 * sp.FS) // params.bin for ms in (250, 500))
        weights[params.channels.index(name), t0:t1] = 1.0
    return params, weights, 1.0, 2.0
