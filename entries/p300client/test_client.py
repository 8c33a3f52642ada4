"""Tests of the client package against hand-built frames (docs/stream.md).

Run with the judge's runtime from the repository root:
    PYTHONPATH=entries/p300client target/tmp/runtime/bin/python3 entries/p300client/test_client.py
"""

import os
import pathlib
import struct
import subprocess
import sys
import tempfile
import textwrap
import unittest

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from physiojudge_stream import AlgorithmInterface, DataModel, ReportModel  # noqa: E402
from physiojudge_stream.protocol import Connection, ProtocolError  # noqa: E402

PACKAGE_DIR = pathlib.Path(__file__).resolve().parent
GET = b"\x01\x00\x00\x00G"


def hello(rows, version=1):
    return struct.pack("<IBHHHH", 9, ord("H"), version, rows, 250, 10)


def data_frame(start, person, finished, block):
    rows, n = block.shape
    head = struct.pack("<IBQIBH", 16 + 4 * rows * n, ord("D"), start, person, finished, n)
    return head + block.astype("<f4").tobytes()


def report_frame(code):
    return struct.pack("<IBq", 9, ord("R"), code)


class Wire:
    """A Connection whose host side is two pipes: `feed` what the host sends, `sent`
    what the algorithm wrote."""

    def __init__(self, host_bytes):
        self.to_alg_r, to_alg_w = os.pipe()
        os.write(to_alg_w, host_bytes)
        os.close(to_alg_w)
        self.from_alg_r, self.from_alg_w = os.pipe()
        self.conn = Connection(self.to_alg_r, self.from_alg_w)

    def sent(self):
        self.conn.close()
        out = b""
        while chunk := os.read(self.from_alg_r, 65536):
            out += chunk
        os.close(self.from_alg_r)
        os.close(self.to_alg_r)
        return out


class Framing(unittest.TestCase):
    def test_hello_data_and_report(self):
        block = np.arange(3 * 10, dtype=np.float32).reshape(3, 10) / 4
        block[2, 3] = 101
        tail = np.ones((3, 4), dtype=np.float32)
        w = Wire(
            hello(3)
            + data_frame(0, 7, 0, block)
            + data_frame(10, 7, 1, tail)
            + data_frame(14, 7, 1, tail[:, :0])
        )
        self.assertEqual((w.conn.rows, w.conn.sample_rate, w.conn.packet_samples), (3, 250, 10))
        p = w.conn.get_data()
        self.assertIsInstance(p, DataModel)
        self.assertEqual(p.data.dtype, np.float64)
        self.assertEqual(p.data.shape, (3, 10))
        np.testing.assert_array_equal(p.data, block.astype(np.float64))
        self.assertEqual((p.start_position, p.person_id, p.finished_flag), (0, 7, False))
        self.assertEqual((p.startPosition, p.personID, p.finishedFlag), (0, 7, False))
        with self.assertRaises(AttributeError):
            p.startPosition = 3
        w.conn.report(ReportModel(105))
        w.conn.report(np.int64(136))
        last = w.conn.get_data()
        self.assertEqual((last.data.shape, last.start_position, last.finishedFlag), ((3, 4), 10, True))
        empty = w.conn.get_data()
        self.assertEqual((empty.data.shape, empty.finished_flag), ((3, 0), True))
        self.assertEqual(
            w.sent(), GET + report_frame(105) + report_frame(136) + GET + GET
        )

    def test_report_values(self):
        w = Wire(hello(2))
        r = ReportModel()
        r.resultType = 120
        self.assertEqual(r.result, 120)
        w.conn.report(r)
        w.conn.report(ReportModel(121.0))
        w.conn.report(-1)
        for bad, error in [(120.5, ValueError), ("A", TypeError), (True, TypeError), (2**63, ValueError)]:
            with self.assertRaises(error, msg=repr(bad)):
                w.conn.report(ReportModel(bad))
        self.assertEqual(w.sent(), report_frame(120) + report_frame(121) + report_frame(-1))
        self.assertEqual(report_frame(120).hex(), "0900000052" + "7800000000000000")

    def test_bad_frames(self):
        with self.assertRaisesRegex(ProtocolError, "version 2"):
            Wire(hello(3, version=2))
        with self.assertRaisesRegex(ProtocolError, "hello"):
            Wire(b"\x09\x00\x00\x00X" + bytes(8))
        with self.assertRaisesRegex(ProtocolError, "closed"):
            Wire(hello(3)[:7])
        w = Wire(hello(3) + data_frame(0, 1, 0, np.zeros((2, 10))))  # 2 rows, not 3
        with self.assertRaisesRegex(ProtocolError, "data frame of"):
            w.conn.get_data()
        w = Wire(hello(3) + data_frame(0, 1, 0, np.zeros((3, 10)))[:-1])
        with self.assertRaisesRegex(ProtocolError, "closed"):
            w.conn.get_data()


