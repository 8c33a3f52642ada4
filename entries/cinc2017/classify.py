#!/usr/bin/env python3
"""physiojudge example entry for the PhysioNet/CinC Challenge 2017 (AF classification).

Usage: python3 classify.py RECORD        (RECORD.hea and RECORD.mat in the current folder)

Prints one label: N (normal), A (AF), O (other rhythm) or ~ (too noisy). next.sh
appends it to answers.txt.

Only numpy is imported: the sandbox starts a fresh interpreter for every record, and
importing scipy.signal alone costs more than a second there. The band-pass filter is
therefore a zero-phase filter applied in the frequency domain, and the MAT v4 file is
read directly (it is a 20-byte header, a name and the int16 samples).

Method (see README.md): R peaks from the squared slope of the QRS band with a threshold
that follows the local QRS level; rhythm features from the RR intervals (irregularity at
lags 1-3, sample entropy, premature beats, rate); beat-shape and signal-quality features
(correlation of each beat with the median beat, flat or saturated stretches, energy
outside the ECG band); then a short list of hand-set rules (rules.json).
"""

import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


# --------------------------------------------------------------------------- reading


def read_header(name):
    """(sampling frequency, gain per mV, baseline, file name) from RECORD.hea."""
    with open(name + ".hea") as f:
        lines = [ln.strip() for ln in f if ln.strip() and not ln.startswith("#")]
    first = lines[0].split()
    fs = float(first[2].split("/")[0]) if len(first) > 2 else 300.0
    sig = lines[1].split()
    gain, baseline = 200.0, None  # WFDB defaults when the field is absent
    if len(sig) > 2:
        g = sig[2].split("/")[0]
        if "(" in g:
            g, b = g.rstrip(")").split("(")
            baseline = float(b)
        gain = float(g) or 200.0
    if baseline is None:
        baseline = float(sig[4]) if len(sig) > 4 else 0.0  # ADC zero
    return fs, gain, baseline, sig[0]


