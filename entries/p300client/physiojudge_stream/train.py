"""The train stage: ``python3 -m physiojudge_stream.train ENTRY DATA MODEL`` (cwd ENTRY).

Calls ``AlgorithmImplement.train(data_dir, model_dir)`` (both ``pathlib.Path``) if the
entry's class defines it (a staticmethod or classmethod; a plain method is called on an
instance made with no arguments); otherwise says there is nothing to train and exits 0.
DATA holds the training subjects in the organiser layout (``S01/block_1.npy``, ...:
float32 rows x samples, the trigger row last, holding the true target codes 101-136);
MODEL is the folder to save into (the session sees it read-only as ``model_dir``).
An exception: its traceback on standard error, exit 1.
"""

import inspect
import pathlib
import sys
import traceback

from .run import load_class


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 3:
        print("usage: python3 -m physiojudge_stream.train ENTRY DATA MODEL", file=sys.stderr)
        return 2
    data, model = pathlib.Path(argv[1]), pathlib.Path(argv[2])
    try:
        cls = load_class(argv[0])
        found = inspect.getattr_static(cls, "train", None)
        if found is None:
            print("AlgorithmImplement defines no train(data_dir, model_dir): nothing to train")
            return 0
        if isinstance(found, (staticmethod, classmethod)):
            cls.train(data, model)
        else:
            cls().train(data, model)
    except Exception:
        traceback.print_exc()
        return 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
