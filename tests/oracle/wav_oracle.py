"""Oracle for formats::wav: scipy.io.wavfile reads WAV files, and the stdlib `wave` module
and scipy write test files of every width.

Usage: wav_oracle.py JOBS.json OUTDIR

JOBS.json is a list of jobs, run in order:
  {"id": "a", "read": "/path/x.wav"}
      scipy.io.wavfile.read; writes OUTDIR/a.json {"rate", "dtype", "shape"} (or
      {"error": "..."} when scipy raises) and OUTDIR/a.bin, the samples frame after frame,
      as int64 LE for integer dtypes (scipy's values unchanged: uint8 for 8-bit, int32
      shifted left by 8 for 24-bit) and as the raw float32 LE for float files.
  {"id": "m", "make": {"path": ..., "writer": "wave" | "scipy", "dtype": "u1"|"i2"|"i3"|"i4"|"f4",
                       "channels": c, "rate": r, "frames": n, "seed": s}}
      writes a file of pseudo-random full-range samples: "wave" writes WAVE_FORMAT_PCM with
      the stdlib module (any integer width, "i3" = 24-bit), "scipy" uses
      scipy.io.wavfile.write (u1, i2, i4, f4). Writes OUTDIR/m.json {"ok": true}.
"""

import json
import os
import sys
import traceback
import wave

import numpy as np
import scipy.io.wavfile


def make(spec):
    rng = np.random.default_rng(spec["seed"])
    shape = (spec["frames"], spec["channels"])
    dt = spec["dtype"]
    if spec["writer"] == "wave":
        width = {"u1": 1, "i2": 2, "i3": 3, "i4": 4}[dt]
        if width == 1:
            raw = rng.integers(0, 256, size=shape, dtype=np.int64).astype("<u1").tobytes()
        else:
            lo, hi = -(1 << (8 * width - 1)), (1 << (8 * width - 1))
            vals = rng.integers(lo, hi, size=shape, dtype=np.int64)
            # Little-endian two's complement, keeping the low `width` bytes of each value.
            raw = b"".join(
                int(v & ((1 << (8 * width)) - 1)).to_bytes(width, "little") for v in vals.ravel()
            )
        with wave.open(spec["path"], "wb") as w:
            w.setnchannels(spec["channels"])
            w.setsampwidth(width)
            w.setframerate(spec["rate"])
            w.writeframes(raw)
    else:
        if dt == "f4":
            data = rng.uniform(-1.5, 1.5, size=shape).astype(np.float32)
        elif dt == "u1":
            data = rng.integers(0, 256, size=shape, dtype=np.int64).astype(np.uint8)
        else:
            info = np.iinfo(np.dtype(dt))
            data = rng.integers(info.min, info.max, size=shape, dtype=np.int64, endpoint=True)
            data = data.astype(np.dtype(dt))
        if spec["channels"] == 1:
            data = data[:, 0]
        scipy.io.wavfile.write(spec["path"], spec["rate"], data)


def read(path, outdir, job_id):
    rate, data = scipy.io.wavfile.read(path)
    meta = {"rate": int(rate), "dtype": data.dtype.str, "shape": list(data.shape)}
    if data.dtype.kind == "f":
        blob = data.astype("<f4").tobytes()
    else:
        blob = data.astype("<i8").tobytes()
    with open(os.path.join(outdir, job_id + ".bin"), "wb") as f:
        f.write(blob)
    return meta


def main():
    jobs_path, outdir = sys.argv[1], sys.argv[2]
    with open(jobs_path) as f:
        jobs = json.load(f)
    for job in jobs:
        try:
            if "make" in job:
                make(job["make"])
                meta = {"ok": True}
            else:
                meta = read(job["read"], outdir, job["id"])
        except Exception as e:  # the test decides whether an error is expected
            meta = {"error": "%s: %s" % (type(e).__name__, e), "trace": traceback.format_exc()}
        with open(os.path.join(outdir, job["id"] + ".json"), "w") as f:
            json.dump(meta, f)


if __name__ == "__main__":
    main()
