"""dynolite: Holistic Trace Analysis's API over dynolite's C trace engine
(libdynolite.so).  ``TraceAnalysis`` and ``TraceDiff`` are HTA's classes
(change the import, keep the notebook); ``load()`` is the lower-level API.
See docs/python.md."""

from ._lib import LIB_PATH, VERSION, DynoliteError
from .hta import LabeledTrace, TimeSeriesTypes, TraceAnalysis, TraceDiff, DeviceType, CPGraph
from .trace import Result, Table, Trace, load

__version__ = VERSION
__all__ = [
    "TraceAnalysis",
    "TraceDiff",
    "LabeledTrace",
    "TimeSeriesTypes",
    "DeviceType",
    "CPGraph",
    "load",
    "Trace",
    "Result",
    "Table",
    "DynoliteError",
    "LIB_PATH",
]
