# launchy.py SECONDS - a launch- and allocation-heavy PyTorch training loop
# for bench/gpu_host.sh section 4b (gpusnoop's cost on a real loop, issue
# #37: ~35,000 allocations and ~35,000 launches a second on an H200): a
# deep MLP of small layers (many small kernels and tensors a step, the
# caching allocator busy), AdamW without foreach (a kernel per parameter).
# Prints "ready PID" once warm, then a line per step: "step END_S MS"
# (time.time() at its end, its duration in ms, after a synchronize), and
# "done N" at the end.  gpu_host.sh cuts the run into phases by time.
import os, sys, time
import torch

dur = float(sys.argv[1])
dev = "cuda"
torch.manual_seed(0)
layers = []
for _ in range(48):
    layers += [torch.nn.Linear(256, 256), torch.nn.GELU()]
model = torch.nn.Sequential(*layers).to(dev)
opt = torch.optim.AdamW(model.parameters(), lr=1e-4, foreach=False)
x = torch.randn(64, 256, device=dev)


def step():
    y = model(x)
    loss = y.pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)


for _ in range(20):  # warm: cuBLAS handles, the cache's segments
    step()
torch.cuda.synchronize()
print("ready", os.getpid(), flush=True)
t_end = time.time() + dur
n = 0
while time.time() < t_end:
    t0 = time.perf_counter()
    step()
    torch.cuda.synchronize()
    ms = (time.perf_counter() - t0) * 1e3
    print("step %.6f %.4f" % (time.time(), ms), flush=(n % 50 == 0))
    n += 1
print("done", n, flush=True)
