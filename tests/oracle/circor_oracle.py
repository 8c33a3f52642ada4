"""Oracle for formats::circor: reads CirCor patient files the way the official 2022 helper
code does, and segmentations with numpy.

Usage: circor_oracle.py DIR

Prints one JSON object:
  {"patients": {"<file>.txt": {...}}, "segmentations": {"<file>.tsv": [[start, end, state]]}}

Patient fields follow the helper code's rules as docs/challenges.md and docs/scoring.md
describes them (written here from that description): the text is read in text mode (so
CRLF becomes LF) and split on "\n"; line 1 is split on single spaces into the patient id,
the number of recordings (int) and the frequency (float); each of the next n lines is split
on single spaces, its first token is the location and its third the wav file; a demographic
or label value is the text after the first ": " of the last line starting with "#<Key>:",
stripped; heights and weights go through float() (nan -> null here, as JSON has no NaN);
pregnancy is true only for "True"/"true"/"T"/"t" or a number equal to 1. Labels are
returned unstripped, as the helper returns them. "annotations" lists every "#Key: value"
line as [key, value] split at the first ": ".

Segmentations are read with numpy.loadtxt (tab-delimited, at least 2-D), which is how
entries usually read them; values are floats.
"""

import json
import math
import os
import sys

import numpy as np


def last_value(lines, key, strip=True):
    prefix = "#" + key + ":"
    found = None
    for line in lines:
        if line.startswith(prefix):
            parts = line.split(": ")
            if len(parts) > 1:
                found = parts[1].strip() if strip else parts[1]
    return found


def as_float(v):
    if v is None:
        return None
    try:
        x = float(v)
    except ValueError:
        return None
    return None if math.isnan(x) else x


def as_pregnancy(v):
    if v is None:
        return None
    v = v.replace('"', "").replace("'", "").strip()
    try:
        if math.isfinite(float(v)) and float(v) == 1:
            return True
    except ValueError:
        pass
    return v in ("True", "true", "T", "t")


def patient(path):
    with open(path, "r") as f:
        text = f.read()
    lines = text.split("\n")
    head = lines[0].split(" ")
    n = int(head[1])
    recs = [lines[i].split(" ") for i in range(1, n + 1)]
    notes = []
    for line in lines[n + 1 :]:
        if line.startswith("#") and ": " in line:
            k, v = line[1:].split(": ", 1)
            notes.append([k, v])
    return {
        "id": head[0],
        "num_locations": n,
        "frequency": float(head[2]),
        "locations": [r[0] for r in recs],
        "wav_files": [r[2] for r in recs],
        "age": last_value(lines, "Age"),
        "sex": last_value(lines, "Sex"),
        "height": as_float(last_value(lines, "Height")),
        "weight": as_float(last_value(lines, "Weight")),
        "pregnancy": as_pregnancy(last_value(lines, "Pregnancy status")),
        "murmur": last_value(lines, "Murmur", strip=False),
        "outcome": last_value(lines, "Outcome", strip=False),
        "annotations": notes,
    }


def main():
    folder = sys.argv[1]
    out = {"patients": {}, "segmentations": {}}
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        if name.endswith(".txt"):
            out["patients"][name] = patient(path)
        elif name.endswith(".tsv"):
            rows = np.loadtxt(path, delimiter="\t", ndmin=2)
            out["segmentations"][name] = [[float(x) for x in row] for row in rows]
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
