"""scipy.io.loadmat / savemat as the oracle for our MAT-file reader and level-4 writer.

Usage:
  mat_oracle.py dump OUTDIR FILE...   read each FILE with scipy.io.loadmat
  mat_oracle.py gen OUTDIR            write test files with scipy.io.savemat, print their names

dump writes, for the i-th FILE (0-based), OUTDIR/<i>.json and OUTDIR/<i>.bin:
  {"file": FILE, "version": [major, minor], "variables": [{"name": ..., "value": V}, ...]}
or {"file": FILE, "error": "..."} when scipy raises. Variables come in scipy's order (file
order). A value V is one of
  {"kind": "numeric", "class": "double"|"single"|"int8"|...|"uint64", "dims": [...],
   "real": [offset, nbytes], "imag": [offset, nbytes] or null}
  {"kind": "logical", "dims": [...], "data": [0|1, ...]}
  {"kind": "char", "dims": [...], "units": [code point, ...]}
  {"kind": "cell", "dims": [...], "values": [V, ...]}
  {"kind": "struct", "dims": [...], "fields": [name, ...], "values": [[V per field] per element]}
Numeric parts are the raw little-endian bytes at [offset, nbytes] of <i>.bin, so the
comparison is bit for bit. Every sequence of elements is in column-major (MATLAB) order.

Level-5 files are read with mat_dtype=True (values in the class MATLAB would give them, so
data stored in a smaller type comes back in its class); level-4 files with mat_dtype=False
(the stored precision, as our reader keeps it; MATLAB itself would load doubles).
scipy 1.17's mat_dtype=True casts complex arrays to their real class and so drops the
imaginary part; level-5 files are therefore read a second time with mat_dtype=False, and a
complex array's parts come from that reading, cast to the class of the first.
chars_as_strings=False keeps char arrays at their full dimensions.
"""

import json
import os
import sys
import traceback
import warnings

import numpy as np
import scipy.io as sio
from scipy.io.matlab import matfile_version

CLASSES = {
    "float64": "double", "float32": "single", "int8": "int8", "uint8": "uint8",
    "int16": "int16", "uint16": "uint16", "int32": "int32", "uint32": "uint32",
    "int64": "int64", "uint64": "uint64",
}
COMPLEX = {"complex128": "float64", "complex64": "float32"}


class Blob:
    def __init__(self):
        self.parts = []
        self.size = 0

    def add(self, arr):
        data = np.ascontiguousarray(arr.flatten(order="F"))
        data = data.astype(data.dtype.newbyteorder("<"), copy=False).tobytes()
        ref = [self.size, len(data)]
        self.parts.append(data)
        self.size += len(data)
        return ref


def flat(arr):
    return list(arr.flatten(order="F"))


def encode(x, raw, blob):
    """Encodes x (read with mat_dtype as chosen) and raw (the same value read with
    mat_dtype=False, which keeps imaginary parts)."""
    if not isinstance(x, np.ndarray):
        x = np.asarray(x)
    if not isinstance(raw, np.ndarray):
        raw = np.asarray(raw)
    dims = [int(d) for d in x.shape]
    kind = x.dtype.kind
    if x.dtype.names is not None:
        names = list(x.dtype.names)
        return {
            "kind": "struct", "dims": dims, "fields": names,
            "values": [[encode(el[n], rel[n], blob) for n in names]
                       for el, rel in zip(flat(x), flat(raw))],
        }
    if kind == "O":
        return {"kind": "cell", "dims": dims,
                "values": [encode(el, rel, blob) for el, rel in zip(flat(x), flat(raw))]}
    if kind == "U":
        # numpy drops a U1 element's NUL, leaving ''.
        return {"kind": "char", "dims": dims, "units": [ord(c) if c else 0 for c in flat(x)]}
    if kind == "b":
        return {"kind": "logical", "dims": dims, "data": [int(v) for v in flat(x)]}
    name = x.dtype.newbyteorder("=").name
    if name in COMPLEX:
        name = COMPLEX[name]
    if name not in CLASSES:
        raise TypeError(f"unexpected dtype {x.dtype} from loadmat")
    if raw.dtype.kind == "c":
        return {
            "kind": "numeric", "class": CLASSES[name], "dims": dims,
            "real": blob.add(raw.real.astype(name)), "imag": blob.add(raw.imag.astype(name)),
        }
    return {"kind": "numeric", "class": CLASSES[name], "dims": dims,
            "real": blob.add(x), "imag": None}


def dump(outdir, files):
    for i, path in enumerate(files):
        blob = Blob()
        try:
            major, minor = matfile_version(path)
            opts = dict(chars_as_strings=False, squeeze_me=False, struct_as_record=True)
            m = sio.loadmat(path, mat_dtype=(major != 0), **opts)
            raw = sio.loadmat(path, mat_dtype=False, **opts)
            out = {
                "file": path, "version": [major, minor],
                "variables": [
                    {"name": k, "value": encode(v, raw[k], blob)}
                    for k, v in m.items() if not k.startswith("__")
                ],
            }
        except Exception as e:  # the test decides whether an error is expected
            out = {"file": path, "error": f"{type(e).__name__}: {e}",
                   "traceback": traceback.format_exc()}
        with open(os.path.join(outdir, f"{i}.json"), "w") as f:
            json.dump(out, f)
        with open(os.path.join(outdir, f"{i}.bin"), "wb") as f:
            for part in blob.parts:
                f.write(part)


