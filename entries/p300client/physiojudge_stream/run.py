"""A session: ``python3 -m physiojudge_stream.run ENTRY [MODEL]`` (cwd ENTRY).

Standard input and output carry the protocol (docs/stream.md) and nothing else: the
runner keeps them on private descriptors, points descriptor 0 at /dev/null and
descriptor 1 (and ``sys.stdout``) at standard error, so whatever the algorithm prints
goes to standard error. It reads the host's hello, imports the class
``AlgorithmImplement`` of ``ENTRY/AlgorithmImplement/AlgorithmImplement.py``,
instantiates it with no arguments, sets ``task`` and ``model_dir`` and calls ``run()``;
then it closes the protocol's output and exits 0. An exception: its traceback on
standard error, exit 1.
"""

import importlib
import os
import pathlib
import sys
import traceback

from .protocol import Connection, Task


def take_protocol_fds():
    """(input, output) descriptors of the protocol, private to the runner (not
    inherited by child processes); descriptor 0 becomes /dev/null and descriptor 1 a
    copy of standard error."""
    proto_in = os.dup(0)
    proto_out = os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    try:
        sys.stdout.flush()
    except (AttributeError, OSError, ValueError):
        pass
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return proto_in, proto_out


def load_class(entry):
    """The class ``AlgorithmImplement`` of ``ENTRY/AlgorithmImplement/AlgorithmImplement.py``.

    ENTRY and ENTRY/AlgorithmImplement go first on ``sys.path``, so the entry's helper
    modules import plainly (``import helpers``); with an ``__init__.py`` in the folder it
    is imported as the package ``AlgorithmImplement`` and relative imports work too.
    """
    entry = pathlib.Path(entry).resolve()
    folder = entry / "AlgorithmImplement"
    source = folder / "AlgorithmImplement.py"
    # The contest let teams ship compiled files only: Python imports a .pyc that sits
    # where its source would (the judge checked in prep that it is for this Python).
    compiled = folder / "AlgorithmImplement.pyc"
    if not source.is_file() and compiled.is_file():
        source = compiled
    if not source.is_file():
        raise ImportError(f"{source} not found: an entry needs AlgorithmImplement/AlgorithmImplement.py (or .pyc)")
    sys.path[:0] = [str(entry), str(folder)]
    if (folder / "__init__.py").is_file() or (folder / "__init__.pyc").is_file():
        module = importlib.import_module("AlgorithmImplement.AlgorithmImplement")
    else:
        # With no __init__.py, AlgorithmImplement.py itself is the top-level module
        # AlgorithmImplement (a plain module wins over a namespace package).
        module = importlib.import_module("AlgorithmImplement")
    cls = getattr(module, "AlgorithmImplement", None)
    if not isinstance(cls, type):
        raise ImportError(f"{source} defines no class AlgorithmImplement")
    return cls


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) not in (1, 2):
        print("usage: python3 -m physiojudge_stream.run ENTRY [MODEL]", file=sys.stderr)
        return 2
    proto_in, proto_out = take_protocol_fds()
    connection = None
    try:
        connection = Connection(proto_in, proto_out)
        cls = load_class(argv[0])
        algorithm = cls()
        algorithm.task = Task(connection)
        model = pathlib.Path(argv[1]) if len(argv) == 2 else None
        algorithm.model_dir = model if model is not None and model.is_dir() else None
        algorithm.run()
    except Exception:
        traceback.print_exc()
        return 1
    finally:
        sys.stderr.flush()
        if connection is not None:
            connection.close()
        else:
            os.close(proto_out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
