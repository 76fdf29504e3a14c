"""dynolite.TraceAnalysis / TraceDiff against the real HTA's outputs
(tests/data/conformance/<case>/*.csv, what HTA's frames wrote with pandas'
to_csv): for every trace of the manifest and every analysis, our DataFrame
flattened the same way has the same columns, the same rows and the same
values (numbers within 1e-6, relative), with the documented orders where HTA
has none (op-kernels: an unstable sort, compared as a set of rows; cupti:
columns in Python set order, compared by name).  Where HTA failed (no CSV),
the method must raise, never return zeros.  Run by
tests/integration/python_api.sh.
"""

import json
import os

import numpy as np
import pandas as pd
import pytest

import dynolite
from dynolite import DeviceType, LabeledTrace, TraceAnalysis, TraceDiff

DATA = os.environ.get("DYNO_TESTDATA", os.path.join(os.path.dirname(__file__), "..", "data"))
CONF = os.path.join(DATA, "conformance")


def manifest():
    out = []
    with open(os.path.join(CONF, "MANIFEST.tsv")) as f:
        next(f)
        for line in f:
            name, kind, inputs = line.rstrip("\n").split("\t")
            out.append((name, kind, [os.path.join(DATA, "traces", x) for x in inputs.split(" ")]))
    return out


CASES = [c for c in manifest() if c[1] in ("file", "dir")]
DIFFS = [c for c in manifest() if c[1] == "diff"]


def flat(df):
    """A frame as HTA's reference CSVs hold it: a named (Multi)Index as
    columns, describe()'s column level dropped."""
    df = df.copy()
    if isinstance(df.columns, pd.MultiIndex):
        df.columns = df.columns.get_level_values(-1)
    if any(n is not None for n in df.index.names):
        df = df.reset_index()
    else:
        df = df.reset_index(drop=True)
    return df


def same(ours, ref_path, sort_rows=False, by_name=False):
    ref = pd.read_csv(ref_path)
    ours = flat(ours)
    if by_name:
        assert sorted(ours.columns) == sorted(ref.columns), ref_path
        ours = ours[list(ref.columns)]
    assert list(ours.columns) == list(ref.columns), f"{ref_path}: columns {list(ours.columns)}"
    assert len(ours) == len(ref), f"{ref_path}: {len(ours)} rows, HTA {len(ref)}"
    if sort_rows:
        key = list(ref.columns)
        ours = ours.astype({c: str for c in key if ours[c].dtype == object}).sort_values(key, ignore_index=True)
        ref = ref.astype({c: str for c in key if ref[c].dtype == object}).sort_values(key, ignore_index=True)
    for c in ref.columns:
        a, b = ours[c], ref[c]
        if b.dtype.kind == "b":
            assert a.dtype.kind == "b" and (a.to_numpy() == b.to_numpy()).all(), f"{ref_path}: {c}"
            continue
        if a.dtype == object and b.dtype != object:
            # a text column of numbers (HTA's object pid/tid): the CSV reads back as numbers
            a = pd.to_numeric(a.replace("", np.nan))
        if b.dtype == object or a.dtype == object:
            # "" and a missing text are one thing in a CSV
            x = a.where(a.notna(), "").astype(str).str.replace(r"^nan$", "", regex=True)
            y = b.where(b.notna(), "").astype(str).str.replace(r"^nan$", "", regex=True)
            bad = (x != y).to_numpy()
            assert not bad.any(), f"{ref_path}: {c}: row {bad.argmax()}: {x[bad.argmax()]!r} vs {y[bad.argmax()]!r}"
            continue
        if b.dtype.kind == "i" and len(b):
            assert a.dtype.kind == "i", f"{ref_path}: {c}: dtype {a.dtype}, HTA int64"
        if b.dtype.kind == "f" and len(b) and a.dtype.kind != "f":
            # HTA's float column: ours too (bools and ints print differently)
            assert a.dtype.kind == "f", f"{ref_path}: {c}: dtype {a.dtype}, HTA float64"
        x, y = a.to_numpy(dtype=float), b.to_numpy(dtype=float)
        ok = np.isclose(x, y, rtol=1e-6, atol=1e-9, equal_nan=True)
        assert ok.all(), f"{ref_path}: {c}: row {(~ok).argmax()}: {x[~ok][0]} vs {y[~ok][0]}"


