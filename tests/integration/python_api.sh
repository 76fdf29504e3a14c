#!/usr/bin/env bash
# python_api.sh - the Python package (python/dynolite over $BUILD/libdynolite.so)
# with Debian's python3 and pytest: HTA's frames on every conformance trace
# (tests/python/test_conformance.py), bad input and freed handles
# (test_api.py), HTA's tutorial notebook under nbconvert (test_notebook.py).
# Under SAN=1 the library is the ASan+UBSan build: the sanitizer runtimes are
# preloaded into python (a sanitized .so cannot load otherwise) and leak
# checking is off (CPython frees little at exit); any error report aborts
# the test (docs/python.md, docs/testing.md).
set -uo pipefail
PY=/usr/bin/python3
$PY -c 'import numpy, pandas, pytest' 2>/dev/null || { echo "Debian's python3-pandas/python3-pytest are not installed"; exit 77; }
export DYNOLITE_LIB=$PWD/$BUILD/libdynolite.so PYTHONPATH=$PWD/python PYTHONDONTWRITEBYTECODE=1
[ -e "$DYNOLITE_LIB" ] || { echo "FAIL: no $DYNOLITE_LIB"; exit 1; }
if [ "$(nm -D "$DYNOLITE_LIB" | grep -c __asan_)" -gt 0 ]; then
	export LD_PRELOAD="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so)"
	export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
fi
$PY -m pytest -q -p no:cacheprovider -c tests/python/pytest.ini tests/python
