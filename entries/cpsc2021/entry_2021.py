#!/usr/bin/env python3
"""physiojudge example entry for CPSC 2021 (paroxysmal AF episode detection).

Usage: python entry_2021.py DATA OUT

Reads the record names from DATA/RECORDS, reads each 2-lead WFDB record and writes
OUT/<record>.json = {"predict_endpoints": [[start, end], ...]} with 0-based sample
indices: [] when no AF is found, [[0, L-1]] when the whole record is AF.

The method is deliberately classical (no trained model), see README.md:
  1. R peaks: band-pass, squared derivative, short moving average, a threshold that
     follows the local QRS energy, a search-back in long gaps.
  2. Per beat, the irregularity of the RR intervals in a window of beats around it:
     a normalised successive-difference measure that ignores repeating patterns such as
     bigeminy, and a sample-entropy-like measure of how unpredictable the RR series is.
  3. AF beats -> smoothed runs -> episodes of a minimum length; boundaries moved to the
     strongest local change of irregularity.
  4. Record rule: nearly all beats AF -> the whole record; almost none -> no episode.
"""

import json
import os
import sys

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from scipy.signal import butter, find_peaks, sosfiltfilt

# --- tuning constants (chosen by hand on the public sample records, see README.md) ---

QRS_BAND_HZ = (5.0, 20.0)  # where QRS energy dominates P/T waves and baseline wander
ENERGY_WINDOW_S = 0.10     # about one QRS width
BLOCK_S = 2.0              # a block holds at least one beat above 30 bpm
LEVEL_BLOCKS = 7           # the QRS level follows amplitude changes over ~14 s
PEAK_THRESHOLD = 0.22      # fraction of the local QRS level a peak must reach
SEARCHBACK_THRESHOLD = 0.08
REFRACTORY_S = 0.25        # 240 bpm: faster than any ventricular rate in AF we expect
NOISE_BLOCK_RATIO = 10.0   # QRS energy peak over median in a block: ECG > 15, noise < 7

WINDOW_BEATS = 20          # RR intervals per irregularity window
MATCH_TOLERANCE = 0.08     # sample-entropy tolerance, as a fraction of the median RR
DMIN_AF = 0.055            # normalised successive difference above which a window is irregular
ENTROPY_AF = 0.45          # sample entropy above which a window is unpredictable
SMOOTH_BEATS = 9           # majority vote over this many beat labels
MIN_EPISODE_BEATS = 12     # shorter runs are more often ectopy or noise than AF
MERGE_GAP_BEATS = 8        # AF runs separated by fewer sinus beats are one episode
JUMP_FRACTION = 0.06       # an RR change this large (vs the median RR) counts as irregular
CHANGE_SIDE_BEATS = 8      # beats compared on each side of a candidate boundary
WHOLE_RECORD_FRACTION = 0.9
MIN_AF_FRACTION = 0.02


def read_record(path):
    """Return (signals as float array samples x leads, sampling frequency, length)."""
    import wfdb  # imported here so the detector can be reused without wfdb

    rec = wfdb.rdrecord(path)
    sig = rec.p_signal if rec.p_signal is not None else rec.d_signal.astype(float)
    sig = np.nan_to_num(np.asarray(sig, dtype=float))
    if sig.ndim == 1:
        sig = sig[:, None]
    return sig, float(rec.fs), sig.shape[0]


