#!/usr/bin/env python3
"""agree.py METRICS.jsonl SMI.csv [GPU] - the daemon's GPU series beside
nvidia-smi's, sampled at the same time (bench/gpu_host.sh, section 5).

METRICS.jsonl: the daemon's JSON log (--json_format=jsonl).  SMI.csv:
`nvidia-smi --query-gpu=timestamp,index,utilization.gpu,memory.used,
power.draw,temperature.gpu,clocks.sm,clocks.mem[,memory.reserved]
--format=csv,noheader,nounits -lms 500`.  Each daemon tick at t covers the
interval before it: it is paired with the mean of nvidia-smi's samples in
(t - interval, t].  Prints, per metric, how many ticks were paired, both
medians, the median and largest absolute difference and the median ratio.
Not a test: figures for docs/metrics.md.
"""
import datetime
import json
import statistics
import sys

# label, daemon key, factor to nvidia-smi's unit, nvidia-smi column, unit
METRICS = [
    ("utilization", "gpu_device_utilization", 1.0, 2, "%"),
    ("memory used", "gpu_memory_used_bytes", 1.0 / 1048576, 3, "MiB"),
    ("power", "gpu_power_draw", 1.0, 4, "W"),
    ("temperature", "gpu_temperature_c", 1.0, 5, "C"),
    ("SM clock", "gpu_frequency_mhz", 1.0, 6, "MHz"),
    ("memory clock", "gpu_memory_frequency_mhz", 1.0, 7, "MHz"),
    ("memory reserved", "gpu_memory_reserved_bytes", 1.0 / 1048576, 8, "MiB"),
]


def smi_time(s):
    # nvidia-smi prints local time, "2026/11/28 05:57:17.123"
    return datetime.datetime.strptime(s.strip(), "%Y/%m/%d %H:%M:%S.%f").timestamp()


def number(s):
    try:
        return float(s)
    except ValueError:
        return None  # "[N/A]", "[Not Supported]"


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    gpu = sys.argv[3] if len(sys.argv) > 3 else "0"
    ticks = []
    for line in open(sys.argv[1]):
        try:
            d = json.loads(line)
            t = datetime.datetime.fromisoformat(d["time"].replace("Z", "+00:00")).timestamp()
        except (ValueError, KeyError):
            continue
        data = d.get("data", {})
        if "gpu_name." + gpu in data:
            ticks.append((t, data))
    samples = []
    for line in open(sys.argv[2]):
        f = [x.strip() for x in line.split(",")]
        if len(f) < 8 or f[1] != gpu:
            continue
        try:
            samples.append((smi_time(f[0]), f))
        except ValueError:
            continue
    if len(ticks) < 2 or not samples:
        print("agree: %d daemon ticks and %d nvidia-smi samples of GPU %s: nothing to compare"
              % (len(ticks), len(samples), gpu))
        return
    interval = statistics.median(b[0] - a[0] for a, b in zip(ticks, ticks[1:]))
    print("GPU %s: %d daemon ticks (every %.1f s), %d nvidia-smi samples" % (gpu, len(ticks), interval, len(samples)))
    print("%-16s %5s %12s %12s %12s %12s %8s" % ("metric", "ticks", "daemon med", "smi med", "med |diff|",
                                                 "max |diff|", "ratio"))
    for label, key, mul, col, unit in METRICS:
        pairs = []
        for t, data in ticks:
            v = data.get(key + "." + gpu)
            if not isinstance(v, (int, float)):
                continue
            s = [number(f[col]) for ts, f in samples if t - interval < ts <= t and len(f) > col]
            s = [x for x in s if x is not None]
            if s:
                pairs.append((v * mul, sum(s) / len(s)))
        if not pairs:
            print("%-16s %5d   (absent on one side)" % (label, 0))
            continue
        diff = [abs(a - b) for a, b in pairs]
        ratio = [a / b for a, b in pairs if b]
        print("%-16s %5d %12.1f %12.1f %12.2f %12.2f %8s  %s" % (
            label, len(pairs), statistics.median(a for a, _ in pairs), statistics.median(b for _, b in pairs),
            statistics.median(diff), max(diff), "%.3f" % statistics.median(ratio) if ratio else "-", unit))


if __name__ == "__main__":
    main()
