"""The models an algorithm sees and the algorithm's end of the wire protocol.

Wire format (docs/stream.md): every frame is a little-endian ``u32`` length L of what
follows, a one-byte kind and L - 1 bytes of payload.

========  ===================  ==============================================
kind      direction            payload
========  ===================  ==============================================
``H``     host -> algorithm    ``u16`` version (1), rows, sample rate, packet samples
``G``     algorithm -> host    none
``D``     host -> algorithm    ``u64`` start position, ``u32`` person id,
                               ``u8`` finished, ``u16`` samples n, then
                               rows x n ``f32``, row by row (trigger row last)
``R``     algorithm -> host    ``i64`` result (the character's code, 101-136)
========  ===================  ==============================================
"""

import abc
import os
import struct

import numpy as np

VERSION = 1

_HELLO = struct.Struct("<IBHHHH")  # length 9, 'H', version, rows, rate, samples
_DATA_HEAD = struct.Struct("<IBQIBH")  # length, 'D', start, person, finished, n
_GET_FRAME = struct.pack("<IB", 1, ord("G"))
_REPORT = struct.Struct("<IBq")  # length 9, 'R', result
_I64_MIN, _I64_MAX = -(2**63), 2**63 - 1


class ProtocolError(Exception):
    """The host's frames were not as specified, or the connection ended."""


class DataModel:
    """One packet: ``data`` (numpy float64, rows x n: the EEG channels, then the trigger
    row), ``start_position`` (index of the packet's first sample in its block; 0: a new
    block began), ``person_id`` and ``finished_flag`` (the session's last packet).

    The contest's camelCase names ``startPosition``, ``personID`` and ``finishedFlag``
    are read-only aliases.
    """

    __slots__ = ("data", "start_position", "person_id", "finished_flag")

    def __init__(self, data, start_position, person_id, finished_flag):
        self.data = data
        self.start_position = start_position
        self.person_id = person_id
        self.finished_flag = finished_flag

    @property
    def startPosition(self):  # noqa: N802 (the contest's name)
        return self.start_position

    @property
    def personID(self):  # noqa: N802
        return self.person_id

    @property
    def finishedFlag(self):  # noqa: N802
        return self.finished_flag

    def __repr__(self):
        return (
            f"DataModel(data={self.data.shape[0]}x{self.data.shape[1]}, "
            f"start_position={self.start_position}, person_id={self.person_id}, "
            f"finished_flag={self.finished_flag})"
        )


class ReportModel:
    """A report: ``result`` is the character's code, 101 + its row-major index on the
    6x6 matrix (101 = A ... 126 = Z, 127 = 1 ... 135 = 9, 136 = _). ``resultType`` is
    the 2020 contest's name for it."""

    __slots__ = ("result",)

    def __init__(self, result=None):
        self.result = result

    @property
    def resultType(self):  # noqa: N802
        return self.result

    @resultType.setter
    def resultType(self, value):  # noqa: N802
        self.result = value

    def __repr__(self):
        return f"ReportModel(result={self.result!r})"


def result_code(report_model):
    """The ``i64`` a report carries: from a ReportModel (or a bare integer). Integral
    floats are accepted; anything else is a TypeError or ValueError naming it."""
    value = report_model.result if isinstance(report_model, ReportModel) else report_model
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"a report's result must be an integer code, not {value!r}")
    try:
        code = int(value.__index__())
    except (AttributeError, TypeError):
        try:
            f = float(value)
        except (TypeError, ValueError):
            raise TypeError(
                f"a report's result must be an integer code, not {value!r}"
            ) from None
        if not f.is_integer():
            raise ValueError(f"a report's result must be an integer code, not {value!r}")
        code = int(f)
    if not _I64_MIN <= code <= _I64_MAX:
        raise ValueError(f"a report's result must fit in 64 bits, not {code}")
    return code


class AlgorithmInterface(abc.ABC):
    """The base class of an entry's ``AlgorithmImplement``.

    Before ``run()`` is called the runner sets ``self.task`` (an object with just
    ``get_data()`` and ``report(report_model)``, as the contest's task proxy) and
    ``self.model_dir`` (a ``pathlib.Path`` of the trained model's folder, read-only, or
    None). ``self.get_data()`` and ``self.report(...)`` are shortcuts to the task.
    """

    task = None
    model_dir = None

    @abc.abstractmethod
    def run(self):
        """Ask for packets until one has ``finished_flag`` set, reporting on the way."""

    def set_task(self, task):
        self.task = task

    def get_data(self):
        return self.task.get_data()

    def report(self, report_model):
        self.task.report(report_model)


class Task:
    """What an algorithm gets as ``self.task``: ``get_data()`` and ``report()`` only."""

    __slots__ = ("get_data", "report")

    def __init__(self, connection):
        self.get_data = connection.get_data
        self.report = connection.report


def _write_all(fd, data):
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


class Connection:
    """The algorithm's end of the protocol over two file descriptors (the host's frames
    come in on ``in_fd``; ours go out on ``out_fd``). Reads the hello at once."""

    def __init__(self, in_fd, out_fd):
        self._in = os.fdopen(in_fd, "rb", buffering=65536, closefd=False)
        self._out = out_fd
        hello = self._read(_HELLO.size, "the hello")
        length, kind, version, rows, rate, samples = _HELLO.unpack(hello)
        if (length, kind) != (9, ord("H")):
            raise ProtocolError(f"expected a hello frame, got {hello[:5].hex(' ')}")
        if version != VERSION:
            raise ProtocolError(f"protocol version {version}, this client speaks {VERSION}")
        self.rows = rows
        self.sample_rate = rate
        self.packet_samples = samples

    def _read(self, n, what):
        data = self._in.read(n)
        if data is None or len(data) != n:
            got = 0 if data is None else len(data)
            raise ProtocolError(f"the host closed the connection in {what} ({got} of {n} bytes)")
        return data

    def get_data(self):
        """Sends G and returns the packet of the D frame that answers it."""
        _write_all(self._out, _GET_FRAME)
        length, kind, start, person, finished, n = _DATA_HEAD.unpack(
            self._read(_DATA_HEAD.size, "a data frame's head")
        )
        size = 4 * self.rows * n
        if kind != ord("D") or length != 16 + size:
            raise ProtocolError(
                f"expected a data frame of {16 + size} bytes, got kind {kind:#04x} "
                f"of {length} bytes"
            )
        samples = self._read(size, "a data frame's samples")
        data = np.frombuffer(samples, dtype="<f4").reshape(self.rows, n).astype(np.float64)
        return DataModel(data, start, person, finished != 0)

    def report(self, report_model):
        """Sends R with the report's code (no answer comes)."""
        _write_all(self._out, _REPORT.pack(9, ord("R"), result_code(report_model)))

    def close(self):
        """Ends the session: closes our output."""
        if self._out is not None:
            os.close(self._out)
            self._out = None
