"""physiojudge example entry for the PhysioNet Challenge 2022 (heart murmur and outcome).

The judge runs its own train_model.py / run_model.py / helper_code.py (as the organisers
did); this file provides the three functions they call:

    train_challenge_model(data_folder, model_folder, verbose)
    load_challenge_model(model_folder, verbose)
    run_challenge_model(model, data, recordings, verbose) -> (classes, labels, probabilities)

Method (see README.md): for each recording, relative band energies of the
phonocardiogram, heart sounds found as peaks of the low-band envelope, and how much
high-band ("murmur band") energy there is between heart sounds, in the shorter
(systolic) and the longer (diastolic) intervals; per patient, the mean and the maximum of
each over the recordings, plus age group, sex, height, weight and pregnancy. Two random
forests (murmur: Present/Unknown/Absent; outcome: Abnormal/Normal) are trained in the
train stage and pickled into the model folder. The class decisions weigh the forests'
probabilities by what the challenge metrics reward (see decide_murmur/decide_outcome).
"""

import os
import pickle

import numpy as np
from scipy.signal import butter, sosfiltfilt

from helper_code import (
    compare_strings,
    find_patient_files,
    get_age,
    get_frequency,
    get_height,
    get_murmur,
    get_outcome,
    get_pregnancy_status,
    get_sex,
    get_weight,
    load_patient_data,
    load_recordings,
)

MURMUR_CLASSES = ["Present", "Unknown", "Absent"]
OUTCOME_CLASSES = ["Abnormal", "Normal"]
CLASSES = MURMUR_CLASSES + OUTCOME_CLASSES

# Weighted accuracy counts a correct Present 5 times and a correct Unknown 3 times as
# much as a correct Absent, so the murmur decision scales the probabilities by these.
MURMUR_WEIGHTS = np.array([5.0, 3.0, 1.0])
# A missed abnormal patient costs 50000 in the outcome metric and a referral about
# 10000 plus the expert's time; referring pays off well below an even chance.
REFER_ABOVE = 0.3

# Age groups as approximate ages in months (the data gives only the group).
AGE_MONTHS = {"neonate": 0.5, "infant": 6.0, "child": 72.0, "adolescent": 180.0, "young adult": 240.0}

BANDS_HZ = [(25, 50), (50, 100), (100, 200), (200, 400), (400, 800)]
ENV_RATE = 100  # envelope samples per second
MODEL_FILE = "model.pkl"


# ------------------------------------------------------------------------ features


def block_energy(x, fs):
    """Mean squared value in consecutive 1/ENV_RATE s blocks."""
    b = max(1, int(round(fs / ENV_RATE)))
    n = len(x) // b
    if n == 0:
        return np.zeros(1)
    return np.mean(x[: n * b].reshape(n, b) ** 2, axis=1)


def band(x, fs, lo, hi):
    hi = min(hi, 0.45 * fs)
    sos = butter(4, [lo, hi], btype="band", fs=fs, output="sos")
    return sosfiltfilt(sos, x)


def heart_sounds(env):
    """Envelope peaks at least 0.2 s apart that reach a third of the loud level."""
    if len(env) < 3:
        return np.zeros(0, dtype=int)
    level = np.percentile(env, 95)
    cand = np.nonzero((env[1:-1] > env[:-2]) & (env[1:-1] >= env[2:]) & (env[1:-1] > level / 3))[0] + 1
    cand = cand[np.argsort(-env[cand], kind="stable")]
    gap = int(0.2 * ENV_RATE)
    taken = np.zeros(len(env), dtype=bool)
    keep = []
    for c in cand:
        if not taken[max(0, c - gap + 1) : c + gap].any():
            keep.append(c)
            taken[c] = True
    return np.sort(np.array(keep, dtype=int))