def ref(name, file):
    p = os.path.join(CONF, name, file)
    return p if os.path.exists(p) else None


def results(name):
    with open(os.path.join(CONF, name, "results.json")) as f:
        return json.load(f)


@pytest.fixture(scope="module", params=CASES, ids=[c[0] for c in CASES])
def case(request):
    name, kind, inputs = request.param
    if kind == "dir":
        ta = TraceAnalysis(trace_dir=inputs[0])
    else:
        ta = TraceAnalysis(trace_files=inputs, trace_dir="")
    yield name, ta
    ta.t.close()


def test_temporal_idle_overlap(case):
    name, ta = case
    ranks = ta.t.ranks
    if ref(name, "temporal_breakdown.csv"):
        same(ta.get_temporal_breakdown(), ref(name, "temporal_breakdown.csv"))
    else:
        with pytest.raises(dynolite.DynoliteError):
            ta.get_temporal_breakdown()
    if ref(name, "idle_time_breakdown.csv"):
        df, stats = ta.get_idle_time_breakdown(ranks=ranks, show_idle_interval_stats=True)
        same(df, ref(name, "idle_time_breakdown.csv"))
        same(stats, ref(name, "idle_interval_stats.csv"))
        assert stats.index.name == "idle_category"
    else:
        with pytest.raises(dynolite.DynoliteError):
            ta.get_idle_time_breakdown(ranks=ranks)
    same(ta.get_comm_comp_overlap(), ref(name, "comm_comp_overlap.csv"))


def test_kernels(case):
    name, ta = case
    types, metrics = ta.get_gpu_kernel_breakdown()
    same(types, ref(name, "kernel_type_breakdown.csv"))
    same(metrics, ref(name, "kernel_metrics.csv"))
    _, all_metrics = ta.get_gpu_kernel_breakdown(num_kernels=10**12, duration_ratio=1.0)
    same(all_metrics, ref(name, "kernel_metrics_all.csv"))


def test_launch_stats(case):
    name, ta = case
    stats = ta.get_cuda_kernel_launch_stats(ranks=ta.t.ranks)
    files = [f for f in os.listdir(os.path.join(CONF, name)) if f.startswith("cuda_kernel_launch_stats_rank")]
    assert files
    for f in files:
        rank = int(f[len("cuda_kernel_launch_stats_rank") : -4])
        same(stats[rank], ref(name, f))


def test_counters(case):
    name, ta = case
    ranks = ta.t.ranks
    qts = ta.get_queue_length_time_series(ranks=ranks)
    if ref(name, "queue_length_summary.csv"):
        same(ta.get_queue_length_summary(ranks=ranks), ref(name, "queue_length_summary.csv"))
        for rank, df in qts.items():
            same(df.reset_index().rename(columns={"index": "event_index"}),
                 ref(name, f"queue_length_time_series_rank{rank}.csv"))
        # the summary from the series, as HTA's helper computes it
        from_ts = ta.get_queue_length_summary_from_time_series(qts)
        same(from_ts, ref(name, "queue_length_summary.csv"))
    else:
        assert ta.get_queue_length_summary(ranks=ranks) is None and qts == {}
    if ref(name, "time_blocked_on_full_queue.csv"):
        same(ta.get_time_spent_blocked_on_full_queue(qts), ref(name, "time_blocked_on_full_queue.csv"))
    bw = ta.get_memory_bw_summary(ranks=ranks)
    if ref(name, "memory_bw_summary.csv"):
        r = ref(name, "memory_bw_summary.csv")
        if open(r).read().strip() == "index,count,mean,std,min,25%,50%,75%,max":
            assert bw is not None and len(bw) == 0  # HTA's empty describe(): every bandwidth 0
        else:
            same(bw, r)
        for rank, df in ta.get_memory_bw_time_series(ranks=ranks).items():
            same(df.reset_index().rename(columns={"index": "event_index"}),
                 ref(name, f"memory_bw_time_series_rank{rank}.csv"))
    else:
        assert bw is None


