#!/usr/bin/env python3
"""Checks a `dyno warehouse report --html` page (tests/integration/lib/warehouse.bash).

usage: wh_html_check.py PAGE full SLOW_KERNEL N_FLAGGED UNCHANGED_KERNEL
       wh_html_check.py PAGE job JOB
       wh_html_check.py PAGE empty

Every page: well formed (one <html>, every element closed in order), no
script or URL, every chart an <svg class="chart"> with data marks
(class="mark") that show (a dot, a bar, or a line 2 px long or more) and
no NaN coordinates.  full: the four sections with their
charts, the slow kernel in the regressions section with N_FLAGGED red dots
and a red bar among the top kernels, the unchanged kernel in the top
kernels and not in the regressions.  job: one job's page without
regressions and with its two trend charts.  empty: the page says there is
nothing to report and draws nothing.  Prints what is wrong; exit 1 then.
"""
import html
import re
import sys
from html.parser import HTMLParser

VOID = {"meta", "br", "hr", "img", "input", "link", "area", "base", "col", "embed", "source", "track", "wbr"}
RED = "#d62728"


class Tags(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.errors, self.count = [], [], {}

    def handle_starttag(self, tag, attrs):
        self.count[tag] = self.count.get(tag, 0) + 1
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.count[tag] = self.count.get(tag, 0) + 1

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> at line {self.getpos()[0]} closes <{self.stack[-1] if self.stack else ''}>")
        else:
            self.stack.pop()


def section(page, sid):
    """The text from <h2 id="sid"> to the next <h2 (or the end)."""
    at = page.find(f'<h2 id="{sid}">')
    if at < 0:
        return None
    end = page.find("<h2", at + 1)
    return page[at:] if end < 0 else page[at:end]


def charts(text):
    return re.findall(r'<svg class="chart".*?</svg>', text, re.S)


def visible(chart):
    """A mark one can see: a dot, a bar, or a line spanning 2 px or more (a
    polyline whose points all sit at one place draws nothing)."""
    if re.search(r'<(rect|circle)[^>]*class="mark"', chart):
        return True
    for pts in re.findall(r'<polyline class="mark"[^>]*points="([^"]*)"', chart):
        xy = [tuple(map(float, p.split(","))) for p in pts.split()]
        if xy and (max(x for x, _ in xy) - min(x for x, _ in xy) >= 2 or max(y for _, y in xy) - min(y for _, y in xy) >= 2):
            return True
    return False


def main():
    path, mode, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    page = open(path, encoding="utf-8").read()
    bad = []
    p = Tags()
    p.feed(page)
    p.close()
    bad += p.errors[:5]
    if p.stack:
        bad.append(f"unclosed at the end: {p.stack}")
    for tag in ("html", "head", "body", "main"):
        if p.count.get(tag) != 1:
            bad.append(f"{p.count.get(tag, 0)} <{tag}>")
    if page[: page.find("</head>")].count("<title>") != 1:
        bad.append("not one <title> in the head")
    if not page.startswith("<!DOCTYPE html>"):
        bad.append("no doctype")
    if "<script" in page or re.search(r'https?://(?!www\.w3\.org/2000/svg")', page):
        bad.append("the page loads something (script or URL)")
    all_charts = charts(page)
    if len(all_charts) != page.count("<svg"):
        bad.append("an <svg> that is not a chart")
    for i, c in enumerate(all_charts):
        label = re.search(r'aria-label="([^"]*)', c).group(1)
        if not re.search(r'<(polyline|rect|circle)[^>]*class="mark"', c):
            bad.append(f"chart {i} ({label}) has no data mark")
        elif not visible(c):
            bad.append(f"chart {i} ({label}): its marks do not show (a line of no length, no dot)")
        if re.search(r"\b(nan|inf)\b", c, re.I):
            bad.append(f"chart {i} ({label}): a NaN or infinite coordinate")
    if "No data for this chart" in page:
        bad.append("an empty chart frame")

    if mode == "empty":
        if "nothing to report" not in page:
            bad.append("the empty page does not say there is nothing to report")
        if all_charts or "<table" in page:
            bad.append("the empty page draws something")
    elif mode == "job":
        job = args[0]
        if f"Trace warehouse: job {html.escape(job)}" not in page:
            bad.append("not the job's page")
        reg, jobs = section(page, "regressions"), section(page, "jobs")
        if reg is None or "No kernel regressed" not in reg:
            bad.append("the job's page shows regressions")
        jc = charts(jobs or "")
        if len(jc) != 2 or any(c.count('<polyline class="mark"') != 1 for c in jc):
            bad.append(f"the job's trend: {len(jc)} charts, want 2 of one line each")
        for c in jc:
            if not visible(c):
                bad.append("the job's trend: a chart whose line does not show (every trace at one start?)")
    elif mode == "full":
        slow, n_flagged, unchanged = args[0], int(args[1]), args[2]
        if len(all_charts) < 5:
            bad.append(f"{len(all_charts)} charts, want >= 5")
        secs = {s: section(page, s) for s in ("regressions", "top-kernels", "by-type", "jobs")}
        for s, text in secs.items():
            if text is None:
                bad.append(f"no section {s}")
            elif not charts(text):
                bad.append(f"section {s} has no chart")
        reg = secs["regressions"] or ""
        top = secs["top-kernels"] or ""
        if html.escape(slow) not in reg:
            bad.append(f"{slow} is not in the regressions")
        red = len(re.findall(r'<circle class="mark"[^>]*fill="' + RED, reg))
        if red != n_flagged:
            bad.append(f"{red} regressed traces drawn in red, want {n_flagged}")
        if html.escape(unchanged) in reg:
            bad.append(f"the unchanged kernel {unchanged} is in the regressions")
        if html.escape(unchanged) not in top:
            bad.append(f"the top kernel {unchanged} is not among the top kernels")
        red_bars = re.findall(r'<rect class="mark"[^>]*fill="' + RED + r'"[^>]*><title>([^<]*) = ', top)
        if red_bars != [html.escape(slow)]:
            bad.append(f"red bars: {red_bars}, want the regressed kernel's")
        types = charts(secs["by-type"] or "")
        if types and types[0].count('<polyline class="mark"') < 2:
            bad.append("GPU time by type: fewer than 2 types drawn")
        jc = charts(secs["jobs"] or "")
        if len(jc) != 2 or any(c.count('<polyline class="mark"') != 2 for c in jc):
            bad.append(f"per-job trends: {len(jc)} charts, want 2 of two jobs each")
    else:
        bad.append(f"unknown mode {mode}")
    for b in bad:
        print(f"FAIL: {path}: {b}")
    if not bad:
        print(f"{path}: {mode} page ok, {len(all_charts)} charts with data marks")
    return 1 if bad else 0


sys.exit(main())
