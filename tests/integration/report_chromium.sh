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
# The bar charts' labels (Top kernels, Kernel duration across ranks, ...)
# are readable and distinct: each one lies inside the chart as Chromium
# lays it out (not cut at the left edge: a script added to a copy of the
# page measures every label's box and writes them into the DOM it dumps),
# and no two bars of a chart show the same text.
python3 - "$tmp/r.html" "$tmp/probe.html" <<'PY' || fail=1
import sys
page = open(sys.argv[1]).read()
probe = ('<script>const out = [];'
         'document.querySelectorAll("svg.chart").forEach((svg, i) => {'
         ' svg.querySelectorAll("text[text-anchor=end]").forEach(t => {'
         '  const b = t.getBBox();'
         '  const shown = Array.from(t.childNodes).filter(n => n.nodeType === 3).map(n => n.data).join("");'
         '  out.push(i + "\\t" + b.x.toFixed(1) + "\\t" + shown); }); });'
         'const pre = document.createElement("pre"); pre.id = "measure"; pre.textContent = out.join("\\n");'
         'document.body.appendChild(pre);</script>')
open(sys.argv[2], "w").write(page.replace("</body>", probe + "</body>"))
PY
chrome measure --dump-dom "file://$tmp/probe.html" >"$tmp/measure.html" || bad "chromium --dump-dom of the probe failed"
python3 - "$tmp/r.html" "$tmp/measure.html" <<'PY' || fail=1
import html, re, sys
src, dom = open(sys.argv[1]).read(), open(sys.argv[2]).read()
m = re.search(r'<pre id="measure">(.*?)</pre>', dom, re.S)
bad = []
if not m:
    bad.append("the probe measured nothing")
rows = [r.split("\t", 2) for r in html.unescape(m.group(1)).split("\n")] if m else []
for chart, x, text in rows:
    if float(x) < 0:
        bad.append(f"chart {chart}: label '{text}' starts at x={x}, cut at the chart's left edge")
# distinct labels per bar chart, and the kernel charts' labels are names
charts = re.findall(r'<svg class="chart".*?</svg>', src, re.S)
kernel_labels = 0
for i, c in enumerate(charts):
    name = re.search(r'aria-label="([^"]*)', c).group(1)
    shown = [html.unescape(t) for t in re.findall(r'<text[^>]*text-anchor="end"[^>]*><title>[^<]*</title>([^<]*)</text>', c)]
    dup = {t for t in shown if shown.count(t) > 1}
    if dup:
        bad.append(f"chart {i} ({name}): bars labelled alike: {sorted(dup)}")
    if "kernel" in name.lower():
        kernel_labels += len(shown)
        for t in shown:
            if t.endswith(")") or "(" in t:
                bad.append(f"chart {i} ({name}): label '{t}' shows a type or parameters, not the kernel's name")
if kernel_labels < 10:
    bad.append(f"{kernel_labels} kernel bar labels, want >= 10")
for b in bad[:20]:
    print("FAIL:", b)
print(f"{len(rows)} chart labels measured in Chromium; {kernel_labels} kernel labels distinct")
sys.exit(1 if bad else 0)
PY
exit $fail
