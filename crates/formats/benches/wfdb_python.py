"""Times wfdb-python on the same files as the Rust benchmark `wfdb_read`, pass by pass.

The benchmark starts this once and alternates its own passes with this script's, so that
both sides of each ratio are measured within milliseconds of each other (the machines
the project runs on change speed from one minute to the next).

Protocol: each line read from stdin is a JOB, `rdrecord:REC1,REC2,...` (physical values,
rdrecord's default), `rdrecord_digital:REC1,...` or `rdann:REC1,REC2,...:EXT`; the script
reads every record of the job once and prints the seconds it took on a line of its own.
A third field `A-B/C-D/...` on an rdrecord job reads each record in those frame ranges
(`sampfrom`/`sampto`) instead of whole. `wrflac:REC:N_SIG,FS,SECONDS,FMT` writes a FLAC
record of an ECG-like waveform plus noise with wfdb.wrsamp (which puts at most 8
signals in a file) and prints the seconds it took.
"""

import os
import sys
import time

import numpy as np
import wfdb


def write_flac(path, spec):
    n_sig, fs, seconds, fmt = spec.split(",")
    n_sig, fs, n = int(n_sig), int(fs), int(float(seconds) * int(fs))
    rng = np.random.default_rng(5)
    d = np.empty((n, n_sig), dtype=np.int16 if fmt != "524" else np.int32)
    t = np.arange(n, dtype=np.int64)
    scale = {"508": 1, "516": 8, "524": 256}[fmt]
    for k in range(n_sig):
        phase = (t + 37 * k) % (fs * 4 // 5)  # a beat every 0.8 s
        qrs = np.where((phase >= 20) & (phase < 32), 90 - 15 * np.abs(phase - 26), 0)
        tw = np.where((phase >= 60) & (phase < 90), 12, 0)
        d[:, k] = (qrs + tw + rng.integers(-3, 4, size=n)) * scale
    del t
    directory, name = os.path.split(path)
    wfdb.wrsamp(
        name, fs=fs, units=["mV"] * n_sig, sig_name=[f"s{k}" for k in range(n_sig)],
        d_signal=d, fmt=[fmt] * n_sig, adc_gain=[200.0 * scale] * n_sig,
        baseline=[0] * n_sig, write_dir=directory,
    )


def run(kind, records, ext):
    ranges = None
    if kind.startswith("rdrecord") and ext:
        ranges = [tuple(int(x) for x in r.split("-")) for r in ext.split("/")]
    for r in records:
        if kind == "wrflac":
            write_flac(r, ext)
        elif kind in ("rdrecord", "rdrecord_digital"):
            physical = kind == "rdrecord"
            for a, b in ranges or [(0, None)]:
                wfdb.rdrecord(r, sampfrom=a, sampto=b, physical=physical)
        elif kind == "rdann":
            wfdb.rdann(r, ext)
        else:
            raise ValueError(f"unknown job kind {kind!r}")


def main():
    for line in sys.stdin:
        parts = line.strip().split(":")
        kind, records = parts[0], parts[1].split(",")
        ext = parts[2] if len(parts) > 2 else None
        t = time.perf_counter()
        run(kind, records, ext)
        print(time.perf_counter() - t, flush=True)


if __name__ == "__main__":
    main()
