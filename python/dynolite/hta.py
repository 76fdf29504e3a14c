"""Holistic Trace Analysis's API (``hta.trace_analysis.TraceAnalysis``,
``hta.trace_diff.TraceDiff``) over the C engine: HTA's method names,
arguments and defaults, and its DataFrames (columns, index, dtypes), so an
HTA notebook runs with its import changed.  Numbers are HTA's (the engine's
conformance: docs/analyze.md); where an HTA argument has no engine
counterpart the method raises NotImplementedError rather than ignoring it.

Differences on purpose (docs/python.md): ``visualize`` defaults to False
(HTA: True); figures are shown in a notebook and kept in
``TraceAnalysis.figures``.  Costs: each method is one engine run over the
loaded model plus the copy of its tables into pandas.
"""

import os
from enum import Enum, Flag, auto

from . import _deps, plots
from ._lib import DynoliteError
from .trace import Trace

CUDA_MAX_LAUNCH_QUEUE_PER_STREAM = 1024


class TimeSeriesTypes(Flag):
    QUEUE_LENGTH = auto()
    MEMCPY_BANDWIDTH = auto()


class DeviceType(Enum):
    CPU = 0
    GPU = 1
    ALL = 2


def _unavailable(table, what):
    """HTA raises where the analysis is undefined (no GPU rows ...): so do we,
    with the engine's reason, never a frame of zeros."""
    if table is not None and (table.unavailable or "unavailable" in table.notes):
        raise DynoliteError(f"{what}: {table.notes.strip() or 'undefined on this trace'}")


def _per_rank_index(df):
    """pandas' index after concatenating per-rank frames: 0..n-1 per rank."""
    pd = _deps.pandas()
    if len(df):
        df.index = pd.Index(df.groupby("rank", sort=False).cumcount().to_numpy())
    return df


def _describe(df, keys, value):
    """A describe() frame as HTA returns it: keys as the (Multi)Index,
    columns (value, statistic)."""
    pd = _deps.pandas()
    out = df.set_index(keys)
    out.columns = pd.MultiIndex.from_product([[value], list(out.columns)])
    return out


def _ranks(ranks):
    return [0] if ranks is None or len(ranks) == 0 else list(ranks)


class CPGraph:
    """What HTA's CPGraph gives a notebook: ``get_critical_path_breakdown()``,
    ``summary()``, the edges on the path (``critical_path_edges``), and the
    figures of the run (``num_nodes``...: the engine's summary notes)."""

    def __init__(self, summary_df, breakdown_df, edges_df, notes, rank):
        self._summary = summary_df
        self._breakdown = breakdown_df
        self.critical_path_edges = edges_df
        self.notes = notes
        self.rank = rank

    def get_critical_path_breakdown(self):
        return self._breakdown.copy()

    def summary(self):
        """HTA's summary(): the share (%) of the path's time per bound_by."""
        s = self._summary.set_index(self._summary.columns[0])
        return s[s.columns[-1]].rename(None)


