#!/usr/bin/env bash
# Install the Debian 12 packages dynolite needs to build and test.
# Fast no-op when everything is present; needs root (or sudo) otherwise.
# This file is the single list of build/test dependencies: CI and `make`
# both go through it, so nothing has to be installed by hand.
set -euo pipefail

PKGS=(
	build-essential     # gcc, make
	clang               # second compiler, libFuzzer
	libclang-rt-14-dev  # sanitizer and fuzzer runtimes for clang
	zlib1g-dev          # gzip traces (written)
	libisal-dev         # gzip traces (read: ISA-L's igzip inflates ~3x as fast as zlib)
	cppcheck            # make lint
	clang-format        # make format
	procps              # ps/pgrep in integration tests
	libmicrohttpd-dev   # Prometheus endpoint of dynolog
	libcurl4-openssl-dev # OTLP push of dynolog
	prometheus          # integration test: a real Prometheus scrapes dynolog (and promtool)
	curl                # integration tests: HTTP requests to the daemon
	time                # GNU time: wall clock and peak RSS in bench/trace_bench.sh
	libbpf-dev          # gpusnoop: BPF loader (uprobes, ring buffer)
	bpftool             # gpusnoop: `bpftool gen skeleton` at build time
	libelf-dev          # libbpf's ELF reader (link time)
	libdw-dev           # gpusnoop: file:line symbolization from DWARF
	libstdc++6          # gpusnoop: C++ names demangled (__cxa_demangle, dlopen'ed)
	python3-numpy       # the Python package (python/, docs/python.md): columns as arrays
	python3-pandas      # ... HTA's DataFrames
	python3-plotly      # ... visualize=True figures
	python3-pytest      # ... its tests (tests/integration/python_api.sh)
	python3-pip         # make python: pip install ./python
	python3-setuptools  # ... its build backend (no build isolation: no PyPI)
	python3-wheel       # ... idem
	jupyter-nbconvert   # the HTA tutorial notebook run top to bottom (tests)
	python3-ipykernel   # ... its kernel
	chromium            # dyno report test: headless render, screenshot, DOM and console check
	libsqlite3-dev      # dyno warehouse: SQLite (header at build time; libsqlite3-0 dlopen'ed)
	libpq-dev           # dyno warehouse: PostgreSQL (header at build time; libpq5 dlopen'ed)
	sqlite3             # warehouse tests: SQL against the test database
	postgresql          # warehouse_pg test: a real PostgreSQL server (initdb, pg_ctl, psql)
)

missing=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}" >&2
SUDO=
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null || { echo "install-deps: need root to install: ${missing[*]}" >&2; exit 1; }
	SUDO=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
