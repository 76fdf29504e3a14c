# calib.py LIBNVML - GPM pipe activities against known FLOP rates (bench/
# gpu_host.sh): one phase per kind of work (BF16/FP16/TF32/FP32/FP64/INT8/
# FP8 GEMMs, element-wise work, a BF16 training step), each a loop of known
# FLOPs timed between two GPM samples.  Prints per phase: the real TFLOP/s,
# the SM clock, what GPM reports (percent), and the phase's start and end
# (epoch seconds) so the daemon's published estimate can be averaged over it.
import ctypes, sys, time, threading
import torch
lib = ctypes.CDLL(sys.argv[1])
class Info(ctypes.Structure):
    _fields_ = [("s", ctypes.c_char_p), ("l", ctypes.c_char_p), ("u", ctypes.c_char_p)]
class Metric(ctypes.Structure):
    _fields_ = [("metricId", ctypes.c_uint), ("ret", ctypes.c_int), ("value", ctypes.c_double), ("info", Info)]
class Get(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint), ("numMetrics", ctypes.c_uint), ("s1", ctypes.c_void_p),
                ("s2", ctypes.c_void_p), ("metrics", Metric * 98)]
assert lib.nvmlInit_v2() == 0
h = ctypes.c_void_p()
assert lib.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(h)) == 0
s1, s2 = ctypes.c_void_p(), ctypes.c_void_p()
assert lib.nvmlGpmSampleAlloc(ctypes.byref(s1)) == 0 and lib.nvmlGpmSampleAlloc(ctypes.byref(s2)) == 0
IDS = [("sm", 2), ("any_tc", 5), ("dfma_tc", 6), ("hmma_tc", 7), ("imma_tc", 9), ("fp64", 11), ("fp32", 12), ("fp16", 13), ("int", 4), ("dram", 10)]
def clock():
    c = ctypes.c_uint()
    lib.nvmlDeviceGetClockInfo(h, 1, ctypes.byref(c))
    return c.value
def metrics():
    g = Get()
    g.version, g.numMetrics, g.s1, g.s2 = 1, len(IDS), s1, s2
    for i, (_, m) in enumerate(IDS):
        g.metrics[i].metricId = m
    r = lib.nvmlGpmMetricsGet(ctypes.byref(g))
    return {n: (g.metrics[i].value if g.metrics[i].ret == 0 else None) for i, (n, _) in enumerate(IDS)} if r == 0 else {"err": r}
dev = "cuda"
def mm(dtype, n):
    a = torch.randn(n, n, device=dev).to(dtype); b = torch.randn(n, n, device=dev).to(dtype)
    return (lambda: torch.mm(a, b)), 2.0 * n ** 3
def phase(name, fn, flop, secs=2.5):
    try:
        for _ in range(3):
            fn()
        torch.cuda.synchronize()
        lib.nvmlGpmSampleGet(h, s1); t0 = time.perf_counter(); e0 = time.time(); n = 0
        while time.perf_counter() - t0 < secs:
            fn(); n += 1
            if n % 50 == 0:
                torch.cuda.synchronize()
        torch.cuda.synchronize(); t1 = time.perf_counter(); mhz = clock(); lib.nvmlGpmSampleGet(h, s2)
        m = metrics()
        print("phase %-11s %.3f %.3f real %8.1f TF/s  %4d MHz  %s" % (name.replace(" ", "_"), e0, time.time(),
              n * flop / (t1 - t0) / 1e12, mhz, " ".join("%s=%s" % (k, "-" if v is None else "%.3f" % v) for k, v in m.items())),
              flush=True)
    except Exception as e:
        print("%-14s failed: %s" % (name, e), flush=True)
def idle():
    time.sleep(0.05)
phase("idle", idle, 0, 1.5)
phase("bf16 8192", *mm(torch.bfloat16, 8192))
phase("fp16 8192", *mm(torch.float16, 8192))
torch.backends.cuda.matmul.allow_tf32 = True
phase("tf32 8192", *mm(torch.float32, 8192))
torch.backends.cuda.matmul.allow_tf32 = False
phase("fp32 4096", *mm(torch.float32, 4096))
phase("fp64 4096", *mm(torch.float64, 4096))
a8 = torch.randint(-8, 8, (8192, 8192), device=dev, dtype=torch.int8); b8 = torch.randint(-8, 8, (8192, 8192), device=dev, dtype=torch.int8)
phase("int8 8192", lambda: torch._int_mm(a8, b8), 2.0 * 8192 ** 3)
f8a = torch.randn(8192, 8192, device=dev).to(torch.float8_e4m3fn); f8b = torch.randn(8192, 8192, device=dev).to(torch.float8_e4m3fn).t()
one = torch.tensor(1.0, device=dev)
phase("fp8 8192", lambda: torch._scaled_mm(f8a, f8b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16), 2.0 * 8192 ** 3)
x = torch.randn(1 << 28, device=dev, dtype=torch.bfloat16); z = torch.randn(1 << 28, device=dev, dtype=torch.bfloat16)
phase("bf16 axpy", lambda: torch.add(z, x, alpha=1.0001), 2.0 * (1 << 28))
xh = x.half(); zh = z.half()
phase("fp16 axpy", lambda: torch.add(zh, xh, alpha=1.0001), 2.0 * (1 << 28))
model = torch.nn.Sequential(torch.nn.Linear(4096, 8192), torch.nn.GELU(), torch.nn.Linear(8192, 4096)).to(dev, torch.bfloat16)
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
xin = torch.randn(4096, 4096, device=dev, dtype=torch.bfloat16)
def step():
    y = model(xin); loss = y.float().pow(2).mean(); loss.backward(); opt.step(); opt.zero_grad(set_to_none=True)
phase("bf16 train", step, 6 * 2.0 * 4096 * 4096 * 8192, 4)