def recording_features(rec, fs):
    x = np.asarray(rec, dtype=float)
    x = x - np.mean(x)
    scale = np.percentile(np.abs(x), 99) if len(x) else 0.0
    if len(x) < fs or scale <= 0:
        return None
    x = x / scale
    f = {}

    spec = np.abs(np.fft.rfft(x)) ** 2
    freq = np.fft.rfftfreq(len(x), 1.0 / fs)
    inband = (freq >= 25) & (freq < 800)
    total = spec[inband].sum() + 1e-12
    for lo, hi in BANDS_HZ:
        f[f"band_{lo}_{hi}"] = float(np.log10(spec[(freq >= lo) & (freq < hi)].sum() / total + 1e-6))
    cum = np.cumsum(spec[inband]) / total
    f["centroid"] = float(np.sum(freq[inband] * spec[inband]) / total)
    f["rolloff95"] = float(freq[inband][min(np.searchsorted(cum, 0.95), inband.sum() - 1)])

    # Heart sounds live mostly below 150 Hz; murmurs add energy above it, between them.
    low = block_energy(band(x, fs, 25, 150), fs)
    high = block_energy(band(x, fs, 150, 500), fs)
    peaks = heart_sounds(low)
    near = np.zeros(len(low), dtype=bool)
    for p in peaks:
        near[max(0, p - 8) : p + 9] = True  # within 80 ms of a heart sound
    hs_level = np.median(low[peaks]) if len(peaks) else np.max(low)
    hs_high = np.median(high[near]) if near.any() else np.max(high)
    gaps = ~near
    f["gap_high_vs_hs_high"] = float(np.log10((np.median(high[gaps]) if gaps.any() else hs_high) / (hs_high + 1e-12) + 1e-6))
    f["gap_high_vs_hs_low"] = float(np.log10((np.median(high[gaps]) if gaps.any() else hs_high) / (hs_level + 1e-12) + 1e-6))
    f["high_p90_vs_p50"] = float(np.log10(np.percentile(high, 90) / (np.median(high) + 1e-12) + 1e-6))

    # Systole is the shorter of the two intervals between heart sounds; the middle
    # 60% of each interval avoids the sounds' own tails.
    sys_e, dia_e = [], []
    if len(peaks) >= 4:
        iv = np.diff(peaks)
        med = np.median(iv)
        for a, b, d in zip(peaks[:-1], peaks[1:], iv):
            lo, hi = a + int(0.2 * d), b - int(0.2 * d)
            if hi <= lo:
                continue
            (sys_e if d < med else dia_e).append(np.mean(high[lo:hi]))
    ref = hs_level + 1e-12
    f["systolic_high"] = float(np.log10(np.median(sys_e) / ref + 1e-6)) if sys_e else 0.0
    f["diastolic_high"] = float(np.log10(np.median(dia_e) / ref + 1e-6)) if dia_e else 0.0
    f["sys_vs_dia"] = f["systolic_high"] - f["diastolic_high"] if sys_e and dia_e else 0.0
    f["hs_rate"] = float(len(peaks) / (len(low) / ENV_RATE))
    return f


def patient_features(data, recordings):
    """One fixed-length vector per patient (names in feature_names())."""
    age = get_age(data)
    months = AGE_MONTHS.get(str(age).strip().casefold(), np.nan)
    sex = get_sex(data)
    height, weight = get_height(data), get_weight(data)
    demo = [
        months,
        1.0 if compare_strings(sex, "Female") else 0.0,
        height,
        weight,
        1.0 if get_pregnancy_status(data) else 0.0,
    ]
    fs = get_frequency(data)
    per_rec = [r for r in (recording_features(rec, fs) for rec in recordings) if r is not None]
    names = _recording_feature_names()
    if per_rec:
        m = np.array([[r[k] for k in names] for r in per_rec])
        agg = list(np.mean(m, axis=0)) + list(np.max(m, axis=0))
    else:
        agg = [np.nan] * (2 * len(names))
    return np.array(demo + agg + [float(len(recordings))], dtype=float)


