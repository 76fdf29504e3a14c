#!/usr/bin/env python3
"""insights on the real H200 traces with planted bottlenecks
(tests/integration/insights_h200.sh).

Usage: insight_h200.py DYNO DIR TMPDIR; prints one line per check, exits 1
when one failed.  Standard library only.

What is checked, per trace (`<workload>.steps` with ProfilerStep, `.span`
without: steps from the optimizer's ranges):
- every step's waterfall (insight_waterfall) adds up to its duration (1%);
- every finding has a cost: time lost first, largest first, then the GPU's
  own work (gpu-bound, top kernels), and the first is the rule of the
  largest idle part of the mean waterfall (or gpu-bound);
- the planted cause is a finding with its cost: dataloader and
  cpu_preprocess a host gap of at least 8 ms per step at one place before
  the forward; launch_bound launch overhead first; sync_bound a sync wait in
  cudaStreamSynchronize under aten::item; pageable_h2d a pageable copy of at
  least 5 ms per step; gpu_bound a gpu-bound finding and no host-gap,
  cpu-bound-launch, sync-points, pageable-copy or data finding;
- .span against .steps of the same workload: the same costed rules fire,
  and the planted cause's cost agrees within 10% (relative), in ms per
  step or as a share of the step (the two are separate recordings).
"""
import csv
import json
import os
import subprocess
import sys

DYNO, DIR, TMP = sys.argv[1], sys.argv[2], sys.argv[3]
failed = []
IDLE = {"exposed_comm": "exposed-comm", "host_gap": "host-gap", "launch_overhead": "cpu-bound-launch", "sync_wait": "sync-points",
        "copy_wait": "pageable-copy"}
PARTS = ("gpu_busy", "exposed_comm", "host_gap", "launch_overhead", "sync_wait", "copy_wait", "unattributed")
PLANTED = {"dataloader": "host-gap", "cpu_preprocess": "host-gap", "launch_bound": "cpu-bound-launch",
           "sync_bound": "sync-points", "pageable_h2d": "pageable-copy", "gpu_bound": "gpu-bound"}


def check(name, ok, detail=""):
    print(("ok   " if ok else "FAIL ") + name + ("" if ok else ": " + detail))
    if not ok:
        failed.append(name)


def run(path):
    d = os.path.join(TMP, os.path.basename(path))
    os.makedirs(d, exist_ok=True)
    p = subprocess.run([DYNO, "analyze", "insights", path, "-q", "-f", "json"], capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"dyno exit {p.returncode}: {p.stderr}")
    tables = {t["name"]: t for t in json.loads(p.stdout)}
    p = subprocess.run([DYNO, "analyze", "insights", path, "-q", "--csv-dir", d], capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"dyno exit {p.returncode}: {p.stderr}")
    with open(os.path.join(d, "insight_waterfall.csv")) as f:
        wf = list(csv.DictReader(f))
    return tables["insights"]["rows"], wf


