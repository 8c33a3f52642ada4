"""wfdb-python 4.3.1 as the oracle for our WFDB record reader and writer.

Usage: wfdb_oracle.py JOBS.json OUTDIR

JOBS.json is a list of jobs. A job reads a record with wfdb-python:
  {"id": "a", "record": "/path/rec", "from": 0, "to": null, "channels": null}
or writes one with wfdb.wrsamp:
  {"id": "w", "write": {"dir": ..., "name": ..., "fs": ..., "fmt": [...], "adc_gain": [...],
   "baseline": [...], "units": [...], "sig_name": [...], "samps_per_frame": [...],
   "file_name": [...] (optional), "digital": [[...], ...]}}
For each job it writes OUTDIR/<id>.json (header fields, or {"error": "..."} when
wfdb-python raises) and, for reads, OUTDIR/<id>.d (digital samples, int64 LE, signal after
signal) and OUTDIR/<id>.p (physical, float64 LE). Samples are unsmoothed (every sample of
signals with several samples per frame).
"""

import json
import os
import sys
import traceback

import numpy as np
import wfdb


def header_fields(rec):
    def lst(name):
        v = getattr(rec, name, None)
        return None if v is None else [None if x is None else x for x in v]

    out = {
        "record_name": rec.record_name,
        "n_sig": rec.n_sig,
        "fs": float(rec.fs) if rec.fs is not None else None,
        "counter_freq": rec.counter_freq,
        "base_counter": rec.base_counter,
        "sig_len": rec.sig_len,
        "base_time": None if rec.base_time is None else rec.base_time.isoformat(),
        "base_date": None if rec.base_date is None else rec.base_date.isoformat(),
        "comments": rec.comments,
    }
    if hasattr(rec, "seg_name"):
        out["seg_name"] = rec.seg_name
        out["seg_len"] = [int(x) for x in rec.seg_len]
        return out
    for name in [
        "file_name", "fmt", "samps_per_frame", "skew", "byte_offset", "adc_gain",
        "baseline", "units", "adc_res", "adc_zero", "init_value", "checksum",
        "block_size", "sig_name",
    ]:
        out[name] = lst(name)
    if out["adc_gain"] is not None:
        out["adc_gain"] = [float(g) for g in out["adc_gain"]]
    return out


def read_job(job, outdir):
    rec_path = job["record"]
    kw = {"sampfrom": job.get("from") or 0}
    if job.get("to") is not None:
        kw["sampto"] = job["to"]
    if job.get("channels") is not None:
        kw["channels"] = job["channels"]
    result = {}
    try:
        result["header"] = header_fields(wfdb.rdheader(rec_path))
    except Exception as e:
        result["header_error"] = f"{type(e).__name__}: {e}"
    digital, physical = [], []
    try:
        rec = wfdb.rdrecord(rec_path, physical=False, smooth_frames=False, **kw)
        digital = [np.asarray(s, dtype=np.int64) for s in rec.e_d_signal]
        result["spf"] = [len(s) for s in digital]
    except Exception as e:
        result["digital_error"] = f"{type(e).__name__}: {e}"
    try:
        rec = wfdb.rdrecord(rec_path, physical=True, smooth_frames=False, **kw)
        physical = [np.asarray(s, dtype=np.float64) for s in rec.e_p_signal]
        result["physical_len"] = [len(s) for s in physical]
    except Exception as e:
        result["physical_error"] = f"{type(e).__name__}: {e}"
    result["digital_len"] = [len(s) for s in digital]
    base = os.path.join(outdir, job["id"])
    with open(base + ".d", "wb") as f:
        for s in digital:
            f.write(s.astype("<i8").tobytes())
    with open(base + ".p", "wb") as f:
        for s in physical:
            f.write(s.astype("<f8").tobytes())
    return result


def write_job(job, outdir):
    w = job["write"]
    digital = [np.asarray(s, dtype=np.int64) for s in w["digital"]]
    spf = w.get("samps_per_frame")
    kw = dict(
        record_name=w["name"],
        fs=w["fs"],
        units=w["units"],
        sig_name=w["sig_name"],
        fmt=w["fmt"],
        adc_gain=w["adc_gain"],
        baseline=w["baseline"],
        write_dir=w["dir"],
    )
    if spf is not None and any(x != 1 for x in spf):
        kw["e_d_signal"] = digital
        kw["samps_per_frame"] = spf
    else:
        kw["d_signal"] = np.stack(digital, axis=1) if digital else np.zeros((0, 0))
    try:
        if w.get("file_name") is None:
            wfdb.wrsamp(**kw)
        else:
            # wrsamp puts every signal in <name>.dat; a record of several files is
            # written as wrsamp writes one, with the file names set first.
            expanded = "e_d_signal" in kw
            write_dir = kw.pop("write_dir")
            rec = wfdb.Record(**kw, file_name=w["file_name"])
            rec.set_d_features(expanded=expanded)
            rec.set_defaults()
            rec.wrsamp(write_dir=write_dir, expanded=expanded)
        return {"ok": True}
    except Exception as e:
        return {"error": f"{type(e).__name__}: {e}"}


def main():
    jobs_path, outdir = sys.argv[1], sys.argv[2]
    with open(jobs_path) as f:
        jobs = json.load(f)
    for job in jobs:
        try:
            result = write_job(job, outdir) if "write" in job else read_job(job, outdir)
        except Exception:
            result = {"error": traceback.format_exc()}
        with open(os.path.join(outdir, job["id"] + ".json"), "w") as f:
            json.dump(result, f)


if __name__ == "__main__":
    main()
