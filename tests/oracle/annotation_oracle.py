"""wfdb-python 4.3.1 as the oracle for our WFDB annotation reader and writer.

Usage:
  annotation_oracle.py read EXT REC [REC ...]
      Reads REC.EXT with wfdb.rdann for each REC and prints a JSON list, one object per
      record: {"record", "sample", "symbol", "subtype", "chan", "num", "aux_hex", "fs",
      "custom_labels"} or {"record", "error": "<ExceptionType>: <message>"} when
      wfdb-python raises. aux_hex is each aux_note encoded back to the bytes wfdb-python
      read them from (it decodes one byte per character, i.e. Latin-1), in hex. A
      symbol rdann has no string for (it gives NaN) is null.
  annotation_oracle.py write JOBS.json
      JOBS.json is a list of {"dir", "name", "ext", "sample", "symbol", and optionally
      "subtype", "chan", "num", "aux_note", "fs", "custom_labels": [[code, sym, desc]]}.
      Each is written with wfdb.wrann. Prints a JSON list of {"name", "ok": true} or
      {"name", "error": "..."}.

  annotation_oracle.py labels
      Prints wfdb-python's standard label table as a JSON list of [code, symbol].

Only stdlib, numpy and wfdb.
"""

import json
import os
import sys

import numpy as np
import wfdb


def read_one(rec, ext):
    try:
        ann = wfdb.rdann(rec, ext)
    except Exception as e:  # the oracle reports, the Rust test decides
        return {"record": rec, "error": f"{type(e).__name__}: {e}"}
    aux = ann.aux_note if ann.aux_note is not None else [""] * len(ann.sample)
    labels = None
    if ann.custom_labels is not None:
        labels = [
            [int(r["label_store"]), str(r["symbol"]), str(r["description"])]
            for _, r in ann.custom_labels.iterrows()
        ]
    return {
        "record": rec,
        "sample": [int(s) for s in ann.sample],
        # A code with no symbol comes back as NaN (a float): reported as null.
        "symbol": [s if isinstance(s, str) else None for s in ann.symbol],
        "subtype": [int(s) for s in ann.subtype],
        "chan": [int(s) for s in ann.chan],
        "num": [int(s) for s in ann.num],
        "aux_hex": [a.encode("latin-1").hex() for a in aux],
        "fs": None if ann.fs is None else float(ann.fs),
        "custom_labels": labels,
    }


def write_one(job):
    kw = {}
    for key in ["subtype", "chan", "num"]:
        if job.get(key) is not None:
            kw[key] = np.array(job[key], dtype=np.int64)
    if job.get("aux_note") is not None:
        kw["aux_note"] = list(job["aux_note"])
    if job.get("fs") is not None:
        kw["fs"] = job["fs"]
    if job.get("custom_labels") is not None:
        kw["custom_labels"] = [tuple(t) for t in job["custom_labels"]]
    try:
        wfdb.wrann(
            job["name"],
            job["ext"],
            np.array(job["sample"], dtype=np.int64),
            symbol=list(job["symbol"]),
            write_dir=job["dir"],
            **kw,
        )
    except Exception as e:
        return {"name": job["name"], "error": f"{type(e).__name__}: {e}"}
    return {"name": job["name"], "ok": True}


def main(argv):
    if len(argv) >= 3 and argv[0] == "read":
        ext = argv[1]
        out = [read_one(rec, ext) for rec in argv[2:]]
    elif argv == ["labels"]:
        table = wfdb.io.annotation.ann_label_table
        out = [[int(c), str(s)] for c, s in zip(table["label_store"], table["symbol"])]
    elif len(argv) == 2 and argv[0] == "write":
        with open(argv[1]) as f:
            jobs = json.load(f)
        out = []
        for job in jobs:
            os.makedirs(job["dir"], exist_ok=True)
            out.append(write_one(job))
    else:
        sys.stderr.write(__doc__)
        return 2
    json.dump(out, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