class TraceAnalysis:
    def __init__(
        self,
        trace_files=None,
        trace_dir="./traces/",
        include_last_profiler_step=False,
        **load_options,
    ):
        if trace_files:
            if isinstance(trace_files, dict):
                inputs = [self._join(trace_dir, p) for p in trace_files.values()]
                load_options["file_rank"] = {r: self._join(trace_dir, p) for r, p in trace_files.items()}
            else:
                inputs = [self._join(trace_dir, p) for p in trace_files]
        else:
            inputs = [os.path.expanduser(trace_dir)]
        self.t = Trace(inputs, keep_last_step=bool(include_last_profiler_step), **load_options)
        self.trace_files = self.t.files
        self.figures = []

    @staticmethod
    def _join(d, p):
        p = os.path.expanduser(p)
        return p if os.path.isabs(p) or not d or os.path.exists(p) else os.path.join(os.path.expanduser(d), p)

    def _show(self, figs, visualize):
        self.figures = figs if visualize else []
        if visualize:
            plots.show(figs)

    # ---- temporal, idle, kernels, overlap ----

    def get_temporal_breakdown(self, visualize=False):
        with self.t.temporal() as r:
            t = r["temporal_breakdown"]
            _unavailable(t, "get_temporal_breakdown")
            df = t.to_pandas()
        self._show(plots.temporal(df) if visualize else [], visualize)
        return df

    def get_idle_time_breakdown(
        self,
        ranks=None,
        streams=None,
        visualize=False,
        visualize_pctg=True,
        show_idle_interval_stats=False,
        consecutive_kernel_delay=30,
    ):
        ranks = _ranks(ranks)
        with self.t.idle(ranks=ranks, consecutive_kernel_delay=consecutive_kernel_delay) as r:
            t = r["idle_time_breakdown"]
            _unavailable(t, "get_idle_time_breakdown")
            df = t.to_pandas()
            stats = r["idle_interval_stats"].to_pandas() if show_idle_interval_stats else None
        if streams:
            df = self._streams(df, streams)
            stats = self._streams(stats, streams) if stats is not None else None
        df = _per_rank_index(df.reset_index(drop=True))
        if stats is not None:
            stats = stats.set_index("idle_category")
        self._show(plots.idle(df, visualize_pctg) if visualize else [], visualize)
        return df, stats

    @staticmethod
    def _streams(df, streams):
        pd = _deps.pandas()
        parts = [df[df["stream"] == s] for s in streams]
        if not parts:
            return df.iloc[0:0]
        # per rank, the streams in the order asked (HTA's loop)
        out = pd.concat(parts)
        return out.sort_values("rank", kind="stable")

    def get_gpu_kernel_breakdown(
        self,
        visualize=False,
        duration_ratio=0.8,
        num_kernels=10,
        include_memory_kernels=True,
        image_renderer="",
    ):
        with self.t.kernels(
            duration_ratio=duration_ratio,
            num_kernels=num_kernels,
            no_memory_kernels=not include_memory_kernels,
        ) as r:
            types = r["kernel_type_breakdown"].to_pandas()
            metrics = r["kernel_metrics"].to_pandas()
        self._show(plots.kernels(types, metrics) if visualize else [], visualize)
        return types, metrics

    def get_comm_comp_overlap(self, visualize=False):
        with self.t.overlap() as r:
            df = r["comm_comp_overlap"].to_pandas()
        self._show(plots.overlap(df) if visualize else [], visualize)
        return df

    # ---- launch statistics ----

    def get_cuda_kernel_launch_stats(
        self,
        ranks=None,
        runtime_cutoff=50,
        launch_delay_cutoff=100,
        include_memory_events=True,
        visualize=False,
    ):
        with self.t.launch(
            ranks=_ranks(ranks),
            runtime_cutoff=runtime_cutoff,
            launch_delay_cutoff=launch_delay_cutoff,
            no_memory_events=not include_memory_events,
        ) as r:
            out = {rank: t.to_pandas() for rank, t in r.by_base("cuda_kernel_launch_stats_rank").items()}
        figs = []
        if visualize:
            for rank, df in out.items():
                figs += plots.launch(df, rank, runtime_cutoff, launch_delay_cutoff)
        self._show(figs, visualize)
        return out

    # ---- counters ----

    def _counters(self, ranks, **opts):
        return self.t.counters(ranks=_ranks(ranks), **opts)

    def get_queue_length_time_series(self, ranks=None):
        with self._counters(ranks) as r:
            out = {}
            for rank, t in r.by_base("queue_length_time_series_rank").items():
                if t.nrows:
                    df = t.to_pandas().set_index("event_index")
                    df.index.name = "index"
                    out[rank] = df
            return out

    @staticmethod
    def _summary(r, table, series, keys, value):
        """HTA's describe() frame, or None when no rank has a time series
        (an empty frame when the series exist but hold no sample)."""
        df = r[table].to_pandas()
        if not len(df) and not any(t.nrows for t in r.by_base(series).values()):
            return None
        return _describe(df, keys, value)

    def get_queue_length_summary(self, ranks=None):
        with self._counters(ranks) as r:
            return self._summary(r, "queue_length_summary", "queue_length_time_series_rank", ["rank", "stream"],
                                 "queue_length")

    def get_queue_length_summary_from_time_series(self, queue_length_dict):
        pd = _deps.pandas()
        parts = []
        for rank, df in queue_length_dict.items():
            d = df[["stream", "queue_length"]].copy()
            d.insert(0, "rank", rank)
            parts.append(d.groupby(["rank", "stream"]).describe())
        return pd.concat(parts) if parts else None

    def get_time_spent_blocked_on_full_queue(self, queue_length_dict, max_queue_length=CUDA_MAX_LAUNCH_QUEUE_PER_STREAM):
        pd = _deps.pandas()
        # the engine recomputes the series of those ranks (the same as the dict's)
        ranks = list(queue_length_dict.keys())
        if not ranks:
            return pd.DataFrame(
                columns=["rank", "stream", "duration_at_max_queue_length", "relative_duration_at_max_queue_length"]
            )
        with self._counters(ranks, max_queue_length=max_queue_length) as r:
            return r["time_blocked_on_full_queue"].to_pandas()

    def get_memory_bw_time_series(self, ranks=None):
        with self._counters(ranks) as r:
            out = {}
            for rank, t in r.by_base("memory_bw_time_series_rank").items():
                if t.nrows:
                    df = t.to_pandas().set_index("event_index")
                    df.index.name = None
                    out[rank] = df
            return out

    def get_memory_bw_summary(self, ranks=None):
        with self._counters(ranks) as r:
            return self._summary(r, "memory_bw_summary", "memory_bw_time_series_rank", ["rank", "name"],
                                 "memory_bw_gbps")

    def generate_trace_with_counters(self, time_series=None, ranks=None, output_suffix="_with_counters"):
        if time_series is not None and time_series != (TimeSeriesTypes.QUEUE_LENGTH | TimeSeriesTypes.MEMCPY_BANDWIDTH):
            raise NotImplementedError("generate_trace_with_counters: the engine writes both time series")
        suffix = output_suffix or "_with_counters"
        files = self.t.files
        for rank in _ranks(ranks):
            if rank not in files:
                raise DynoliteError(f"rank {rank} is not in the trace (ranks: {sorted(files)})")
            out = files[rank].replace(".json", f"{suffix}.json")
            with self._counters([rank], write_trace=out) as r:
                notes = r["queue_length_summary"].notes
            if "--write-trace:" in notes:
                raise DynoliteError(notes.strip())

    # ---- annotations, operators ----

    def get_gpu_user_annotation_breakdown(
        self,
        use_gpu_annotation=True,
        visualize=False,
        duration_ratio=0.8,
        num_kernels=1000,
        allowlist_patterns=None,
        image_renderer=None,
    ):
        if duration_ratio != 0.8 or num_kernels != 1000 or allowlist_patterns:
            raise NotImplementedError(
                "get_gpu_user_annotation_breakdown: the engine computes HTA's defaults "
                "(duration_ratio=0.8, num_kernels=1000, no allowlist_patterns)"
            )
        name = "gpu_user_annotation_breakdown" if use_gpu_annotation else "cpu_user_annotation_breakdown"
        with self.t.annotations() as r:
            df = r[name].to_pandas()
        if not len(df):
            return None
        self._show(plots.annotations(df) if visualize else [], visualize)
        return df

    def get_aten_op_kernels_and_delay(self, ranks=None):
        with self.t.op_kernels(ranks=_ranks(ranks)) as r:
            return {rank: t.to_pandas() for rank, t in r.by_base("aten_op_kernels_and_delay_rank").items()}

    def get_op_kernels_and_delay(self, op_name_pattern=None, ranks=None, sort_by=None):
        if op_name_pattern not in (None, "::aten") or sort_by not in (None, ["occurrence_count"]):
            raise NotImplementedError("get_op_kernels_and_delay: the engine computes the aten operators' table")
        return self.get_aten_op_kernels_and_delay(ranks)

    def get_frequent_cuda_kernel_sequences(
        self,
        operator_name,
        output_dir,
        min_pattern_len=3,
        rank=0,
        top_k=5,
        visualize=False,
        compress_other_kernels=True,
    ):
        files = self.t.files
        if rank not in files:
            raise DynoliteError(f"rank {rank} is not in the trace (ranks: {sorted(files)})")
        out = None
        if output_dir:
            out = os.path.join(os.path.expanduser(output_dir), "overlaid_" + os.path.basename(files[rank]))
        with self.t.patterns(
            operator=operator_name, min_len=min_pattern_len, top_k=top_k, patterns_rank=rank, patterns_trace=out
        ) as r:
            df = r["frequent_patterns"].to_pandas()
        self._show(plots.patterns(df, top_k) if visualize else [], visualize)
        return df

    def get_cupti_counter_data_with_operators(self, ranks=None):
        with self.t.cupti(ranks=_ranks(ranks)) as r:
            return [t.to_pandas() for rank, t in sorted(r.by_base("cupti_counters_").items()) if t.nrows]

    # ---- critical path ----

    def critical_path_analysis(self, rank, annotation, instance_id, data_load_events=None):
        pd = _deps.pandas()
        np = _deps.numpy()
        if data_load_events:
            raise NotImplementedError("critical_path_analysis: data_load_events")
        if isinstance(instance_id, tuple):
            raise NotImplementedError("critical_path_analysis: a range of instances")
        opts = dict(cp_rank=rank, annotation=annotation, hta_graph_launch=True)
        if instance_id is not None:
            opts["instance"] = instance_id
        with self.t.critical_path(**opts) as r:
            s = r["critical_path_summary"]
            if s.unavailable:
                return CPGraph(s.to_pandas(), pd.DataFrame(), pd.DataFrame(), s.notes, rank), False
            edges = r["critical_path_edges"].to_pandas()
            for c in ("src_is_start", "dst_is_start"):
                edges[c] = edges[c] == "True"  # HTA's bool columns
            if len(edges) and not edges["attributed_event"].isna().any():
                edges["attributed_event"] = edges["attributed_event"].astype(np.int64)
            brk = r["critical_path_breakdown"].to_pandas()
            for c in ("event_idx", "stream", "index"):
                if len(brk) and not brk[c].isna().any():
                    brk[c] = brk[c].astype(np.int64)  # pandas' dtype: a column without NaN stays int64
            g = CPGraph(s.to_pandas(), brk, edges, s.notes, rank)
        g._opts = opts
        return g, True

    def overlay_critical_path_analysis(
        self, rank, critical_path_graph, output_dir, only_show_critical_events=True, show_all_edges=False
    ):
        if not only_show_critical_events or show_all_edges:
            raise NotImplementedError("overlay_critical_path_analysis: the engine writes HTA's default overlay")
        files = self.t.files
        out = os.path.join(os.path.expanduser(output_dir), "overlaid_critical_path_" + os.path.basename(files[rank]))
        opts = dict(getattr(critical_path_graph, "_opts", {"cp_rank": rank, "hta_graph_launch": True}))
        opts["write_trace"] = out
        with self.t.critical_path(**opts) as r:
            notes = r["critical_path_summary"].notes
        if "--write-trace:" in notes:
            raise DynoliteError(notes.strip())
        return out

    # ---- the lower level ----

    def events(self, kind="kernel", ranks=None):
        return self.t.events(kind, ranks)


