#!/usr/bin/env python3
"""The step waterfall on made traces whose answer is known exactly
(tests/integration/insights_waterfall.sh).

One step of the made workload (times in us from the step's start B, one
host thread, tid 1, unless said):

    [0, 200)    enumerate(DataLoader)#... range, no operator: host gap 200
    [200, 400)  aten::conv2d, launching conv_kernel at 380: launch 200
    [400, 600)  conv_kernel on the GPU: busy 200
    [600, 700)  aten::item: cudaMemcpyAsync at 610 (Memcpy DtoH, pinned,
                [620, 625): busy 5) and cudaStreamSynchronize [630, 690):
                sync wait 20 + 75
    [700, 800)  aten::copy_: cudaMemcpyAsync [710, 790) of a pageable copy
                (Memcpy HtoD (Pageable -> Device) [720, 780)): copy wait
                20 (host, before) + 60 (GPU) + 20 (host, after)
    [800, 820)  nothing: host gap 20
    [820, 900)  aten::add_, launching add_kernel at 840: launch 30
    [850, 950)  add_kernel: busy 100
    [950, 1000) nothing: host gap 50

so a step is busy 305 + host gap 270 + launch 230 + sync 95 + copy 100 =
1000.  Variants: the steps as ProfilerStep#N ranges (the last one dropped,
HTA's rule), as Optimizer.step#... ranges (the steps are the spans between
their ends), as neither (the period of the kernel sequence), one step alone
(the whole trace: its GPU span), a second host
thread launching a kernel into the last gap (its state counts, not the
first thread's), python functions around the operators (with_stack=True:
named, the waterfall unchanged), two ranks.  Exact per step, and the findings ranked by
cost.  Usage: insight_made.py DYNO TMPDIR.
"""
import copy
import csv
import json
import os
import subprocess
import sys

DYNO, TMP = sys.argv[1], sys.argv[2]
failed = []
PARTS = ("gpu_busy", "exposed_comm", "host_gap", "launch_overhead", "sync_wait", "copy_wait", "unattributed")
WANT = {"gpu_busy": 305, "exposed_comm": 0, "host_gap": 270, "launch_overhead": 230, "sync_wait": 95,
        "copy_wait": 100, "unattributed": 0}


def check(name, ok, detail=""):
    print(("ok   " if ok else "FAIL ") + name + ("" if ok else ": " + detail))
    if not ok:
        failed.append(name)


