"""pandas and numpy, imported on a second thread as soon as dynolite is.

Importing pandas costs ~0.3-0.4 s of one core, as much as the engine needs
to load a few hundred MB of trace; the engine's calls release the GIL, so
``TraceAnalysis(...)`` parses while pandas imports, and the first DataFrame
finds it ready (bench/python_bench.sh).  A module that needs them calls
pandas() / numpy() at use: Python's import lock makes that wait for the
thread's import if it is still running, and never imports twice."""

import importlib
import threading


def _warm():
    try:
        importlib.import_module("pandas")
    except Exception:  # reported where it is used, by the import there
        pass


threading.Thread(target=_warm, name="dynolite-import-pandas").start()


def pandas():
    import pandas

    return pandas


def numpy():
    import numpy

    return numpy
