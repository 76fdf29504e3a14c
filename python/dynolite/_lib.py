"""The ctypes binding of libdynolite.so (src/lib/dynolite.h).

What it costs: one dlopen per process (numpy and pandas are imported on a
thread meanwhile, _deps.py); per call, the C call itself.  Columns
reach numpy as strided views of the engine's cells (np.ndarray over the
result's memory), copied once into the DataFrame; text columns arrive as one
NUL-separated buffer split by str.split, so no Python loop runs per row.

Where the library comes from, first match wins:
  1. $DYNOLITE_LIB (a path to libdynolite.so);
  2. libdynolite.so next to this file (``make python`` copies the one it built);
  3. build/libdynolite.so of the source tree this file lives in (a checkout).
"""

import ctypes
import os

from . import _deps

ABI = 1


class DynoliteError(RuntimeError):
    """An error of the engine, with its message (for a bad trace: the file and
    the byte offset)."""


class _Table(ctypes.Structure):
    _fields_ = [
        ("name", ctypes.c_char_p),
        ("base", ctypes.c_char_p),
        ("analysis", ctypes.c_char_p),
        ("rank", ctypes.c_int64),
        ("nrows", ctypes.c_uint64),
        ("ncols", ctypes.c_uint64),
        ("notes", ctypes.c_char_p),
        ("partial", ctypes.c_char_p),
        ("unavailable", ctypes.c_int32),
        ("per_rank", ctypes.c_int32),
    ]


class _Column(ctypes.Structure):
    _fields_ = [
        ("name", ctypes.c_char_p),
        ("type", ctypes.c_int32),
        ("int_text", ctypes.c_int32),
        ("data", ctypes.c_void_p),
        ("stride", ctypes.c_uint64),
        ("strings", ctypes.c_void_p),
        ("strings_len", ctypes.c_uint64),
        ("nulls", ctypes.c_void_p),
    ]


INT, FLOAT, STR = 0, 1, 2
_H = ctypes.c_uint64


def _candidates():
    env = os.environ.get("DYNOLITE_LIB")
    if env:
        return [env]
    here = os.path.dirname(os.path.abspath(__file__))
    return [
        os.path.join(here, "libdynolite.so"),
        os.path.join(os.path.dirname(os.path.dirname(here)), "build", "libdynolite.so"),
    ]


def _open():
    tried = []
    for path in _candidates():
        if not os.path.exists(path):
            tried.append(path + " (missing)")
            continue
        lib = ctypes.CDLL(path)
        break
    else:
        raise ImportError(
            "dynolite: libdynolite.so not found (run `make python`, or set DYNOLITE_LIB); tried: "
            + ", ".join(tried)
        )
    lib.dynolite_abi.restype = ctypes.c_int
    if lib.dynolite_abi() != ABI:
        raise ImportError(f"dynolite: {path} has ABI {lib.dynolite_abi()}, this package wants {ABI}")
    lib.dynolite_error.restype = ctypes.c_char_p
    lib.dynolite_version.restype = ctypes.c_char_p
    strs = ctypes.POINTER(ctypes.c_char_p)
    sig = {
        "dynolite_load": [strs, ctypes.c_size_t, strs, ctypes.c_size_t, ctypes.POINTER(_H)],
        "dynolite_trace_ranks": [_H, ctypes.POINTER(ctypes.c_int32), ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t)],
        "dynolite_trace_warnings": [_H, ctypes.POINTER(ctypes.c_char_p)],
        "dynolite_trace_files": [_H, ctypes.POINTER(ctypes.c_char_p)],
        "dynolite_run": [_H, _H, ctypes.c_char_p, strs, ctypes.c_size_t, ctypes.POINTER(_H)],
        "dynolite_events": [_H, ctypes.c_char_p, strs, ctypes.c_size_t, ctypes.POINTER(_H)],
        "dynolite_result_ntables": [_H, ctypes.POINTER(ctypes.c_size_t)],
        "dynolite_result_skipped": [_H, ctypes.POINTER(ctypes.c_char_p)],
        "dynolite_table": [_H, ctypes.c_size_t, ctypes.POINTER(_Table)],
        "dynolite_column": [_H, ctypes.c_size_t, ctypes.c_size_t, ctypes.POINTER(_Column)],
        "dynolite_free": [_H],
    }
    for name, args in sig.items():
        f = getattr(lib, name)
        f.argtypes = args
        f.restype = ctypes.c_int
    return lib, path


LIB, LIB_PATH = _open()
VERSION = LIB.dynolite_version().decode()


