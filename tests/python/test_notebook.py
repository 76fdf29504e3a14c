"""HTA's tutorial notebook (tests/python/notebook/trace_analysis_demo.ipynb:
HTA's code cells, the import changed, the trace directory a copy of
tests/data/traces/trace_filter) runs top to bottom under `jupyter nbconvert
--execute` with Debian's ipykernel, and its cells did what they say (the
counter traces written, the frames shown)."""

import json
import os
import shutil
import subprocess

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.environ.get("DYNO_TESTDATA", os.path.join(HERE, "..", "data"))


def test_notebook_runs(tmp_path):
    if not shutil.which("jupyter"):
        pytest.skip("jupyter-nbconvert is not installed")
    shutil.copytree(os.path.join(DATA, "traces", "trace_filter"), tmp_path / "traces")
    nb = tmp_path / "demo.ipynb"
    shutil.copy(os.path.join(HERE, "notebook", "trace_analysis_demo.ipynb"), nb)
    import dynolite

    env = dict(os.environ)
    env["DYNOLITE_LIB"] = os.path.abspath(dynolite.LIB_PATH)
    # the kernel must import this package and its library, as the test does
    env["PYTHONPATH"] = os.pathsep.join(p for p in (env.get("PYTHONPATH"), os.path.join(HERE, "..", "..", "python")) if p)
    p = subprocess.run(
        ["jupyter", "nbconvert", "--to", "notebook", "--execute", "--ExecutePreprocessor.timeout=120",
         "--ExecutePreprocessor.kernel_name=python3", "--output", "done.ipynb", str(nb)],
        cwd=tmp_path, env=env, capture_output=True, text=True,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    done = json.load(open(tmp_path / "done.ipynb"))
    outs = [o for c in done["cells"] if c["cell_type"] == "code" for o in c.get("outputs", [])]
    assert not [o for o in outs if o.get("output_type") == "error"]
    shown = "".join("".join(o.get("data", {}).get("text/plain", [])) for o in outs)
    for want in ("idle_time_pctg", "COMMUNICATION", "comp_comm_overlap_pctg", "host_wait", "queue_length", "launch_delay"):
        assert want in shown, want
    # generate_trace_with_counters() wrote rank 0's trace with the counters
    assert os.path.exists(tmp_path / "traces" / "sampled_rank-0_with_counters.json.gz")
