#!/usr/bin/env bash
# doc_examples.sh - every command block of README.md and docs/*.md runs
# (tests/integration/lib/doc_examples.py): shell and Python examples, and
# transcripts whose shown output must be what the command prints.  A block
# that cannot run here (a GPU, a PyTorch job, a daemon on port 1778, a
# SLURM cluster) carries an explicit `<!-- doc-test: skip: WHY -->` marker;
# nothing is skipped silently (docs/testing.md "Doc examples").
set -uo pipefail
cd "$(dirname "$0")/../.."
W=$(mktemp -d /tmp/dyno-docs-XXXXXX)
trap 'rm -rf "$W"' EXIT
# the scratch directory: the tree's data visible, outputs written here
for d in tests data python; do ln -s "$PWD/$d" "$W/$d"; done
mkdir -p "$W/$(dirname "$BUILD")"
ln -s "$PWD/$BUILD" "$W/$BUILD" 2>/dev/null || true
# the sanitized library loads into python only with its runtimes first
if [ -e "$BUILD/libdynolite.so" ] && [ "$(nm -D "$BUILD/libdynolite.so" | grep -c __asan_)" -gt 0 ]; then
	export LD_PRELOAD="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so)"
	export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
fi
exec /usr/bin/python3 tests/integration/lib/doc_examples.py "$PWD" "$BUILD" "$W"