def _recording_feature_names():
    names = [f"band_{lo}_{hi}" for lo, hi in BANDS_HZ]
    return names + [
        "centroid",
        "rolloff95",
        "gap_high_vs_hs_high",
        "gap_high_vs_hs_low",
        "high_p90_vs_p50",
        "systolic_high",
        "diastolic_high",
        "sys_vs_dia",
        "hs_rate",
    ]


def feature_names():
    rec = _recording_feature_names()
    return (
        ["age_months", "female", "height", "weight", "pregnant"]
        + [f"mean_{n}" for n in rec]
        + [f"max_{n}" for n in rec]
        + ["n_recordings"]
    )


# ------------------------------------------------------------------------ decisions


def decide_murmur(p):
    return int(np.argmax(MURMUR_WEIGHTS * p))


def decide_outcome(p_abnormal):
    return 0 if p_abnormal >= REFER_ABOVE else 1


# ------------------------------------------------------------------------ interface


def _forest(seed):
    from sklearn.ensemble import RandomForestClassifier

    # Few, shallow-ish trees: 46 to ~900 patients, a few dozen features.
    return RandomForestClassifier(
        n_estimators=300, min_samples_leaf=3, max_features="sqrt", class_weight="balanced", random_state=seed, n_jobs=1
    )


def train_challenge_model(data_folder, model_folder, verbose):
    if verbose >= 1:
        print("Finding data files...")
    files = find_patient_files(data_folder)
    if not files:
        raise FileNotFoundError(f"no patient files in {data_folder}")
    X, ym, yo = [], [], []
    for i, path in enumerate(files):
        if verbose >= 2:
            print(f"    {i + 1}/{len(files)} {path}")
        data = load_patient_data(path)
        recordings = load_recordings(data_folder, data)
        X.append(patient_features(data, recordings))
        ym.append(_class_index(get_murmur(data), MURMUR_CLASSES))
        yo.append(_class_index(get_outcome(data), OUTCOME_CLASSES))
    X = np.array(X)
    medians = np.nanmedian(X, axis=0)
    medians = np.where(np.isfinite(medians), medians, 0.0)
    Xf = _impute(X, medians)
    if verbose >= 1:
        print(f"Training on {len(files)} patients, {X.shape[1]} features...")
    murmur = _forest(1).fit(Xf, np.array(ym))
    outcome = _forest(2).fit(Xf, np.array(yo))
    os.makedirs(model_folder, exist_ok=True)
    with open(os.path.join(model_folder, MODEL_FILE), "wb") as f:
        pickle.dump(
            {"features": feature_names(), "medians": medians, "murmur": murmur, "outcome": outcome}, f, protocol=4
        )
    if verbose >= 1:
        print("Done training.")


def load_challenge_model(model_folder, verbose):
    with open(os.path.join(model_folder, MODEL_FILE), "rb") as f:
        return pickle.load(f)


def run_challenge_model(model, data, recordings, verbose):
    x = _impute(patient_features(data, recordings)[None, :], model["medians"])
    pm = _full_proba(model["murmur"], x, len(MURMUR_CLASSES))
    po = _full_proba(model["outcome"], x, len(OUTCOME_CLASSES))
    labels = np.zeros(len(CLASSES), dtype=int)
    labels[decide_murmur(pm)] = 1
    labels[len(MURMUR_CLASSES) + decide_outcome(po[0])] = 1
    probabilities = np.concatenate([pm, po])
    return CLASSES, labels, probabilities


def _class_index(label, classes):
    for i, c in enumerate(classes):
        if compare_strings(label, c):
            return i
    raise ValueError(f"unknown label {label!r}; expected one of {classes}")


def _impute(X, medians):
    X = np.array(X, dtype=float)
    bad = ~np.isfinite(X)
    X[bad] = np.broadcast_to(medians, X.shape)[bad]
    return X


def _full_proba(forest, x, n):
    """Probabilities for all n classes, also for classes missing from the training set."""
    p = np.zeros(n)
    p[forest.classes_.astype(int)] = forest.predict_proba(x)[0]
    return p