def struct_array(rows):
    """A 1×n struct array from a list of dicts with the same keys."""
    names = list(rows[0])
    arr = np.empty((1, len(rows)), dtype=[(n, object) for n in names])
    for j, r in enumerate(rows):
        for n in names:
            arr[0, j][n] = r[n]
    return arr


def cell(items, shape):
    arr = np.empty(len(items), dtype=object)
    for i, it in enumerate(items):
        arr[i] = it
    return arr.reshape(shape, order="F")


def v5_content():
    rng = np.random.default_rng(20170)
    ints = {}
    for t in ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]:
        info = np.iinfo(t)
        vals = [info.min, info.max, 0, 1, info.max // 3, info.min // 2 + 1]
        ints["a_" + t] = np.array(vals, dtype=t).reshape(2, 3)
    special = np.array([np.nan, np.inf, -np.inf, -0.0, 5e-324, 1.7976931348623157e308,
                        -2.2250738585072014e-308, 0.1, 1 / 3, 1e-300, 123456789.125, -1.0])
    return {
        "d2": special.reshape(3, 4),
        "randn": rng.standard_normal((40, 50)),
        "f32": rng.standard_normal((2, 5)).astype(np.float32),
        "f32_special": np.array([[np.nan, np.inf, -0.0, 1e-45, 3.4028235e38]], dtype=np.float32),
        **ints,
        "c128": np.array([[1 + 2j, -3.5 - 0.25j], [np.nan + 1j, 0 - 0j]]),
        "c64": np.array([[1 + 2j, 3 - 4j, -0.5j]], dtype=np.complex64),
        "cint": np.array([[1 + 2j, 3 - 4j]], dtype=np.complex128),
        "empty": np.zeros((0, 0)),
        "empty03": np.zeros((0, 3)),
        "empty_i16": np.zeros((2, 0), dtype=np.int16),
        "nd3": np.arange(24, dtype=np.float64).reshape(2, 3, 4),
        "nd4_u8": np.arange(12, dtype=np.uint8).reshape(2, 1, 3, 2),
        "scalar": 7.5,
        "logic": np.array([[True, False, True], [False, False, True]]),
        "txt": "hello world",
        "txt_rows": np.array(["abc", "def"]),
        "uni": "h\u00e9llo \u20ac \u65e5\u672c",
        "empty_str": "",
        "st": {"a": 1.0, "b": "text", "c": {"nested": np.arange(3, dtype=np.int32)},
               "d": np.zeros((0, 0)), "e": np.array([[1, 2], [3, 4]], dtype=np.uint16)},
        "sarr": struct_array([{"x": 1.0, "y": "one"}, {"x": np.arange(4.0), "y": "two"}]),
        "cel": cell([1.0, "str", np.array([1, 2, 3], dtype=np.int32), {"k": 2.0}], (2, 2)),
        "cel_empty": np.empty((0, 0), dtype=object),
        "cel_nested": cell([cell([np.float32(1.5), cell(["deep"], (1, 1))], (1, 2)), 4.0],
                           (1, 2)),
        "column": np.arange(5.0).reshape(5, 1),
    }


def gen(outdir):
    names = []
    content = v5_content()
    for comp in (False, True):
        name = f"scipy_v5_{'zlib' if comp else 'plain'}.mat"
        sio.savemat(os.path.join(outdir, name), content, format="5", do_compression=comp)
        names.append(name)
    name = "scipy_v5_long_names.mat"
    long = "f" + "x" * 60
    sio.savemat(os.path.join(outdir, name), {"s": {long: 1.0, "short": 2.0}},
                format="5", long_field_names=True, do_compression=True)
    names.append(name)
    rng = np.random.default_rng(2017)
    v4 = {
        "d": rng.standard_normal((3, 4)),
        "special": np.array([[np.nan, np.inf, -np.inf, -0.0, 5e-324]]),
        "f": rng.standard_normal((2, 3)).astype(np.float32),
        "i32": np.array([[np.iinfo(np.int32).min, -1, 0, np.iinfo(np.int32).max]],
                        dtype=np.int32),
        "i16": np.array([[-32768, -1, 0, 32767]], dtype=np.int16),
        "u16": np.array([[0, 1, 65535]], dtype=np.uint16),
        "u8": np.array([[0, 1, 255]], dtype=np.uint8).reshape(3, 1),
        "cplx": np.array([[1 + 2j, -3 - 4j]]),
        "cplx32": np.array([[1 + 2j, -3 - 4j]], dtype=np.complex64),
        "txt": "hello",
        "empty": np.zeros((0, 0)),
        "val": rng.integers(-2000, 2000, size=(1, 3000)).astype(np.int16),
    }
    name = "scipy_v4.mat"
    sio.savemat(os.path.join(outdir, name), v4, format="4")
    names.append(name)
    print(json.dumps(names))


def main():
    # The ComplexWarning of the mat_dtype=True reading is the quirk handled in encode().
    warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
    if len(sys.argv) < 3 or sys.argv[1] not in ("dump", "gen"):
        sys.exit(__doc__)
    outdir = sys.argv[2]
    os.makedirs(outdir, exist_ok=True)
    if sys.argv[1] == "dump":
        dump(outdir, sys.argv[3:])
    else:
        gen(outdir)


if __name__ == "__main__":
    main()
