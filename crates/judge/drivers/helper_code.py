"""physiojudge's helper module for PhysioNet Challenge 2022 entries.

Team code imports it as `from helper_code import *`. The organisers replaced each team's
copy with their own, and so does physiojudge: the drivers in this folder put it first on
sys.path. It is written from the challenge's documented behaviour (the patient-file
layout, the label lines, the four-line output CSV), not copied from the official code.

Patient file (`<id>.txt`):
    <id> <number of recordings> <sampling frequency>
    <location> <header file> <wav file> [<segmentation file>]     (one per recording)
    #Age: Child
    #Sex: Female
    ...
Output file (`<id>.csv`), four lines:
    #<id>
    Present,Unknown,Absent,Abnormal,Normal        (class names)
    0,0,1,0,1                                     (binary labels)
    0.1,0.2,0.7,0.4,0.6                           (probabilities or scores)
"""

import math
import os

import numpy as np
from scipy.io import wavfile

MURMUR_CLASSES = ["Present", "Unknown", "Absent"]
OUTCOME_CLASSES = ["Abnormal", "Normal"]


# ----------------------------------------------------------------- value helpers


def is_number(x):
    """True when float(x) succeeds (so also for 'nan' and 'inf')."""
    try:
        float(x)
        return True
    except (TypeError, ValueError):
        return False


def is_integer(x):
    """True when x reads as a number with no fractional part ('7', '7.0')."""
    if not is_number(x):
        return False
    v = float(x)
    return math.isfinite(v) and v.is_integer()


def is_finite_number(x):
    return is_number(x) and math.isfinite(float(x))


def is_nan(x):
    return is_number(x) and math.isnan(float(x))


def cast_int(x, default=None):
    return int(float(x)) if is_integer(x) else default


def cast_float(x, default=float("nan")):
    return float(x) if is_number(x) else default


def compare_strings(x, y):
    """Equal after trimming surrounding whitespace, ignoring case."""
    try:
        return str(x).strip().casefold() == str(y).strip().casefold()
    except AttributeError:
        return False


def sanitize_binary_value(x):
    """1 for a number equal to 1 or for True/true/T/t (quotes ignored), else 0."""
    s = str(x).replace('"', "").replace("'", "").strip()
    if is_finite_number(s) and float(s) == 1:
        return 1
    return 1 if s in ("True", "true", "T", "t") else 0


def sanitize_scalar_value(x):
    """A float for finite or infinite numbers; 0.0 for NaN, empty or text."""
    s = str(x).replace('"', "").replace("'", "").strip()
    if is_number(s) and not math.isnan(float(s)):
        return float(s)
    return 0.0


# ----------------------------------------------------------------- patient files


def find_patient_files(data_folder):
    """Paths of the patient .txt files, dot-files skipped.

    Sorted by number when every file name is an integer (2530 before 9979 before
    13918), by name otherwise.
    """
    roots = []
    for name in os.listdir(data_folder):
        root, ext = os.path.splitext(name)
        if name.startswith(".") or ext != ".txt":
            continue
        if os.path.isfile(os.path.join(data_folder, name)):
            roots.append(root)
    if roots and all(is_integer(r) for r in roots):
        roots.sort(key=lambda r: float(r))
    else:
        roots.sort()
    return [os.path.join(data_folder, r + ".txt") for r in roots]


def load_patient_data(filename):
    with open(filename, "r") as f:
        return f.read()


def _lines(data):
    # splitlines accepts LF and CRLF alike; the data set mixes both.
    return data.splitlines()


def get_patient_id(data):
    return _lines(data)[0].split()[0]


def get_num_locations(data):
    return int(_lines(data)[0].split()[1])


def get_frequency(data):
    return float(_lines(data)[0].split()[2])


def _recording_lines(data):
    lines = _lines(data)
    n = get_num_locations(data)
    return [ln.split() for ln in lines[1 : n + 1]]


def get_locations(data):
    return [fields[0] for fields in _recording_lines(data)]


def load_wav_file(filename):
    """(samples as stored in the file, sampling frequency)."""
    frequency, recording = wavfile.read(filename)
    return recording, frequency


def load_recordings(data_folder, data, get_frequencies=False):
    """The patient's recordings, in the order of the patient file."""
    recordings, frequencies = [], []
    for fields in _recording_lines(data):
        recording, frequency = load_wav_file(os.path.join(data_folder, fields[2]))
        recordings.append(recording)
        frequencies.append(frequency)
    if get_frequencies:
        return recordings, frequencies
    return recordings


def _value(data, key):
    """Text after '#<key>:' on the last line that starts with it, else None."""
    prefix = "#" + key + ":"
    found = None
    for ln in _lines(data):
        if ln.startswith(prefix):
            found = ln[len(prefix) :].strip()
    return found


def get_age(data):
    return _value(data, "Age")


def get_sex(data):
    return _value(data, "Sex")


def get_height(data):
    v = _value(data, "Height")
    return cast_float(v) if v is not None else float("nan")


def get_weight(data):
    v = _value(data, "Weight")
    return cast_float(v) if v is not None else float("nan")


def get_pregnancy_status(data):
    v = _value(data, "Pregnancy status")
    return bool(sanitize_binary_value(v)) if v is not None else False


def _label(data, key):
    v = _value(data, key)
    if v is None:
        raise ValueError(
            f"No '#{key}:' line in the patient data: labels are not available for this "
            "patient (are you trying to load labels from the hidden data?)"
        )
    return v


def get_murmur(data):
    return _label(data, "Murmur")


def get_outcome(data):
    return _label(data, "Outcome")


def get_label(data):
    """The murmur label, under the name the first 2022 helper used."""
    return get_murmur(data)


# ----------------------------------------------------------------- model outputs


def _format_label(x):
    return str(sanitize_binary_value(x))


def _format_probability(x):
    try:
        v = float(x)
    except (TypeError, ValueError):
        return str(x)
    return repr(v) if math.isfinite(v) else str(v)


def save_challenge_outputs(filename, patient_id, classes, labels, probabilities):
    """Write the four-line output CSV for one patient."""
    classes = [str(c) for c in classes]
    labels = list(np.asarray(labels).ravel()) if not isinstance(labels, (list, tuple)) else list(labels)
    probabilities = (
        list(np.asarray(probabilities).ravel())
        if not isinstance(probabilities, (list, tuple))
        else list(probabilities)
    )
    text = "\n".join(
        [
            "#" + str(patient_id),
            ",".join(classes),
            ",".join(_format_label(x) for x in labels),
            ",".join(_format_probability(x) for x in probabilities),
        ]
    )
    with open(filename, "w") as f:
        f.write(text + "\n")


def load_challenge_outputs(filename):
    """(patient id, classes, binary labels, scores) read back from an output CSV."""
    with open(filename, "r") as f:
        lines = f.read().splitlines()
    patient_id = lines[0].replace("#", "").strip()
    classes = [c.strip() for c in lines[1].split(",")]
    labels = [sanitize_binary_value(x) for x in lines[2].split(",")]
    probabilities = [sanitize_scalar_value(x) for x in lines[3].split(",")]
    return patient_id, classes, labels, probabilities