def read_mat_v4(path):
    """The first matrix of a MATLAB v4 file as a flat float array."""
    raw = open(path, "rb").read()
    mopt, rows, cols, imag, namelen = np.frombuffer(raw[:20], dtype="<i4")
    if not 0 <= mopt < 5000 or namelen <= 0:  # not v4 little-endian: let scipy try
        from scipy.io import loadmat

        return np.asarray(loadmat(path)["val"], dtype=float).ravel()
    prec = (mopt // 10) % 10
    dtype = {0: "<f8", 1: "<f4", 2: "<i4", 3: "<i2", 4: "<u2", 5: "u1"}[prec]
    start = 20 + namelen
    return np.frombuffer(raw, dtype=dtype, count=rows * cols, offset=start).astype(float)


def read_record(name):
    fs, gain, baseline, fname = read_header(name)
    mat = fname if os.path.exists(fname) else name + ".mat"
    x = read_mat_v4(mat)
    return (x - baseline) / gain, fs


# ------------------------------------------------------------------------- filtering


def zero_phase_band(x, fs, lo, hi, order=2):
    """Band-pass with the magnitude of a Butterworth filter run forwards and backwards."""
    pad = min(len(x) - 1, int(fs))
    y = np.concatenate([x[pad:0:-1], x, x[-2 : -pad - 2 : -1]]) if pad > 0 else x
    n = 1 << int(np.ceil(np.log2(len(y))))
    f = np.fft.rfftfreq(n, 1.0 / fs)
    h = np.ones_like(f)
    if lo:
        r = np.divide(lo, f, out=np.full_like(f, np.inf), where=f > 0)
        h /= 1.0 + r ** (2 * order)
    if hi:
        h /= 1.0 + (f / hi) ** (2 * order)
    out = np.fft.irfft(np.fft.rfft(y - y.mean(), n) * h, n)
    return out[pad : pad + len(x)]


def moving_mean(x, n):
    n = max(1, int(n))
    c = np.concatenate([[0.0], np.cumsum(x)])
    i = np.arange(len(x))
    lo = np.clip(i - n // 2, 0, len(x))
    hi = np.clip(i - n // 2 + n, 0, len(x))
    return (c[hi] - c[lo]) / np.maximum(hi - lo, 1)


# ---------------------------------------------------------------------------- R peaks


def pick_peaks(e, height, distance):
    """Local maxima of e above height, stronger ones first, none closer than distance."""
    inner = (e[1:-1] > height) & (e[1:-1] >= e[:-2]) & (e[1:-1] > e[2:])
    cand = np.nonzero(inner)[0] + 1
    if len(cand) == 0:
        return cand
    cand = cand[np.argsort(-e[cand], kind="stable")]
    taken = np.zeros(len(e), dtype=bool)
    keep = []
    for c in cand:
        if not taken[max(0, c - distance + 1) : c + distance].any():
            keep.append(c)
            taken[c] = True
    return np.sort(np.array(keep, dtype=int))


def r_peaks(x, fs):
    """(R-peak indices, how far QRS energy stands out of the median energy)."""
    band = zero_phase_band(x, fs, 5.0, 20.0)
    energy = moving_mean(np.gradient(band) ** 2, 0.10 * fs)
    b = max(1, int(2.0 * fs))
    nb = max(1, len(energy) // b)
    blocks = energy[: nb * b].reshape(nb, b) if len(energy) >= b else energy[None, :]
    bmax = blocks.max(axis=1)
    # The level of a block is the median of its neighbours' maxima, so a burst of
    # artefact or a missed beat does not set the threshold.
    k = 3
    padded = np.pad(bmax, k, mode="edge")
    level = np.array([np.median(padded[i : i + 2 * k + 1]) for i in range(len(bmax))])
    level = np.maximum(level, 1e-12)
    per_sample = np.repeat(level, b)
    if len(per_sample) < len(energy):  # the tail after the last whole block
        per_sample = np.concatenate([per_sample, np.full(len(energy) - len(per_sample), level[-1])])
    per_sample = per_sample[: len(energy)]
    norm = energy / per_sample
    peakiness = float(np.median(bmax / (np.median(blocks, axis=1) + 1e-12)))
    refractory = max(1, int(0.25 * fs))
    peaks = pick_peaks(norm, 0.22, refractory)
    if len(peaks) >= 4:  # search back in gaps much longer than the usual RR
        rr = np.diff(peaks)
        med = np.median(rr)
        extra = []
        for i in np.nonzero(rr > 1.6 * med)[0]:
            lo, hi = peaks[i] + refractory, peaks[i + 1] - refractory
            if hi > lo:
                j = lo + int(np.argmax(norm[lo:hi]))
                if norm[j] >= 0.08:
                    extra.append(j)
        if extra:
            peaks = np.sort(np.concatenate([peaks, extra])).astype(int)
    # The energy maximum wanders within the QRS; the largest band-passed deflection
    # near it gives steadier RR intervals.
    half = max(1, int(0.05 * fs))
    fixed = []
    for p in peaks:
        lo = max(0, p - half)
        fixed.append(lo + int(np.argmax(np.abs(band[lo : p + half + 1]))))
    return np.unique(np.array(fixed, dtype=int)), peakiness


# --------------------------------------------------------------------------- features


def rr_features(rr):
    f = {}
    med = float(np.median(rr))
    f["hr"] = 60.0 / med
    d = [np.abs(rr[k:] - rr[:-k]) for k in (1, 2, 3)]
    # Irregular at every lag is AF; irregular at lag 1 only is a repeating ectopic
    # pattern; the median ignores a few premature beats.
    f["dmin"] = float(min(np.median(v) for v in d) / med)
    tol = 0.08 * med
    s = rr[:600]  # the pair matrices grow with the square; 2017 records hold < 250 beats
    a0, a1, a2 = s[:-2], s[1:-1], s[2:]
    m2 = (np.abs(a0[:, None] - a0[None, :]) <= tol) & (np.abs(a1[:, None] - a1[None, :]) <= tol)
    m3 = m2 & (np.abs(a2[:, None] - a2[None, :]) <= tol)
    iu = np.triu_indices(len(a0), 1)
    f["sampen"] = float(-np.log((m3[iu].sum() + 1.0) / (m2[iu].sum() + 1.0)))
    # Premature beat: an interval well below the local rhythm followed by a longer one.
    local = np.array([np.median(rr[max(0, i - 4) : i + 5]) for i in range(len(rr))])
    prem = (rr[:-1] < 0.85 * local[:-1]) & (rr[1:] > 1.05 * local[:-1])
    f["premature"] = float(prem.mean())
    f["rr_range"] = float((np.percentile(rr, 95) - np.percentile(rr, 5)) / med)
    return f


def shape_features(x, peaks, fs):
    f = {}
    clean = zero_phase_band(x, fs, 0.7, 40.0)
    pre, post = int(0.25 * fs), int(0.45 * fs)
    ok = peaks[(peaks >= pre) & (peaks + post < len(clean))]
    if len(ok) < 3:
        return {"corr": 0.0}
    beats = np.stack([clean[p - pre : p + post] for p in ok])
    template = np.median(beats, axis=0)
    bc = beats - beats.mean(axis=1, keepdims=True)
    tc = template - template.mean()
    corr = bc @ tc / (np.linalg.norm(bc, axis=1) * np.linalg.norm(tc) + 1e-12)
    f["corr"] = float(np.median(corr))
    return f


def quality_features(x, fs):
    """Signal-quality measures; no rule uses them yet, they are kept for inspection."""
    f = {}
    n = len(x)
    # Saturation or a loose electrode: the trace sits on one value.
    flat = np.abs(np.diff(x)) < 1e-9
    f["flat"] = float(flat.mean())
    spec = np.abs(np.fft.rfft(x - x.mean())) ** 2
    fr = np.fft.rfftfreq(n, 1.0 / fs)
    total = spec[(fr >= 0.5) & (fr < 0.45 * fs)].sum() + 1e-12
    f["hf"] = float(spec[fr >= 40.0].sum() / total)
    return f


def features(x, fs):
    peaks, peakiness = r_peaks(x, fs)
    f = quality_features(x, fs)
    f["peakiness"] = peakiness
    if len(peaks) >= 6:
        f.update(rr_features(np.diff(peaks) / fs))
    f.update(shape_features(x, peaks, fs))
    return f


# ------------------------------------------------------------------------------ rules


def load_rules():
    with open(os.path.join(HERE, "rules.json")) as f:
        return json.load(f)


def classify(f, rules):
    """First matching rule wins; each rule is a list of (feature, op, value) tests."""
    for rule in rules["rules"]:
        if all(test(f, feat, op, val) for feat, op, val in rule["if"]):
            return rule["label"]
    return rules["default"]


def test(f, feat, op, val):
    if feat not in f:
        return op == "missing"
    v = f[feat]
    return {">": v > val, "<": v < val, ">=": v >= val, "<=": v <= val}.get(op, False)


def main(argv):
    if len(argv) != 2:
        print("usage: classify.py RECORD", file=sys.stderr)
        return 2
    try:
        x, fs = read_record(argv[1])
        label = classify(features(x, fs), load_rules())
    except Exception as exc:  # an unreadable record is answered as noise, not skipped
        print(f"{argv[1]}: {type(exc).__name__}: {exc}", file=sys.stderr)
        label = "~"
    print(label)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
