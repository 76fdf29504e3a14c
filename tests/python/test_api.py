"""dynolite's own behaviour: bad input raises DynoliteError carrying the
engine's message (file and byte offset), a freed handle raises instead of
crashing, the lower-level API (load, run, events, to_pandas), the lazy load
giving the same numbers as a full one, and visualize=True figures."""

import gc
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import dynolite
from dynolite import _lib

DATA = os.environ.get("DYNO_TESTDATA", os.path.join(os.path.dirname(__file__), "..", "data"))
TF = os.path.join(DATA, "traces", "trace_filter")


def test_truncated_json_names_file_and_offset(tmp_path):
    p = tmp_path / "cut.json"
    p.write_text('{"traceEvents": [{"ph": "X", "cat": "kernel"')
    with pytest.raises(dynolite.DynoliteError) as e:
        dynolite.TraceAnalysis(trace_files=[str(p)], trace_dir="")
    assert "cut.json: byte " in str(e.value)


def test_missing_file_and_bad_options(tmp_path):
    with pytest.raises(dynolite.DynoliteError, match="No such file"):
        dynolite.load(str(tmp_path / "nope.json"))
    with pytest.raises(dynolite.DynoliteError, match="bad iterations"):
        dynolite.load(TF, iterations="5-3")
    with pytest.raises(dynolite.DynoliteError, match="unknown load option"):
        dynolite.load(TF, bogus=1)
    t = dynolite.load(TF)
    with pytest.raises(dynolite.DynoliteError, match="unknown analysis"):
        t.run("bogus")
    with pytest.raises(dynolite.DynoliteError, match="consecutive-kernel-delay"):
        t.idle(consecutive_kernel_delay="x")
    with pytest.raises(dynolite.DynoliteError, match="rank 7 is not in the trace"):
        t.idle(ranks=[7])
    with pytest.raises(dynolite.DynoliteError, match="unknown event kind"):
        t.events("bogus")


def test_garbage_inputs_never_crash(tmp_path):
    # every prefix class of a real trace: the engine answers with an error or
    # a partial result, the interpreter lives on
    src = os.path.join(DATA, "traces", "call_stack", "backward_thread.json")
    raw = open(src, "rb").read()
    for n in (0, 1, 17, len(raw) // 3, len(raw) - 5):
        p = tmp_path / f"part{n}.json"
        p.write_bytes(raw[:n])
        try:
            with warnings.catch_warnings(record=True) as w, dynolite.load(str(p)) as t:
                warnings.simplefilter("always")
                t.summary().close()
            # a damaged trace analysed up to the damage: said, with the place
            assert len(w) == 1 and f"part{n}.json: byte " in str(w[0].message)
        except dynolite.DynoliteError as e:
            assert f"part{n}.json" in str(e)


def test_use_after_free_raises():
    t = dynolite.load(TF)
    h = t._h
    r = t.temporal()
    rh = r._h
    r.close()
    t.close()
    with pytest.raises(dynolite.DynoliteError, match="trace used after close"):
        t.temporal()
    # the raw handles too: the engine checks their generation
    with pytest.raises(dynolite.DynoliteError, match="invalid handle"):
        _lib.run(h, 0, "temporal", [])
    with pytest.raises(dynolite.DynoliteError, match="invalid handle"):
        _lib.result_tables(rh)
    with pytest.raises(dynolite.DynoliteError, match="invalid handle"):
        _lib.free(h)
    # a new object in the freed slot does not answer to the old handle
    t2 = dynolite.load(TF)
    assert t2._h != h
    with pytest.raises(dynolite.DynoliteError):
        _lib.trace_ranks(h)
    assert t2.ranks == [0, 1]
    with pytest.raises(dynolite.DynoliteError, match="not a trace"):
        _lib.run(t2.temporal()._h, 0, "temporal", [])


def test_lower_level_api():
    t = dynolite.load(TF)
    assert t.ranks == [0, 1]
    r = t.summary()
    names = [x.name for x in r]
    assert "temporal_breakdown" in names and "cuda_kernel_launch_stats_rank1" in names
    df = r["temporal_breakdown"].to_pandas()
    assert list(df["rank"]) == [0, 1] and df["kernel_time(us)"].dtype == np.float64
    k = t.events("kernel")
    assert set(k["cat"]) == {"kernel"} and len(k) > 100 and k["ts"].is_monotonic_increasing is not None
    g = t.events("gpu", ranks=[1])
    assert set(g["rank"]) == {1} and (g["stream"] != -1).all()
    cpu = t.events("cpu_op")  # loads again, keeping the operators
    assert len(cpu) > 0 and set(cpu["cat"]) == {"cpu_op"}


def test_lazy_load_same_numbers():
    lazy = dynolite.TraceAnalysis(trace_dir=TF)
    full = dynolite.TraceAnalysis(trace_dir=TF, load="all")
    a = lazy.get_temporal_breakdown()
    lazy.get_aten_op_kernels_and_delay()  # forces a load with the operators
    b = lazy.get_temporal_breakdown()
    c = full.get_temporal_breakdown()
    assert a.equals(b) and a.equals(c)


def test_selection_options():
    all_ = dynolite.load(TF).temporal()["temporal_breakdown"].to_pandas()
    sel = dynolite.load(TF, time_range="0:100000").temporal()["temporal_breakdown"].to_pandas()
    assert (sel["kernel_time(us)"] < all_["kernel_time(us)"]).all()


def test_visualize_returns_figures():
    ta = dynolite.TraceAnalysis(trace_dir=TF)
    df = ta.get_temporal_breakdown(visualize=True)
    assert len(df) == 2 and len(ta.figures) == 1
    fig = ta.figures[0]
    assert fig.layout.title.text == "Temporal breakdown across ranks"
    ta.get_idle_time_breakdown(ranks=[0, 1], visualize=True)
    assert len(ta.figures) == 2
    ta.get_temporal_breakdown()
    assert ta.figures == []


def test_columns_are_views_not_loops():
    # a column arrives as one strided array over the engine's cells
    t = dynolite.load(TF)
    with t.launch(ranks=[0]) as r:
        tab = r["cuda_kernel_launch_stats_rank0"]
        h = r._h
        c = _lib._Column()
        _lib.check(_lib.LIB.dynolite_column(h, tab._info["index"], 0, c))
        assert c.stride == 8 * tab.ncols
    gc.collect()


def test_no_output_on_stdout_or_stderr():
    code = (
        "import dynolite; t = dynolite.load(%r); t.summary(); t.critical_path(); t.patterns(operator='aten::mm')"
        % TF
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=os.environ)
    assert p.returncode == 0, p.stderr
    assert p.stdout == "" and p.stderr == ""
