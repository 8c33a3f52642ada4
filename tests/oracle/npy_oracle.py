"""Oracle for formats::npy: numpy writes .npy files of every dtype, order and format
version we read, and loads the files we write.

Usage: npy_oracle.py JOBS.json OUTDIR

JOBS.json is a list of jobs, run in order:
  {"id": "m", "make": {"path": ..., "dtype": "<f4" | ">f8" | "<i2" | ..., "shape": [r, c],
                       "order": "C" | "F", "version": [major, minor] | null, "seed": s}}
      writes pseudo-random values (floats include NaN, infinities, -0.0 and a subnormal)
      with np.lib.format.write_array, in the memory order asked for, so that a 2-D "F"
      array is stored with fortran_order True; version null lets numpy choose (1.0).
      Writes OUTDIR/m.json {"shape", "dtype", "fortran_order"} and OUTDIR/m.bin, the
      values in C order as float64 LE.
  {"id": "r", "read": "/path/x.npy"}
      np.load; writes OUTDIR/r.json {"shape", "dtype"} (or {"error": "..."} when numpy
      raises), OUTDIR/r.bin (the values in C order as float64 LE) and OUTDIR/r.npy (what
      np.save writes for the loaded array, to compare with the file byte for byte).
"""

import io
import json
import os
import sys
import traceback

import numpy as np


def values(dtype, shape, seed):
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    n = int(np.prod(shape))
    if dt.kind == "f":
        v = rng.standard_normal(n) * 100.0
        special = [np.nan, np.inf, -np.inf, -0.0, np.finfo(dt).tiny / 4, np.finfo(dt).max]
        k = min(n, len(special))
        v[:k] = special[:k]
        return v.astype(dt).reshape(shape)
    info = np.iinfo(dt)
    v = rng.integers(info.min, info.max, size=n, dtype=np.int64, endpoint=True)
    return v.astype(dt).reshape(shape)


def make(spec, outdir, job_id):
    arr = values(spec["dtype"], tuple(spec["shape"]), spec["seed"])
    arr = np.asfortranarray(arr) if spec["order"] == "F" else np.ascontiguousarray(arr)
    version = tuple(spec["version"]) if spec.get("version") else None
    with open(spec["path"], "wb") as f:
        np.lib.format.write_array(f, arr, version=version)
    with open(spec["path"], "rb") as f:
        major, _ = np.lib.format.read_magic(f)
        if major == 1:
            header = np.lib.format.read_array_header_1_0(f)
        else:
            # The 2.0 reader differs from 3.0 only in decoding latin-1, not UTF-8: the
            # same for the ASCII headers plain arrays have.
            header = np.lib.format.read_array_header_2_0(f)
    with open(os.path.join(outdir, job_id + ".bin"), "wb") as f:
        f.write(np.ascontiguousarray(arr).astype("<f8").tobytes())
    return {"shape": list(arr.shape), "dtype": arr.dtype.str, "fortran_order": header[1]}


def read(path, outdir, job_id):
    arr = np.load(path)
    with open(os.path.join(outdir, job_id + ".bin"), "wb") as f:
        f.write(np.ascontiguousarray(arr).astype("<f8").tobytes())
    buf = io.BytesIO()
    np.save(buf, arr)
    with open(os.path.join(outdir, job_id + ".npy"), "wb") as f:
        f.write(buf.getvalue())
    return {"shape": list(arr.shape), "dtype": arr.dtype.str}


def main():
    jobs_path, outdir = sys.argv[1], sys.argv[2]
    with open(jobs_path) as f:
        jobs = json.load(f)
    for job in jobs:
        try:
            if "make" in job:
                meta = make(job["make"], outdir, job["id"])
            else:
                meta = read(job["read"], outdir, job["id"])
        except Exception as e:  # the test decides whether an error is expected
            meta = {"error": "%s: %s" % (type(e).__name__, e), "trace": traceback.format_exc()}
        with open(os.path.join(outdir, job["id"] + ".json"), "w") as f:
            json.dump(meta, f)


if __name__ == "__main__":
    main()
