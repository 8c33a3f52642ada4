"""Times wfdb-python on the same files as the Rust benchmark `wfdb_read`, in the same run.

Usage: wfdb_python.py REPEATS JOB [JOB ...], where JOB is `rdrecord:REC1,REC2,...`
(physical values, rdrecord's default), `rdrecord_digital:REC1,...` or
`rdann:REC1,REC2,...:EXT`. Prints one JSON line per job: {"job": ..., "median_s": ...,
"runs": [...]}; each run reads every record of the job once.
"""

import json
import statistics
import sys
import time

import wfdb


def run(kind, records, ext):
    for r in records:
        if kind == "rdrecord":
            wfdb.rdrecord(r)
        elif kind == "rdrecord_digital":
            wfdb.rdrecord(r, physical=False)
        else:
            wfdb.rdann(r, ext)


def main():
    repeats = int(sys.argv[1])
    for job in sys.argv[2:]:
        parts = job.split(":")
        kind, records = parts[0], parts[1].split(",")
        ext = parts[2] if len(parts) > 2 else None
        run(kind, records, ext)  # warm the page cache and imports
        runs = []
        for _ in range(repeats):
            t = time.perf_counter()
            run(kind, records, ext)
            runs.append(time.perf_counter() - t)
        print(json.dumps({"job": job[:60], "median_s": statistics.median(runs), "runs": runs}))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