def test_annotations_and_ops(case):
    name, ta = case
    for gpu, f in ((True, "gpu_user_annotation_breakdown.csv"), (False, "cpu_user_annotation_breakdown.csv")):
        df = ta.get_gpu_user_annotation_breakdown(use_gpu_annotation=gpu)
        if ref(name, f):
            same(df, ref(name, f))
        else:
            assert df is None
    files = [f for f in os.listdir(os.path.join(CONF, name)) if f.startswith("aten_op_kernels_and_delay_rank")]
    if files:
        ops = ta.get_aten_op_kernels_and_delay(ranks=ta.t.ranks)
        for f in files:
            same(ops[int(f[len("aten_op_kernels_and_delay_rank") : -4])], ref(name, f), sort_rows=True)
    for f in sorted(os.listdir(os.path.join(CONF, name))):
        if f.startswith("cupti_counters_"):
            dfs = ta.get_cupti_counter_data_with_operators(ranks=ta.t.ranks)
            same(dfs[int(f[len("cupti_counters_") : -4])], ref(name, f), by_name=True)


def test_patterns(case, tmp_path):
    name, ta = case
    st = results(name)["stages"]["frequent_patterns"]
    if st["status"] != "ok":
        return
    rank = st["result"]["params"]["rank"]
    for op in st["result"]["operators"]:
        df = ta.get_frequent_cuda_kernel_sequences(op, str(tmp_path), rank=rank)
        r = ref(name, "frequent_patterns_" + op.replace("::", "_") + ".csv")
        if r:
            same(df, r)
            assert os.listdir(tmp_path), "no overlaid trace written"
        else:
            assert len(df) == 0


def test_critical_path(case, tmp_path):
    name, ta = case
    st = results(name)["stages"]["critical_path"]
    if st["status"] != "ok":
        if st["status"] == "error":
            g, ok = ta.critical_path_analysis(rank=ta.t.ranks[0], annotation="ProfilerStep", instance_id=0)
            assert not ok
        return
    p = st["result"]["params"]
    g, ok = ta.critical_path_analysis(rank=p["rank"], annotation=p["annotation"], instance_id=p["instance_id"])
    assert ok
    same(g.get_critical_path_breakdown(), ref(name, "critical_path_breakdown.csv"))
    same(g.critical_path_edges, ref(name, "critical_path_edges.csv"))
    want = st["result"]["summary_pct_by_bound"]
    got = g.summary()
    for k, v in want.items():
        assert got[k] == pytest.approx(v, rel=1e-9, abs=1e-12), k


@pytest.mark.parametrize("case", DIFFS, ids=[c[0] for c in DIFFS])
def test_diff(case):
    name, _, (control, test) = case
    c, t = LabeledTrace("control", trace_dir=control), LabeledTrace("test", trace_dir=test)
    for dev in ("all", "cpu", "gpu"):
        for short in (False, True):
            f = f"compare_traces_{dev}{'_short' if short else ''}.csv"
            df = TraceDiff.compare_traces(c, t, device_type=DeviceType[dev.upper()], use_short_name=short)
            assert df.index.name == ("short_name" if short else "name")
            same(df, ref(name, f))
    with open(ref(name, "ops_diff.json")) as f:
        want = json.load(f)
    got = TraceDiff.ops_diff(c, t)
    assert {k: sorted(v) for k, v in got.items()} == {k: sorted(v) for k, v in want.items()}
