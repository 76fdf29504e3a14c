"""Run the command blocks of README.md and docs/*.md (doc_examples.sh).

A command block is a fenced block marked ```sh / ```bash / ```python, or an
unmarked one whose first line starts with "$ " (a transcript: each "$ CMD"
line is run and its stdout must be the lines shown under it, trailing
blanks aside, a line "..." standing for any lines).  Every one runs, in a scratch directory where tests/, data/,
python/ and build/ of the source tree are visible and `dyno`, `dynolog` are
the built ones, unless the line just above its fence is a marker
(docs/testing.md "Doc examples"):

  <!-- doc-test: skip: WHY -->       not run; WHY is required
  <!-- doc-test: NAME=VALUE ... -->  run with each NAME (a placeholder such
                                     as TRACE_OR_DIR, or any text) replaced
                                     by VALUE; status=0,4 accepts those
                                     exit statuses of each command

A sh block runs line by line (a line ending in '\\' goes on), each line on
its own in bash -o pipefail; a python block runs whole in /usr/bin/python3
with the package of python/.  Prints one line per block; exits 1 when one
failed, 77 when only python blocks could not run (no pandas).
"""
import os
import re
import shlex
import signal
import subprocess
import sys

ROOT, BUILD, WORK = sys.argv[1], sys.argv[2], sys.argv[3]
MARK = re.compile(r"^<!--\s*doc-test:\s*(.*?)\s*-->\s*$")
FENCE = re.compile(r"^(\s*)```(\S*)\s*$")


def blocks(path):
    """(line number, language, text lines, marker text or None) of each block."""
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, lang = m.group(1), m.group(2)
        start = i
        body = []
        i += 1
        while i < len(lines) and not FENCE.match(lines[i]):
            body.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i])
            i += 1
        i += 1
        mark = MARK.match(lines[start - 1].strip()) if start > 0 else None
        yield start + 1, lang, body, mark.group(1) if mark else None


def is_command_block(lang, body):
    if lang in ("sh", "bash", "python"):
        return True
    first = next((b for b in body if b.strip()), "")
    return lang in ("", "console") and first.startswith("$ ")


def matches(got, exp):
    """got equals exp, where an exp line "..." stands for any lines (an
    output the doc shortens)."""
    if not exp:
        return not got
    if exp[0] == "...":
        return any(matches(got[i:], exp[1:]) for i in range(len(got) + 1))
    return bool(got) and got[0] == exp[0] and matches(got[1:], exp[1:])


def substitute(text, subs):
    for k in sorted(subs, key=len, reverse=True):
        text = text.replace(k, subs[k])
    return text


def logical_lines(body):
    out, cur = [], ""
    for b in body:
        if b.rstrip().endswith("\\"):
            cur += b.rstrip()[:-1] + " "
            continue
        cur += b
        if cur.strip() and not cur.strip().startswith("#"):
            out.append(cur)
        cur = ""
    return out


def env():
    e = dict(os.environ)
    e["PATH"] = os.path.join(ROOT, BUILD) + ":" + e.get("PATH", "")
    e["DYNOLITE_LIB"] = os.path.join(ROOT, BUILD, "libdynolite.so")
    e["PYTHONPATH"] = os.path.join(ROOT, "python")
    e["PYTHONDONTWRITEBYTECODE"] = "1"
    return e


def run(cmd, stdin=subprocess.DEVNULL):
    """cmd in its own session; whatever it left running (an example that
    starts something in the background) is killed with it."""
    p = subprocess.Popen(cmd, cwd=WORK, env=env(), stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, start_new_session=True)
    try:
        out, err = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        err += "\n(killed after 60 s)"
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    return subprocess.CompletedProcess(cmd, p.returncode, out, err)


def have_pandas():
    return run(["/usr/bin/python3", "-c", "import numpy, pandas"]).returncode == 0


def main():
    docs = ["README.md"] + sorted("docs/" + f for f in os.listdir(os.path.join(ROOT, "docs")) if f.endswith(".md"))
    failed = ran = skipped = 0
    no_python = []
    pandas = have_pandas()
    for doc in docs:
        for line, lang, body, mark in blocks(os.path.join(ROOT, doc)):
            if not is_command_block(lang, body):
                continue
            where = f"{doc}:{line}"
            subs, status = {}, {0}
            if mark is not None:
                if mark.startswith("skip"):
                    why = mark[4:].lstrip(":").strip()
                    if not why:
                        print(f"FAIL {where}: a doc-test skip marker without its reason")
                        failed += 1
                    else:
                        print(f"skip {where}: {why}")
                        skipped += 1
                    continue
                for tok in shlex.split(mark):
                    k, sep, v = tok.partition("=")
                    if not sep:
                        print(f"FAIL {where}: doc-test marker word '{tok}' is not NAME=VALUE")
                        failed += 1
                        continue
                    if k == "status":
                        status = {int(x) for x in v.split(",")}
                    else:
                        subs[k] = v
            errs = []
            if lang == "python":
                if not pandas:
                    no_python.append(where)
                    continue
                r = run(["/usr/bin/python3", "-c", substitute("\n".join(body), subs)])
                if r.returncode not in status:
                    errs.append(f"python exit {r.returncode}: {r.stderr.strip()[-600:]}")
            elif lang in ("sh", "bash"):
                for cmd in logical_lines(body):
                    cmd = substitute(cmd, subs)
                    r = run(["bash", "-o", "pipefail", "-c", cmd])
                    if r.returncode not in status:
                        errs.append(f"'{cmd.strip()}': exit {r.returncode}: {r.stderr.strip()[-400:]}")
            else:
                # a transcript: "$ CMD" then its output
                cmd, want = None, []
                for b in body + ["$ "]:
                    if b.startswith("$ "):
                        if cmd:
                            r = run(["bash", "-o", "pipefail", "-c", cmd])
                            got = [x.rstrip() for x in r.stdout.rstrip("\n").split("\n")]
                            exp = [x.rstrip() for x in want]
                            while exp and not exp[-1]:
                                exp.pop()
                            if r.returncode not in status:
                                errs.append(f"'{cmd}': exit {r.returncode}: {r.stderr.strip()[-400:]}")
                            elif not matches(got, exp):
                                diff = next(i for i in range(max(len(got), len(exp)))
                                            if i >= len(got) or i >= len(exp) or got[i] != exp[i])
                                errs.append(f"'{cmd}': output differs at line {diff + 1}:\n"
                                            f"      doc: {exp[diff] if diff < len(exp) else '(end)'}\n"
                                            f"      got: {got[diff] if diff < len(got) else '(end)'}")
                        cmd, want = substitute(b[2:].strip(), subs), []
                    else:
                        want.append(b)
            ran += 1
            if errs:
                failed += 1
                print(f"FAIL {where}:")
                for e in errs:
                    print("    " + e)
            else:
                print(f"ok   {where}")
    print(f"{ran} blocks run, {skipped} marked skip, {failed} failed"
          + (f", {len(no_python)} python blocks not run (no numpy/pandas): {' '.join(no_python)}" if no_python else ""))
    if failed:
        return 1
    return 77 if no_python else 0


sys.exit(main())
