#!/usr/bin/env bash
# docs/daemon.md "Memory at the caps" is a sum, not an estimate (issue #35
# item 2): the first figure of each row's "worst case" cell (MiB or KiB)
# adds up to the figure of the **sum** row (to 0.1 MiB), and the sum stays
# under the packaged unit's MemoryMax=64M.  harden_memory_caps.sh measures
# the rows a test can fill on a real daemon (VmHWM plus the unreached
# remainder of the scaled caps).
set -euo pipefail
DOC=${DOC:-docs/daemon.md}
python3 - "$DOC" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
sec = text.split("## Memory at the caps", 1)[1].split("\n## ", 1)[0]
rows = [l for l in sec.splitlines() if l.startswith("| ") and not l.startswith("| structure") and not l.startswith("|---")]
fig = re.compile(r"([0-9]+(?:\.[0-9]+)?)\s*(MiB|KiB)")
total, stated = 0.0, None
for r in rows:
    cells = [c.strip() for c in r.strip().strip("|").split("|")]
    m = fig.search(cells[-1])
    if not m:
        sys.exit(f"no MiB/KiB figure in the worst case of: {cells[0]}")
    v = float(m.group(1)) / (1024 if m.group(2) == "KiB" else 1)
    if "**sum**" in cells[0]:
        stated = v
    else:
        total += v
        print(f"{v:7.2f} MiB  {cells[0][:70]}")
if stated is None:
    sys.exit("no **sum** row")
print(f"{total:7.2f} MiB  sum of the rows; the table says {stated} MiB")
assert abs(total - stated) <= 0.1, f"the sum row says {stated} MiB, the rows add up to {total:.2f} MiB"
assert total < 64, f"{total:.2f} MiB is over MemoryMax=64M"
PY
echo ok