ENTRY = '''
import os, sys
from physiojudge_stream import AlgorithmInterface, ReportModel

print("import-time print")

class AlgorithmImplement(AlgorithmInterface):
    def run(self):
        print("model_dir", self.model_dir)
        os.write(1, b"raw write to fd 1\\n")
        print("stdin gives", repr(sys.stdin.read()), repr(os.read(0, 10)))
        print("task has", sorted(a for a in dir(self.task) if not a.startswith("_")))
        while True:
            p = self.get_data()
            if p.data[-1].max() == 101:
                self.task.report(ReportModel(101 + int(p.data[0, 0])))
            if p.finishedFlag:
                break
        if os.environ.get("FAIL"):
            raise RuntimeError("deliberate")

    @staticmethod
    def train(data_dir, model_dir):
        (model_dir / "model.txt").write_text(str(sorted(p.name for p in data_dir.iterdir())))
'''


class Runner(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        root = pathlib.Path(self.tmp.name)
        self.entry = root / "entry"
        (self.entry / "AlgorithmImplement").mkdir(parents=True)
        (self.entry / "AlgorithmImplement" / "AlgorithmImplement.py").write_text(ENTRY)
        self.model = root / "model"
        self.model.mkdir()
        self.env = dict(os.environ, PYTHONPATH=str(PACKAGE_DIR))

    def tearDown(self):
        self.tmp.cleanup()

    def session(self, extra_env=None):
        block = np.zeros((2, 10), dtype=np.float32)
        block[0, 0] = 4
        block[1, 5] = 101
        host = hello(2) + data_frame(0, 1, 0, block) + data_frame(10, 1, 1, block[:, :3])
        return subprocess.run(
            [sys.executable, "-m", "physiojudge_stream.run", str(self.entry), str(self.model)],
            input=host,
            capture_output=True,
            cwd=self.entry,
            env=dict(self.env, **(extra_env or {})),
            timeout=60,
        )

    def test_stdout_carries_the_protocol_only(self):
        r = self.session()
        err = r.stderr.decode()
        self.assertEqual(r.returncode, 0, err)
        self.assertEqual(r.stdout, GET + report_frame(105) + GET)
        for line in [
            "import-time print",
            f"model_dir {self.model}",
            "raw write to fd 1",
            "stdin gives '' b''",
            "task has ['get_data', 'report']",
        ]:
            self.assertIn(line, err)

    def test_an_exception_exits_1_with_its_traceback(self):
        r = self.session({"FAIL": "1"})
        self.assertEqual(r.returncode, 1)
        self.assertIn("RuntimeError: deliberate", r.stderr.decode())
        self.assertEqual(r.stdout, GET + report_frame(105) + GET)

    def test_train(self):
        data = pathlib.Path(self.tmp.name) / "data"
        (data / "S01").mkdir(parents=True)
        cmd = [sys.executable, "-m", "physiojudge_stream.train", str(self.entry), str(data), str(self.model)]
        r = subprocess.run(cmd, capture_output=True, cwd=self.entry, env=self.env, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr.decode())
        self.assertEqual((self.model / "model.txt").read_text(), "['S01']")
        # No train(): nothing to do, exit 0.
        source = self.entry / "AlgorithmImplement" / "AlgorithmImplement.py"
        source.write_text(ENTRY.split("    @staticmethod")[0])
        r = subprocess.run(cmd, capture_output=True, cwd=self.entry, env=self.env, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr.decode())
        self.assertIn(b"nothing to train", r.stdout)

    def test_base_class(self):
        class Alg(AlgorithmInterface):
            def run(self):
                pass

        with self.assertRaises(TypeError):
            AlgorithmInterface()
        a = Alg()
        self.assertIsNone(a.model_dir)


if __name__ == "__main__":
    unittest.main()