def centred_moving_mean(x, n):
    n = max(1, int(n))
    c = np.concatenate([[0.0], np.cumsum(x)])
    idx = np.arange(len(x))
    lo = np.clip(idx - n // 2, 0, len(x))
    hi = np.clip(idx - n // 2 + n, 0, len(x))
    return (c[hi] - c[lo]) / np.maximum(hi - lo, 1)


def block_view(x, b):
    """x cut into whole blocks of b samples (the tail padded with its own last value)."""
    nb = max(1, -(-len(x) // b))
    pad = nb * b - len(x)
    if pad:
        x = np.concatenate([x, np.full(pad, x[-1] if len(x) else 0.0)])
    return x.reshape(nb, b)


def running_median(x, n):
    """Median over a centred window of n values, edges mirrored (x is short: one per block)."""
    if len(x) <= 1 or n <= 1:
        return x.copy()
    h = n // 2
    padded = np.pad(x, h, mode="reflect") if len(x) > h else np.pad(x, h, mode="edge")
    return np.median(sliding_window_view(padded, 2 * h + 1), axis=1)


def qrs_energy(lead, fs):
    """Squared slope of the QRS band, normalised by the local QRS level (peaks near 1)."""
    sos = butter(2, [QRS_BAND_HZ[0], min(QRS_BAND_HZ[1], 0.45 * fs)], btype="band", fs=fs, output="sos")
    band = sosfiltfilt(sos, lead) if len(lead) > 30 else lead - np.mean(lead)
    energy = centred_moving_mean(np.gradient(band) ** 2, ENERGY_WINDOW_S * fs)
    b = max(1, int(BLOCK_S * fs))
    blocks = block_view(energy, b)
    # A block's maximum is its strongest QRS; the median across blocks ignores one
    # artefact burst or one missed beat.
    level = running_median(blocks.max(axis=1), LEVEL_BLOCKS)
    level = np.maximum(level, 1e-12 + 1e-3 * np.median(level))
    per_sample = np.repeat(level, b)[: len(energy)]
    norm = energy / per_sample
    # Peakiness: how far QRS energy stands above the typical sample; noise is flat.
    ratio = blocks.max(axis=1) / (np.median(blocks, axis=1) + 1e-12)
    return band, norm, np.median(ratio), ratio >= NOISE_BLOCK_RATIO


def detect_r_peaks(sig, fs):
    """R-peak sample indices for a (samples x leads) signal, and a function telling
    whether a sample lies where the chosen lead shows readable QRS complexes."""
    best = None
    for k in range(sig.shape[1]):
        band, norm, quality, readable = qrs_energy(sig[:, k], fs)
        if best is None or quality > best[2]:
            best = (band, norm, quality, readable)
    band, norm, _, readable = best
    b = max(1, int(BLOCK_S * fs))
    refractory = max(1, int(REFRACTORY_S * fs))
    peaks, _ = find_peaks(norm, height=PEAK_THRESHOLD, distance=refractory)
    peaks = search_back(norm, peaks, fs, refractory)
    # Put each beat on the largest deflection of the QRS band near the energy peak, so
    # RR intervals do not carry the jitter of the energy maximum.
    half = max(1, int(0.05 * fs))
    out = np.empty_like(peaks)
    for i, p in enumerate(peaks):
        lo, hi = max(0, p - half), min(len(band), p + half + 1)
        out[i] = lo + int(np.argmax(np.abs(band[lo:hi])))
    return np.unique(out), lambda idx: readable[np.minimum(np.asarray(idx) // b, len(readable) - 1)]


def search_back(norm, peaks, fs, refractory):
    """Look again, with a lower threshold, inside gaps much longer than the local RR."""
    if len(peaks) < 4:
        return peaks
    added = []
    rr = np.diff(peaks)
    local = running_median(rr.astype(float), 9)
    for i in np.nonzero(rr > 1.6 * local)[0]:
        lo, hi = peaks[i] + refractory, peaks[i + 1] - refractory
        if hi <= lo:
            continue
        seg = norm[lo:hi]
        j = int(np.argmax(seg))
        if seg[j] >= SEARCHBACK_THRESHOLD:
            added.append(lo + j)
    if added:
        peaks = np.sort(np.concatenate([peaks, np.array(added, dtype=peaks.dtype)]))
    return peaks


def beat_windows(rr, w):
    """One window of w RR intervals centred on each interval (edges mirrored)."""
    n = len(rr)
    h = w // 2
    if n >= w:
        padded = np.concatenate([rr[1 : h + 1][::-1], rr, rr[-h - 1 : -1][::-1]])
    else:
        padded = np.resize(rr, n + w)
    return sliding_window_view(padded, w)[:n]


def irregularity(rr):
    """Per RR interval: (normalised successive difference, sample-entropy-like value)."""
    w = WINDOW_BEATS
    win = beat_windows(rr, w)
    med = np.median(win, axis=1)
    # Differences at lag 1, 2 and 3: a repeating pattern (bigeminy, trigeminy, group
    # beating) is irregular at lag 1 but regular at its own period; AF is irregular at
    # every lag. The median ignores single ectopic beats.
    d = [np.median(np.abs(win[:, k:] - win[:, :-k]), axis=1) for k in (1, 2, 3)]
    dmin = np.minimum(np.minimum(d[0], d[1]), d[2]) / med
    # Sample entropy (template length 2, tolerance relative to the median RR): how often
    # two RR pairs that look alike are still alike one beat later.
    tol = MATCH_TOLERANCE * med
    iu, ju = np.triu_indices(w - 2, 1)
    a0, a1, a2 = win[:, :-2], win[:, 1:-1], win[:, 2:]
    entropy = np.empty(len(rr))
    step = 4096  # bounded memory on hours-long records
    for s in range(0, len(rr), step):
        sl = slice(s, s + step)
        t = tol[sl, None]
        m2 = (np.abs(a0[sl][:, iu] - a0[sl][:, ju]) <= t) & (np.abs(a1[sl][:, iu] - a1[sl][:, ju]) <= t)
        m3 = m2 & (np.abs(a2[sl][:, iu] - a2[sl][:, ju]) <= t)
        entropy[sl] = -np.log((m3.sum(axis=1) + 1.0) / (m2.sum(axis=1) + 1.0))
    return dmin, entropy


def runs(mask):
    """(start, end) index pairs, end inclusive, of the True runs of a boolean array."""
    m = np.concatenate([[False], mask, [False]]).astype(np.int8)
    edges = np.diff(m)
    return list(zip(np.nonzero(edges == 1)[0], np.nonzero(edges == -1)[0] - 1))


def majority(mask, n):
    if n <= 1 or len(mask) < n:
        return mask
    return centred_moving_mean(mask.astype(float), n) > 0.5


def af_intervals(rr, readable=None):
    """Boolean AF label per RR interval; readable (optional) marks intervals whose beats
    come from readable ECG: noise between false beats is irregular too, so it cannot
    start AF, but a short noisy stretch inside AF is bridged like a sinus gap."""
    if len(rr) < 8:
        return np.zeros(len(rr), dtype=bool)
    dmin, entropy = irregularity(rr)
    af = (dmin > DMIN_AF) & (entropy > ENTROPY_AF)
    if readable is not None:
        af &= readable
    af = majority(af, SMOOTH_BEATS)
    # Short sinus interruptions inside AF are usually a few coincidentally even beats.
    for s, e in runs(~af):
        if s > 0 and e < len(af) - 1 and e - s + 1 < MERGE_GAP_BEATS:
            af[s : e + 1] = True
    for s, e in runs(af):
        if e - s + 1 < MIN_EPISODE_BEATS:
            af[s : e + 1] = False
    return af


def refine_boundaries(rr, af):
    """Move each episode boundary to the strongest local change of irregularity.

    The window measures blur a boundary by up to half a window; the beat where RR
    differences switch from mostly small to mostly large (or back) is sharper.
    """
    n = len(rr)
    med = np.median(rr)
    jumpy = np.zeros(n)
    jumpy[1:] = np.abs(np.diff(rr)) > JUMP_FRACTION * med
    c = np.concatenate([[0.0], np.cumsum(jumpy)])
    m, reach = CHANGE_SIDE_BEATS, WINDOW_BEATS // 2

    def contrast(k):  # irregular after k minus irregular before k
        lo, hi = max(0, k - m), min(n, k + m)
        after = (c[hi] - c[k]) / max(1, hi - k)
        before = (c[k] - c[lo]) / max(1, k - lo)
        return after - before

    out = np.zeros(n, dtype=bool)
    for s, e in runs(af):
        if s > 0:
            cands = range(max(1, s - reach), min(e, s + reach) + 1)
            s = max(cands, key=lambda k: (contrast(k), -abs(k - s)))
        if e < n - 1:
            cands = range(max(s + 1, e - reach), min(n - 1, e + reach) + 1)
            e = max(cands, key=lambda k: (-contrast(k + 1), -abs(k - e)))
        out[s : e + 1] = True
    return out


def predict(sig, fs):
    """predict_endpoints for one record."""
    length = sig.shape[0]
    peaks, readable = detect_r_peaks(sig, fs)
    if len(peaks) < 10:
        return []
    rr = np.diff(peaks) / fs
    af = af_intervals(rr, readable((peaks[:-1] + peaks[1:]) // 2))
    af = refine_boundaries(rr, af)
    frac = af.mean() if len(af) else 0.0
    if frac >= WHOLE_RECORD_FRACTION:
        return [[0, length - 1]]
    if frac < MIN_AF_FRACTION or not af.any():
        return []
    episodes = []
    for s, e in runs(af):
        # RR interval i runs from peak i to peak i+1. The first irregular interval ends
        # on the first AF beat and the last one starts on the last AF beat; the scorer
        # gives full credit within one beat of those two beats.
        start = int(peaks[s + 1])
        end = int(peaks[e])
        if e + 1 == len(peaks) - 1:
            end = length - 1  # AF still running when the record stops
        if s == 0:
            start = 0
        episodes.append([start, min(end, length - 1)])
    if len(episodes) == 1 and episodes[0] == [0, length - 1]:
        return [[0, length - 1]]
    return episodes


def main(argv):
    if len(argv) != 3:
        print("usage: entry_2021.py DATA OUT", file=sys.stderr)
        return 2
    data, out = argv[1], argv[2]
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(data, "RECORDS")) as f:
        records = [line.strip() for line in f if line.strip()]
    failed = 0
    for name in records:
        try:
            sig, fs, _ = read_record(os.path.join(data, name))
            endpoints = predict(sig, fs)
        except Exception as exc:  # one bad record must not cost the others
            print(f"{name}: {type(exc).__name__}: {exc}", file=sys.stderr)
            endpoints = []
            failed += 1
        with open(os.path.join(out, name + ".json"), "w") as f:
            json.dump({"predict_endpoints": endpoints}, f)
    return 1 if failed == len(records) and records else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
