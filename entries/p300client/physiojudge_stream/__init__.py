"""physiojudge's Python client for streaming challenges (the P300 speller).

An entry subclasses :class:`AlgorithmInterface` in
``AlgorithmImplement/AlgorithmImplement.py`` and implements ``run()``: it asks for
packets with ``self.get_data()`` (a :class:`DataModel`) until one has
``finished_flag`` set, and reports characters with ``self.report(ReportModel(code))``.
The judge starts it with ``python3 -m physiojudge_stream.run`` (the session) and
``python3 -m physiojudge_stream.train`` (the train stage); see README.md next to this
package. The wire protocol underneath is docs/stream.md.

Standard library and numpy only.
"""

from .protocol import (
    AlgorithmInterface,
    DataModel,
    ProtocolError,
    ReportModel,
)

__all__ = ["AlgorithmInterface", "DataModel", "ReportModel", "ProtocolError"]
