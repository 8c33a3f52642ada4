"""Times wfdb-python on the same files as the Rust benchmark `wfdb_read`, pass by pass.

The benchmark starts this once and alternates its own passes with this script's, so that
both sides of each ratio are measured within milliseconds of each other (the machines
the project runs on change speed from one minute to the next).

Protocol: each line read from stdin is a JOB, `rdrecord:REC1,REC2,...` (physical values,
rdrecord's default), `rdrecord_digital:REC1,...` or `rdann:REC1,REC2,...:EXT`; the script
reads every record of the job once and prints the seconds it took on a line of its own.
"""

import sys
import time

import wfdb


def run(kind, records, ext):
    for r in records:
        if kind == "rdrecord":
            wfdb.rdrecord(r)
        elif kind == "rdrecord_digital":
            wfdb.rdrecord(r, physical=False)
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