class Trace:
    def __init__(self, rank=None):
        self.ev = []
        self.corr = 100
        self.rank = rank

    def x(self, cat, name, ts, dur, tid=1, **args):
        e = {"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": tid, "ts": ts, "dur": dur, "args": args}
        self.ev.append(e)
        return e

    def launch(self, call, ts, dur, gcat, gname, gts, gdur, tid=1, **gargs):
        self.corr += 1
        self.x("cuda_runtime", call, ts, dur, tid=tid, correlation=self.corr)
        self.ev.append({"ph": "X", "cat": gcat, "name": gname, "pid": 0, "tid": 7, "ts": gts, "dur": gdur,
                        "args": dict(gargs, stream=7, correlation=self.corr, device=0)})

    def step(self, b, second_thread=False, stacks=False):
        if stacks:  # with_stack=True: python functions around the operators
            self.x("python_function", "train.py(10): forward", b + 200, 200)
            self.x("python_function", "train.py(42): log_loss", b + 600, 100)
        self.x("user_annotation", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", b, 200)
        self.x("cpu_op", "aten::conv2d", b + 200, 200)
        self.launch("cudaLaunchKernel", b + 380, 10, "kernel", "conv_kernel", b + 400, 200)
        self.x("cpu_op", "aten::item", b + 600, 100)
        self.x("cpu_op", "aten::_local_scalar_dense", b + 601, 98)
        self.launch("cudaMemcpyAsync", b + 610, 10, "gpu_memcpy", "Memcpy DtoH (Device -> Pinned)", b + 620, 5,
                    bytes=4)
        self.x("cuda_runtime", "cudaStreamSynchronize", b + 630, 60)
        self.x("cpu_op", "aten::copy_", b + 700, 100)
        self.launch("cudaMemcpyAsync", b + 710, 80, "gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", b + 720, 60,
                    bytes=1 << 20)
        self.x("cpu_op", "aten::add_", b + 820, 80)
        self.launch("cudaLaunchKernel", b + 840, 8, "kernel", "add_kernel", b + 850, 100)
        if second_thread:
            self.x("cpu_op", "autograd::engine::evaluate_function: AddBackward0", b + 940, 50, tid=2)
            self.launch("cudaLaunchKernel", b + 980, 5, "kernel", "bwd_kernel", b + 990, 5, tid=2)

    def save(self, name):
        doc = {"schemaVersion": 1, "traceEvents": self.ev}
        if self.rank is not None:
            doc["distributedInfo"] = {"rank": self.rank, "world_size": 2, "backend": "nccl"}
        path = os.path.join(TMP, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            json.dump(doc, f)
        return path


def run(path):
    d = os.path.join(TMP, "out_" + os.path.basename(path).replace("/", "_"))
    os.makedirs(d, exist_ok=True)
    p = subprocess.run([DYNO, "analyze", "insights", path, "-q", "--csv-dir", d], capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"dyno exit {p.returncode}: {p.stderr}")
    out = {}
    for t in ("insight_waterfall", "insight_idle_causes", "insights"):
        with open(os.path.join(d, t + ".csv")) as f:
            out[t] = list(csv.DictReader(f))
    return out


def exact(name, out, nsteps, source, want=WANT, rank="0"):
    wf = [r for r in out["insight_waterfall"] if r["rank"] == rank]
    check(f"{name}: {nsteps} steps from {source}", len(wf) == nsteps and all(r["steps_from"] == source for r in wf),
          str([(r["step"], r["steps_from"]) for r in wf]))
    for r in wf:
        got = {k: float(r[k + "(us)"]) for k in PARTS}
        check(f"{name}: step {r['step']}: the waterfall is exact", got == {k: float(v) for k, v in want.items()} and
              float(r["dur(us)"]) == 1000, f"{got} of {r['dur(us)']}")


def base(nsteps, kind, **kw):
    t = Trace(kw.pop("rank", None))
    for k in range(nsteps):
        b = 1000 * k
        if kind == "steps":
            t.x("user_annotation", f"ProfilerStep#{k + 1}", b, 1000)
        elif kind == "optimizer":
            t.x("user_annotation", "Optimizer.step#SGD.step", b + 955, 40)
        t.step(b, **kw)
    return t


# ProfilerStep: 4 ranges, the last dropped (HTA) -> 3 steps
out = run(base(4, "steps").save("steps.json"))
exact("ProfilerStep", out, 3, "ProfilerStep")
causes = out["insight_idle_causes"]


def place(cause, where, detail=""):
    return sum(float(r["time(us)"]) for r in causes if r["cause"] == cause and r["where"] == where and
               r["detail"] == detail)


check("the host gap inside the DataLoader range is named by it",
      place("host_gap", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__") == 3 * 200,
      str([r for r in causes if r["cause"] == "host_gap"]))
check("the host gaps outside every range are named by the operators around them",
      place("host_gap", "", "between aten::copy_ and aten::add_") == 3 * 20 and
      place("host_gap", "", "between aten::add_ and aten::conv2d") == 2 * 50, str(causes))
check("launch overhead by operator", place("launch_overhead", "aten::conv2d") == 3 * 200 and
      place("launch_overhead", "aten::add_") == 3 * 30, str(causes))
check("sync wait: the call under its operator",
      place("sync_wait", "cudaStreamSynchronize", "aten::item") == 3 * 95, str(causes))
check("copy wait: the staging operator and the GPU's copy",
      place("copy_wait", "aten::copy_", "cudaMemcpyAsync") == 3 * 40 and place("copy_wait", "") == 3 * 60,
      str(causes))
rows = out["insights"]
order = [r["rule"] for r in rows if r["cost_ms_per_step"]]
# time lost first (host gap 270, launch 230, copy 100, sync 95 us per
# step), then the GPU's own work: conv_kernel, 200 us of every step
check("findings ranked by cost: host gap, launch, copy, sync; then the top kernel's own time",
      order == ["host-gap", "cpu-bound-launch", "pageable-copy", "sync-points", "top-kernels"], str(order))
costs = {r["rule"]: (float(r["cost_ms_per_step"]), float(r["cost_pct_of_step"]), r["cost_kind"]) for r in rows
         if r["cost_ms_per_step"]}
check("each finding's cost in ms per step and % of the step",
      costs == {"host-gap": (0.27, 27.0, "lost"), "cpu-bound-launch": (0.23, 23.0, "lost"),
                "pageable-copy": (0.1, 10.0, "lost"), "sync-points": (0.095, 9.5, "lost"),
                "top-kernels": (0.2, 20.0, "busy")} and all(r["cost_ms_per_step"] for r in rows), str(costs))
hg = [r for r in rows if r["rule"] == "host-gap"][0]
check("the host-gap finding names its largest place, with the DataLoader advice",
      hg["where"] == "inside enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__ [thread 1]" and
      "DataLoader(num_workers" in hg["recommendation"], hg["where"])

# the optimizer's ranges: 5 ends -> 4 steps, each from one end to the next
out = run(base(5, "optimizer").save("optimizer.json"))
exact("optimizer ranges", out, 4, "optimizer ranges")

# neither: the kernel sequence's period (conv_kernel once per step) -> 4 steps of 5
out = run(base(5, "none").save("period.json"))
exact("kernel period", out, 4, "kernel sequence period")

# nothing repeats: the whole trace as one span
t = Trace()
t.step(0)
out = run(t.save("one.json"))
wf = out["insight_waterfall"]
# (from the first GPU work to the end of the last: [400, 950) of the step)
check("one step: the whole trace, its GPU span", len(wf) == 1 and wf[0]["steps_from"] == "whole trace" and
      float(wf[0]["dur(us)"]) == 550 and float(wf[0]["host_gap(us)"]) == 20 and
      float(wf[0]["launch_overhead(us)"]) == 30 and float(wf[0]["gpu_busy(us)"]) == 305, str(wf))

# no PyTorch operators: a CUDA call outside every operator is the launch
t = Trace()
t.launch("cudaLaunchKernel", 0, 10, "kernel", "k", 20, 10)
t.launch("cudaLaunchKernel", 40, 10, "kernel", "k", 60, 10)
out = run(t.save("no_ops.json"))
wf = out["insight_waterfall"]
check("no operators: the runtime's launch call is launch overhead", len(wf) == 1 and
      [float(wf[0][k + "(us)"]) for k in ("dur", "gpu_busy", "launch_overhead", "host_gap")] == [50, 20, 10, 20] and
      [r["where"] for r in out["insight_idle_causes"] if r["cause"] == "launch_overhead"] == ["cudaLaunchKernel"],
      str(wf) + str(out["insight_idle_causes"]))

# a second thread launches into the last gap: its state (inside an operator)
want2 = dict(WANT, gpu_busy=310, launch_overhead=270, host_gap=225)
out = run(base(4, "steps", second_thread=True).save("threads.json"))
exact("two launching threads", out, 3, "ProfilerStep", want2)
causes = out["insight_idle_causes"]
check("the second thread's operator and thread id",
      [(r["where"], r["tid"], float(r["time(us)"])) for r in causes if r["tid"] == "2" and
       r["cause"] == "launch_overhead"] ==
      [("autograd::engine::evaluate_function: AddBackward0", "2", 3 * 40.0)], str(causes))

# with_stack=True: the python function around each operator is named, the
# waterfall does not change
out = run(base(4, "steps", stacks=True).save("stacks.json"))
exact("python stacks", out, 3, "ProfilerStep")
causes = out["insight_idle_causes"]
check("the python function around the sync and the operator",
      [(r["cause"], r["python"]) for r in causes if r["cause"] in ("sync_wait", "launch_overhead") and
       r["where"] in ("cudaStreamSynchronize", "aten::conv2d")] ==
      [("launch_overhead", "train.py(10): forward"), ("sync_wait", "train.py(42): log_loss")], str(causes))
sp = [r for r in out["insights"] if r["rule"] == "sync-points"]
check("the sync-points finding says where in the program",
      sp and sp[0]["where"] == "cudaStreamSynchronize under aten::item in train.py(42): log_loss [thread 1]",
      str(sp[:1]))

# two ranks, each exact
d = os.path.join(TMP, "job")
base(4, "steps", rank=0).save("job/rank0.json")
base(4, "steps", rank=1).save("job/rank1.json")
out = run(d)
for rank in ("0", "1"):
    exact(f"rank {rank} of two", out, 3, "ProfilerStep", rank=rank)
check("two ranks: a finding per rank", sorted(r["rank"] for r in out["insights"] if r["rule"] == "host-gap") ==
      ["0", "1"], str([(r["rule"], r["rank"]) for r in out["insights"]]))

print(f"{len(failed)} failed")
sys.exit(1 if failed else 0)