def _text(b):
    return b.decode("utf-8", "surrogateescape") if b is not None else None


def check(rc):
    if rc != 0:
        raise DynoliteError(_text(LIB.dynolite_error()))


def cstrings(items):
    items = [os.fsencode(x) if not isinstance(x, bytes) else x for x in items]
    return (ctypes.c_char_p * max(len(items), 1))(*items), len(items)


def options(d):
    """{"consecutive-kernel-delay": 30, "interval-stats": True} -> name=value texts."""
    out = []
    for k, v in d.items():
        if v is None:
            continue
        if isinstance(v, bool):
            v = "true" if v else "false"
        elif isinstance(v, (list, tuple)):
            v = ",".join(str(x) for x in v)
        out.append(f"{k}={v}")
    return out


def load(inputs, opts):
    arr, n = cstrings(inputs)
    oarr, no = cstrings(opts)
    h = _H()
    check(LIB.dynolite_load(arr, n, oarr, no, ctypes.byref(h)))
    return h.value


def run(trace, test, analysis, opts):
    oarr, no = cstrings(opts)
    h = _H()
    check(LIB.dynolite_run(trace, test or 0, analysis.encode(), oarr, no, ctypes.byref(h)))
    return h.value


def events(trace, kind, opts):
    oarr, no = cstrings(opts)
    h = _H()
    check(LIB.dynolite_events(trace, kind.encode() if kind else None, oarr, no, ctypes.byref(h)))
    return h.value


def free(h):
    check(LIB.dynolite_free(h))


def trace_ranks(h):
    n = ctypes.c_size_t()
    check(LIB.dynolite_trace_ranks(h, None, 0, ctypes.byref(n)))
    out = (ctypes.c_int32 * max(n.value, 1))()
    check(LIB.dynolite_trace_ranks(h, out, n.value, ctypes.byref(n)))
    return list(out[: n.value])


def _textcall(f, h):
    s = ctypes.c_char_p()
    check(f(h, ctypes.byref(s)))
    return _text(s.value) or ""


def trace_warnings(h):
    return _textcall(LIB.dynolite_trace_warnings, h)


def trace_files(h):
    out = {}
    for line in _textcall(LIB.dynolite_trace_files, h).splitlines():
        rank, path = line.split("\t", 1)
        out[int(rank)] = path
    return out


def result_skipped(h):
    return [tuple(x.split("\t", 1)) for x in _textcall(LIB.dynolite_result_skipped, h).splitlines()]


def result_tables(h):
    n = ctypes.c_size_t()
    check(LIB.dynolite_result_ntables(h, ctypes.byref(n)))
    out = []
    for i in range(n.value):
        t = _Table()
        check(LIB.dynolite_table(h, i, ctypes.byref(t)))
        out.append(
            dict(
                index=i,
                name=_text(t.name),
                base=_text(t.base),
                analysis=_text(t.analysis),
                rank=t.rank if t.per_rank else None,
                nrows=t.nrows,
                ncols=t.ncols,
                notes=_text(t.notes) or "",
                partial=_text(t.partial),
                unavailable=bool(t.unavailable),
                per_rank=bool(t.per_rank),
            )
        )
    return out


def column(h, table, col, nrows):
    """(name, type, int_text, numpy array or list of str/None), copied out of the engine."""
    np = _deps.numpy()
    c = _Column()
    check(LIB.dynolite_column(h, table, col, ctypes.byref(c)))
    name = _text(c.name)
    if c.type == STR:
        if nrows == 0:
            return name, STR, False, np.array([], dtype=object)
        blob = ctypes.string_at(c.strings, c.strings_len)
        vals = np.array(blob.decode("utf-8", "surrogateescape").split("\0")[:-1], dtype=object)
        if c.nulls:
            mask = np.ctypeslib.as_array(ctypes.cast(c.nulls, ctypes.POINTER(ctypes.c_uint8)), shape=(nrows,))
            vals[mask.astype(bool)] = None
        return name, STR, False, vals
    dtype = np.int64 if c.type == INT else np.float64
    if nrows == 0:
        return name, c.type, bool(c.int_text), np.array([], dtype=dtype)
    # the column in place: every stride bytes from the first row's cell
    span = (nrows - 1) * c.stride + 8
    buf = (ctypes.c_char * span).from_address(c.data)
    view = np.ndarray(shape=(nrows,), dtype=dtype, buffer=buf, strides=(c.stride,))
    return name, c.type, bool(c.int_text), view.copy()