def mean_parts(wf):
    """the waterfall's mean over the typical steps (as insights takes it)"""
    durs = sorted(float(r["dur(us)"]) for r in wf)
    n = len(durs)
    med = durs[n // 2] if n % 2 else (durs[n // 2 - 1] + durs[n // 2]) / 2
    rows = [r for r in wf if n < 4 or abs(float(r["dur(us)"]) - med) <= 0.25 * med]
    parts = {k: sum(float(r[k + "(us)"]) for r in rows) / len(rows)
             for k in PARTS}
    return parts, sum(float(r["dur(us)"]) for r in rows) / len(rows)


found = {}
for wl in PLANTED:
    for kind in ("steps", "span"):
        name = f"{wl}.{kind}"
        rows, wf = run(os.path.join(DIR, f"{name}.pt.trace.json.gz"))
        found[name] = rows
        check(f"{name}: steps from {'ProfilerStep' if kind == 'steps' else 'optimizer ranges'}",
              wf and all(r["steps_from"] == ("ProfilerStep" if kind == "steps" else "optimizer ranges") for r in wf)
              and len(wf) >= 4, str([(r["step"], r["steps_from"]) for r in wf]))
        bad = [r for r in wf if abs(sum(float(r[k + "(us)"]) for k in PARTS) - float(r["dur(us)"])) >
               0.01 * float(r["dur(us)"])]
        check(f"{name}: each step's waterfall adds up to its duration", not bad, str(bad[:1]))
        # time lost first, largest first; then the GPU's own work (busy);
        # then findings without a time cost (the host's metrics)
        kinds = [r["cost_kind"] for r in rows]
        lost = [r["cost_ms_per_step"] for r in rows if r["cost_kind"] == "lost"]
        busy = [r["cost_ms_per_step"] for r in rows if r["cost_kind"] == "busy"]
        check(f"{name}: findings ranked: time lost by cost, then GPU work by cost",
              kinds == sorted(kinds, key=lambda k: {"lost": 0, "busy": 1, "": 2}[k]) and
              lost == sorted(lost, reverse=True) and busy == sorted(busy, reverse=True) and
              all(r["cost_ms_per_step"] is not None for r in rows),
              str([(r["rule"], r["cost_kind"], r["cost_ms_per_step"]) for r in rows]))
        parts, step = mean_parts(wf)
        idle = max(IDLE, key=lambda k: parts[k])
        want = "gpu-bound" if parts["gpu_busy"] >= 0.9 * step else IDLE[idle]
        check(f"{name}: the first finding is the largest part ({want})", rows and rows[0]["rule"] == want,
              f"{[(r['rule'], r['cost_ms_per_step']) for r in rows]} parts {parts}")
        for r in rows:
            if r["rule"] in IDLE.values() and r["rule"] != "exposed-comm":
                k = [c for c, v in IDLE.items() if v == r["rule"]][0]
                check(f"{name}: {r['rule']} costs its waterfall part", abs(r["cost_ms_per_step"] * 1e3 - parts[k]) < 1
                      and abs(r["cost_pct_of_step"] - 100 * parts[k] / step) < 0.01,
                      f"{r['cost_ms_per_step']} ms, {r['cost_pct_of_step']}% vs {parts[k]} of {step}")
        planted = [r for r in rows if r["rule"] == PLANTED[wl]]
        check(f"{name}: the planted cause is a finding ({PLANTED[wl]})", len(planted) == 1,
              str([r["rule"] for r in rows]))
        if not planted:
            continue
        p = planted[0]
        if wl in ("dataloader", "cpu_preprocess"):
            check(f"{name}: host gap of >= 8 ms per step, its largest place before the forward's conv2d",
                  p["cost_ms_per_step"] >= 8 and p["where"].endswith("and aten::conv2d [thread 442]"),
                  f"{p['cost_ms_per_step']} {p['where']}")
        elif wl == "launch_bound":
            check(f"{name}: launch overhead is the first finding", rows[0]["rule"] == "cpu-bound-launch", rows[0]["rule"])
        elif wl == "sync_bound":
            check(f"{name}: the sync wait is in cudaStreamSynchronize under aten::item, with its small cost",
                  p["where"].startswith("cudaStreamSynchronize under aten::item") and 0 < p["cost_ms_per_step"] < 5,
                  f"{p['where']} {p['cost_ms_per_step']}")
        elif wl == "pageable_h2d":
            check(f"{name}: pageable copies cost >= 5 ms per step", p["cost_ms_per_step"] >= 5,
                  str(p["cost_ms_per_step"]))
        elif wl == "gpu_bound":
            bad = [r["rule"] for r in rows if r["rule"] in list(IDLE.values()) + ["memcpy-bandwidth"]]
            check(f"{name}: the control has no host, sync or input finding", not bad, str(bad))

for wl, rule in PLANTED.items():
    a, b = found[f"{wl}.steps"], found[f"{wl}.span"]
    ca = sorted(r["rule"] for r in a if r["cost_ms_per_step"] is not None and r["severity"] != "info")
    cb = sorted(r["rule"] for r in b if r["cost_ms_per_step"] is not None and r["severity"] != "info")
    if wl != "gpu_bound":
        check(f"{wl}: span and steps name the same costed causes", ca == cb, f"{ca} vs {cb}")
        pa = [r for r in a if r["rule"] == rule]
        pb = [r for r in b if r["rule"] == rule]
        if pa and pb:
            # two recordings: where their step times differ (launch_bound
            # 20.6 against 16.7 ms, pageable_h2d 60 against 51 ms) the ms of
            # the cause or its share of the step agree, not both
            x, y = pa[0]["cost_pct_of_step"], pb[0]["cost_pct_of_step"]
            u, v = pa[0]["cost_ms_per_step"], pb[0]["cost_ms_per_step"]
            check(f"{wl}: the planted cause's cost agrees within 10% (steps {u:.2f} ms {x:.1f}%, "
                  f"span {v:.2f} ms {y:.1f}%)", abs(x - y) <= 0.1 * max(x, y) or abs(u - v) <= 0.1 * max(u, v),
                  f"{u} ms {x}% vs {v} ms {y}%")
    else:
        check("gpu_bound: both traces say gpu-bound", [r["rule"] for r in a] == ["gpu-bound"] and
              [r["rule"] for r in b] == ["gpu-bound"], f"{[r['rule'] for r in a]} {[r['rule'] for r in b]}")

print(f"{len(failed)} failed")
sys.exit(1 if failed else 0)
