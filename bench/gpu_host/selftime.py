#!/usr/bin/env python3
"""selftime.py METRICS.jsonl - the GPU collector's own cost per tick, from
its self-metrics in the daemon's JSON log (bench/gpu_host.sh, section 6):
nvml_tick_cpu_ns (the worker thread's CPU for a tick) against the target of
issue #38 (at most 2 ms of CPU per GPU per tick), and nvml_call_ns.<entry
point> (wall time in each NVML entry point, all devices summed), largest
first.  The first tick is left out: it holds nvmlInit and the device
discovery.  Not a test: figures for docs/metrics.md.
"""
import json
import statistics
import sys


def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))]


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    cpu, calls, gpus = [], {}, 0
    first = True
    for line in open(sys.argv[1]):
        try:
            data = json.loads(line).get("data", {})
        except ValueError:
            continue
        if "nvml_tick_cpu_ns" not in data:
            continue
        if first:  # nvmlInit and the discovery
            first = False
            continue
        gpus = max(gpus, sum(1 for k in data if k.startswith("gpu_name.") and "/" not in k))
        cpu.append(data["nvml_tick_cpu_ns"] / 1e6)
        for k, v in data.items():
            if k.startswith("nvml_call_ns."):
                calls.setdefault(k[len("nvml_call_ns."):], []).append(v / 1e3)
    if not cpu:
        print("selftime: no nvml_tick_cpu_ns in %s (GPU monitor off, or a daemon before issue #38)" % sys.argv[1])
        return
    per_gpu = statistics.median(cpu) / max(gpus, 1)
    print("collector CPU per tick (worker thread), %d ticks, %d GPU%s: median %.3f ms, p90 %.3f ms, max %.3f ms"
          % (len(cpu), gpus, "" if gpus == 1 else "s", statistics.median(cpu), pct(cpu, 0.9), max(cpu)))
    print("per GPU: %.3f ms a tick (issue #38's target: at most 2 ms) -> %s"
          % (per_gpu, "within" if per_gpu <= 2.0 else "OVER"))
    total = sum(statistics.median(v) for v in calls.values())
    print("%-44s %6s %10s %10s %7s" % ("entry point (wall, all GPUs)", "ticks", "median us", "max us", "share"))
    for name, v in sorted(calls.items(), key=lambda kv: -statistics.median(kv[1])):
        m = statistics.median(v)
        print("%-44s %6d %10.1f %10.1f %6.1f%%" % (name, len(v), m, max(v), 100 * m / total if total else 0))
    print("%-44s %6s %10.1f" % ("sum of the medians", "", total))


if __name__ == "__main__":
    main()
