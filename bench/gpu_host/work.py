# work.py SECONDS - a small PyTorch training loop for bench/gpu_host.sh: a
# bf16 MLP with AdamW, user annotations, a D2H copy and a 4 MiB tensor kept
# (never freed) every 20 iterations, so that the GPU collector, the
# on-demand trace and gpusnoop each have something real to see.  Prints
# "ready PID ..." once the model is on the GPU, "done N iterations" at the end.
import os, sys, time
import torch
dur = float(sys.argv[1])
dev = "cuda"
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(4096, 8192), torch.nn.GELU(),
                            torch.nn.Linear(8192, 4096)).to(dev, torch.bfloat16)
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
x = torch.randn(4096, 4096, device=dev, dtype=torch.bfloat16)
kept = []
print("ready", os.getpid(), torch.__version__, torch.version.cuda, torch.cuda.get_device_name(0), flush=True)
t_end = time.time() + dur
i = 0
while time.time() < t_end:
    with torch.profiler.record_function("## forward ##"):
        y = model(x)
        loss = y.float().pow(2).mean()
    with torch.profiler.record_function("## backward ##"):
        loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    if i % 20 == 0:
        kept.append(torch.empty(1 << 20, device=dev))
        _ = y[:64].float().cpu()
    torch.cuda.synchronize()
    i += 1
print("done", i, "iterations", flush=True)
