#!/usr/bin/env bash
# dyno report in a real browser: headless Chromium (Debian's, installed by
# scripts/install-deps.sh) opens the report of a two-rank job from a file://
# URL with the network and background services off (without those flags it
# waits for the network on a closed machine), takes a screenshot and dumps
# the DOM it rendered.  Every chart must be an SVG with data marks, the page
# must log no console message (the page has no script: any would be an
# error), the step waterfall must be the first chart, before the findings
# with their cost, and the screenshot must be a PNG of the window's size.  Skips
# (77) only when Chromium cannot run at all.
set -uo pipefail
src=$TESTDATA/traces/trace_filter
[ -d "$src" ] || { echo "no test traces in $TESTDATA"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
. "$(dirname "$0")/lib/chromium.bash"
chrome_probe || exit 77

"$DYNO" report "$src" -o "$tmp/r.html" -q; rc=$?
[ $rc -eq 0 ] || bad "dyno report exit $rc"
chrome dom --dump-dom "file://$tmp/r.html" >"$tmp/dom.html" || bad "chromium --dump-dom failed"
chrome shot --screenshot="$tmp/shot.png" --window-size=1000,2400 --hide-scrollbars "file://$tmp/r.html" \
	>/dev/null || bad "chromium --screenshot failed"
for l in dom shot; do
	if chrome_console "$l" >"$tmp/console"; then
		bad "console messages ($l): $(head -n 5 "$tmp/console")"
	fi
done
python3 - "$tmp/r.html" "$tmp/dom.html" "$tmp/shot.png" <<'PY' || fail=1
import re, struct, sys
src, dom, png = (open(sys.argv[1]).read(), open(sys.argv[2]).read(), open(sys.argv[3], "rb").read())
bad = []
svgs = re.findall(r'<svg class="chart".*?</svg>', dom, re.S)
want = src.count('<svg class="chart"')
if want < 8 or len(svgs) != want:
    bad.append(f"{len(svgs)} charts rendered, {want} in the page (want >= 8)")
for i, s in enumerate(svgs):
    marks = re.findall(r'<(polyline|rect|circle)[^>]*class="mark"', s)
    if not marks:
        label = re.search(r'aria-label="([^"]*)', s).group(1)
        bad.append(f"chart {i} ({label}) has no data mark")
    if re.search(r'points="\s*"', s) or re.search(r'width="0\.0"', s) and len(marks) < 2:
        bad.append(f"chart {i}: an empty mark")
    if "<text" not in s:
        bad.append(f"chart {i}: no axis text")
if "No data for this chart" in dom:
    bad.append("a chart without data in the two-rank report")
if "<script" in src or "http://" in src.replace('xmlns="http://www.w3.org/2000/svg"', "") or "https://" in src:
    bad.append("the page loads something (script or URL)")
if "Insights" not in dom or dom.find('id="insights"') > dom.find('id="gpu"'):
    bad.append("insights are not first")
# the page leads with the step waterfall, then the findings ranked by cost
first = re.search(r'aria-label="([^"]*)', svgs[0]).group(1) if svgs else ""
if not first.startswith("Step time by cause") or dom.find("Step time by cause") > dom.find('class="finding'):
    bad.append(f"the step waterfall is not the first chart, before the findings: {first}")
if "ms per step (" not in dom:
    bad.append("no finding says its cost per step")
if png[:8] != b"\x89PNG\r\n\x1a\n":
    bad.append("the screenshot is not a PNG")
else:
    w, h = struct.unpack(">II", png[16:24])
    if (w, h) != (1000, 2400) or len(png) < 20000:
        bad.append(f"screenshot {w}x{h}, {len(png)} bytes")
for b in bad:
    print("FAIL:", b)
print(f"{len(svgs)} charts rendered with data marks; screenshot {len(png)} bytes")
sys.exit(1 if bad else 0)
PY
exit $fail