class LabeledTrace:
    """HTA's LabeledTrace: a label and a trace (directory or files)."""

    def __init__(self, label="", trace_dir=None, trace_files=None, **load_options):
        self.label = label
        if trace_files:
            inputs = list(trace_files.values()) if isinstance(trace_files, dict) else list(trace_files)
        else:
            inputs = [os.path.expanduser(trace_dir)]
        self.t = Trace(inputs, **load_options)


def _trace_of(x):
    if isinstance(x, LabeledTrace):
        return x.t
    if isinstance(x, TraceAnalysis):
        return x.t
    return x


class TraceDiff:
    """HTA's TraceDiff: compare_traces and ops_diff of two traces, one rank
    and one ProfilerStep of each (the first of each unless given)."""

    @staticmethod
    def _run(control, test, control_rank, test_rank, control_iteration, test_iteration):
        if control_rank != test_rank or control_iteration != test_iteration:
            raise NotImplementedError("TraceDiff: the engine compares the same rank and iteration on both sides")
        ranks = None if control_rank is None else [control_rank]
        return _trace_of(control).diff(_trace_of(test), ranks=ranks, iteration=control_iteration)

    @staticmethod
    def compare_traces(
        control,
        test,
        control_rank=None,
        test_rank=None,
        control_iteration=None,
        test_iteration=None,
        device_type=DeviceType.ALL,
        use_short_name=False,
    ):
        name = "compare_traces_" + {DeviceType.ALL: "all", DeviceType.CPU: "cpu", DeviceType.GPU: "gpu"}[device_type]
        if use_short_name:
            name += "_short"
        with TraceDiff._run(control, test, control_rank, test_rank, control_iteration, test_iteration) as r:
            df = r[name].to_pandas()
            df = df.set_index(df.columns[0])  # name, or short_name
        return TraceDiff._relabel(df, control, test)

    @staticmethod
    def _relabel(df, control, test):
        ren = {}
        for side, default in ((control, "control"), (test, "test")):
            label = getattr(side, "label", "") or default
            if label != default:
                ren.update({f"{default}_counts": f"{label}_counts", f"{default}_total_duration": f"{label}_total_duration"})
        return df.rename(columns=ren)

    @staticmethod
    def ops_diff(
        control,
        test,
        control_rank=None,
        test_rank=None,
        control_iteration=None,
        test_iteration=None,
        device_type=DeviceType.ALL,
    ):
        if device_type != DeviceType.ALL:
            raise NotImplementedError("ops_diff: the engine compares every op (DeviceType.ALL)")
        with TraceDiff._run(control, test, control_rank, test_rank, control_iteration, test_iteration) as r:
            df = r["ops_diff"].to_pandas()
        cat, name = df.columns[0], df.columns[1]
        out = {}
        for c in ("added", "deleted", "increased", "decreased", "unchanged"):
            out[c] = df.loc[df[cat] == c, name].tolist()
        return out

    @staticmethod
    def visualize_counts_diff(df, show_image=True, export_image_path=None):
        fig = plots.diff(df, "diff_counts")
        if show_image:
            plots.show([fig])
        if export_image_path:
            fig.write_image(export_image_path)
        return fig

    @staticmethod
    def visualize_duration_diff(df, show_image=True, export_image_path=None):
        fig = plots.diff(df, "diff_duration")
        if show_image:
            plots.show([fig])
        if export_image_path:
            fig.write_image(export_image_path)
        return fig


__all__ = ["TraceAnalysis", "TraceDiff", "LabeledTrace", "TimeSeriesTypes", "DeviceType", "CPGraph"]
