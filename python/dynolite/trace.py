"""The lower-level API: ``dynolite.load(path)`` -> a Trace whose methods are
the analyses of ``dyno analyze`` (same names, same options as keyword
arguments), each returning a Result of Tables with ``to_pandas()``; and
``Trace.events(kind)``, the loaded events as a DataFrame.

Costs: a Trace holds the engine's columnar model (tens of bytes per event,
not the JSON); a Result holds the engine's tables until it is freed
(``close()``, ``with``, or garbage collection); ``to_pandas()`` copies each
column once.
"""

import warnings

from . import _deps, _lib
from ._lib import DynoliteError


class Table:
    """One output table: ``name`` (HTA's CSV file name), ``rank`` (per-rank
    tables), ``notes`` (what the CLI prints under it), ``partial`` (the
    damage, when the input was damaged) and ``unavailable`` (the analysis is
    undefined on this trace: HTA raises there)."""

    def __init__(self, result, info):
        self._result = result
        self._info = info
        for k in ("name", "base", "analysis", "rank", "notes", "partial", "unavailable", "per_rank"):
            setattr(self, k, info[k])
        self.nrows = int(info["nrows"])
        self.ncols = int(info["ncols"])

    def columns(self):
        """[(name, type, int_text, array)], type one of "int", "float", "str"."""
        h = self._result._handle()
        kinds = {_lib.INT: "int", _lib.FLOAT: "float", _lib.STR: "str"}
        out = []
        for c in range(self.ncols):
            name, typ, int_text, arr = _lib.column(h, self._info["index"], c, self.nrows)
            out.append((name, kinds[typ], int_text, arr))
        return out

    def to_pandas(self):
        """The table as a DataFrame: int64, float64 (NaN: no value) and object
        columns; a float column holding HTA's int64 column (whole numbers)
        becomes int64 when it has no NaN."""
        np, pd = _deps.numpy(), _deps.pandas()
        data = {}
        for name, typ, int_text, arr in self.columns():
            if typ == "float" and int_text and not np.isnan(arr).any():
                arr = arr.astype(np.int64)
            data[name] = arr
        return pd.DataFrame(data, columns=[c for c in data])

    def __repr__(self):
        return f"<dynolite.Table {self.name}: {self.nrows} rows x {self.ncols} columns>"


class Result:
    """The tables of one analysis run, in the CLI's output order."""

    def __init__(self, handle):
        self._h = handle
        self.tables = [Table(self, i) for i in _lib.result_tables(handle)]
        self.skipped = _lib.result_skipped(handle)

    def _handle(self):
        if self._h is None:
            raise DynoliteError("result used after close()")
        return self._h

    def __getitem__(self, name):
        for t in self.tables:
            if t.name == name:
                return t
        raise KeyError(f"no table {name!r} (tables: {', '.join(t.name for t in self.tables)})")

    def get(self, name):
        try:
            return self[name]
        except KeyError:
            return None

    def by_base(self, base):
        """The per-rank tables of one kind: {rank: Table}."""
        return {t.rank: t for t in self.tables if t.base == base and t.per_rank}

    def __iter__(self):
        return iter(self.tables)

    def __len__(self):
        return len(self.tables)

    def close(self):
        if self._h is not None:
            _lib.free(self._h)
            self._h = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


def _analysis(name):
    def method(self, ranks=None, **options):
        return self.run(name, ranks=ranks, **options)

    method.__name__ = name.replace("-", "_")
    method.__doc__ = (
        f"`dyno analyze {name}`: options are its command-line options with '_' for '-' "
        f"(see `dyno analyze --help`); ranks: a list (default every rank). Returns a Result."
    )
    return method


class Trace:
    """A loaded trace set (a file, a directory of per-rank traces, or several
    files of one job).  Load options: rank, file_rank (HTA's {rank: file}),
    iterations ("3-5"), time_range ("START:END" us), keep_last_step,
    no_ns_rounding, fixed_classification, threads, huge_pages, load
    ("lazy": keep what the analyses run so far need, loading again when one
    needs more; "all": keep everything now)."""

    def __init__(self, inputs, **opts):
        if isinstance(inputs, (str, bytes)) or hasattr(inputs, "__fspath__"):
            inputs = [inputs]
        inputs = [str(x) if hasattr(x, "__fspath__") else x for x in inputs]
        fr = opts.pop("file_rank", None) or {}
        texts = _lib.options(opts) + [f"file_rank={path}:{rank}" for rank, path in fr.items()]
        self._h = _lib.load(inputs, texts)
        self.inputs = inputs
        w = _lib.trace_warnings(self._h)
        self.warnings = [x for x in w.splitlines() if x]

    def _handle(self):
        if self._h is None:
            raise DynoliteError("trace used after close()")
        return self._h

    @property
    def ranks(self):
        return _lib.trace_ranks(self._handle())

    @property
    def files(self):
        """{rank: path} of the loaded files."""
        return _lib.trace_files(self._handle())

    def run(self, analysis, ranks=None, test=None, **options):
        """Run one analysis by name ("temporal", "kernel-distribution",
        "summary", ...) with its options; test: the second Trace of diff."""
        opts = dict(options)
        if ranks is not None:
            opts["ranks"] = list(ranks)
        th = test._handle() if test is not None else 0
        res = Result(_lib.run(self._handle(), th, analysis, _lib.options(opts)))
        for t in res.tables:
            if t.partial:
                warnings.warn(f"dynolite: partial results: {t.partial}", stacklevel=3)
                break
        return res

    temporal = _analysis("temporal")
    idle = _analysis("idle")
    kernels = _analysis("kernels")
    kernel_distribution = _analysis("kernel-distribution")
    overlap = _analysis("overlap")
    launch = _analysis("launch")
    counters = _analysis("counters")
    annotations = _analysis("annotations")
    op_kernels = _analysis("op-kernels")
    critical_path = _analysis("critical-path")
    cupti = _analysis("cupti")
    patterns = _analysis("patterns")
    summary = _analysis("summary")

    def diff(self, test, ranks=None, **options):
        """`dyno analyze diff` with this trace as CONTROL and test as TEST."""
        return self.run("diff", ranks=ranks, test=test, **options)

    def events(self, kind="kernel", ranks=None):
        """The loaded events as a DataFrame (rank, index, cat, name, pid, tid,
        ts, dur, stream, correlation, external_id, index_correlation,
        iteration, bytes, memory_bw_gbps); kind: "all", "gpu", "cpu" or a
        category ("kernel", "gpu_memcpy", "cuda_runtime", "cpu_op", ...)."""
        opts = {"ranks": list(ranks)} if ranks is not None else {}
        with Result(_lib.events(self._handle(), kind, _lib.options(opts))) as r:
            return r.tables[0].to_pandas()

    def close(self):
        if self._h is not None:
            _lib.free(self._h)
            self._h = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


def load(path, **opts):
    """Load a trace file, a directory of per-rank traces, or a list of the
    files of one job; see Trace for the options."""
    return Trace(path, **opts)
