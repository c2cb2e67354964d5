"""`import torch` is seconds of a process's start (issue 39): the CLI, the workload, the report and
the ladder's checks before its run never import it, and a ladder process imports it only once its
workloads and kernels are being built beside it (ladders/command.py head_start).

The subprocess tests put a `torch` package first on the path that writes where it was imported
from and then fails as a missing torch would: a command that imports torch leaves that record."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from l2attr.cli import main

REPO = Path(__file__).resolve().parents[1]

FAKE_TORCH = '''import os, traceback
with open(os.environ["FAKE_TORCH_LOG"], "a") as fh:
    fh.write("".join(traceback.format_stack()) + "\\n")
raise ImportError("torch (test): imported")
'''


@pytest.fixture
def fake_torch(tmp_path: Path):
    (tmp_path / "site" / "torch").mkdir(parents=True)
    (tmp_path / "site" / "torch" / "__init__.py").write_text(FAKE_TORCH)
    log = tmp_path / "torch_imported.log"
    # no device for cupy where it is installed: the ladder stops at its GPU check on any machine
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path / "site"), str(REPO)]),
           "FAKE_TORCH_LOG": str(log), "CUDA_VISIBLE_DEVICES": ""}

    def run(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, *argv], capture_output=True, text=True, cwd=tmp_path, env=env,
                              timeout=120)
    return SimpleNamespace(run=run, log=log)


SCRIPT = """import json, sys
from l2attr.cli import main
from l2attr.dlrm.config import WorkloadConfig
from l2attr.dlrm.workload import build_workload

def code(argv):
    try:
        return main(argv)
    except SystemExit as exc:       # --help
        return exc.code
out = sys.argv[1]
codes = [code(["--help"]), code(["ladder", "--help"]),
         code(["traces", "gen", "--profile", "reuse_high", "--lookups", "20000", "--out", out + "/t.txt"]),
         code(["report", sys.argv[2], "--format", "md", "-o", out + "/r.md"])]
build_workload(WorkloadConfig(tables=1, rows=100000, batches=2, batch_size=64, hot_rows=1000), profile="reuse_low")
codes.append(code(["ladder", "--out", out + "/runs", "--quiet"]))
print(json.dumps(codes))
"""


def test_the_cli_the_workload_the_report_and_the_ladders_checks_never_import_torch(fake_torch, tmp_path: Path) -> None:
    """One process (each import of l2attr costs a second): `l2attr --help`, `ladder --help`,
    `traces gen`, `report` of a ladder run, a workload built, and `l2attr ladder`, which
    stops at its GPU check (no device for cupy, or no cupy) with one line and exit 2, writing
    nothing: torch is installed (the fake) and never imported."""
    from helpers_rundirs import write_ladder_run

    run = write_ladder_run(tmp_path / "runs-in")          # a small ladder run (the report's path, quickly)
    d = fake_torch.run("-c", SCRIPT, str(tmp_path), str(run))
    assert d.returncode == 0, d.stderr[-3000:]
    assert __import__("json").loads(d.stdout.strip().splitlines()[-1]) == [0, 0, 0, 0, 2]
    last = d.stderr.strip().splitlines()[-1]
    assert last.startswith("l2attr ladder: error:") and ("cupy is not installed" in last or "no CUDA GPU" in last)
    assert (tmp_path / "t.txt").is_file() and (tmp_path / "r.md").is_file() and not (tmp_path / "runs").exists()
    assert not fake_torch.log.exists(), fake_torch.log.read_text()[-3000:]


def test_a_missing_torch_is_said_before_the_gpu_is_looked_for(tmp_path: Path) -> None:
    """Without torch installed the ladder's check says so, as before (find_spec, no import)."""
    import l2attr.gpu.runtime as runtime
    from l2attr.errors import UserError

    real = __import__("importlib.util").util.find_spec
    try:
        __import__("importlib.util").util.find_spec = lambda name, *a: None if name == "torch" else real(name, *a)
        with pytest.raises(UserError, match="torch is not installed"):
            runtime.require_gpu(import_torch=False)
    finally:
        __import__("importlib.util").util.find_spec = real


def test_the_ladder_imports_torch_after_its_head_start(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The order of a fresh ladder process (fakes for the GPU side): the GPU looked for without
    torch, the workload checked, workloads and kernels started, the tool versions asked for (a
    thread), then torch; run_ladder gets the head start."""
    import l2attr.ladders.command as ladder
    import l2attr.dlrm.measure.gpu as mgpu
    import l2attr.ladders.measure.run as runmod
    import l2attr.gpu.device as device
    import l2attr.gpu.runtime as runtime

    import threading

    order: list[str] = []
    got: dict = {}
    asked = threading.Event()     # the tool versions (subprocesses) are asked for beside the import

    def require_gpu(import_torch: bool = True) -> tuple[None, None]:
        if import_torch:
            asked.wait(5)
        order.append("torch" if import_torch else "gpu")
        return None, None

    def tool_versions() -> dict:
        order.append("versions")
        asked.set()
        return {"l2attr": "test"}
    monkeypatch.setattr(runtime, "require_gpu", require_gpu)
    monkeypatch.setattr(mgpu, "check_fits", lambda cfg: order.append("fits"))
    monkeypatch.setattr(ladder, "head_start", lambda cfg, opts: order.append("head start") or "AHEAD")
    monkeypatch.setattr(device, "gpu_facts", lambda: {"name": "fake"})
    monkeypatch.setattr(device, "tool_versions", tool_versions)
    monkeypatch.setattr(device, "module_versions", lambda: {"torch": "fake"})

    def run_ladder(cfg, opts, run, log=print, progress=None, ahead=None):
        got["ahead"] = ahead
        order.append("run")
        import pandas as pd
        return pd.DataFrame()
    monkeypatch.setattr(runmod, "run_ladder", run_ladder)
    monkeypatch.setattr(ladder, "ladder_tables", lambda cells: [], raising=False)
    from l2attr.ladders import section as show
    monkeypatch.setattr(show, "ladder_tables", lambda cells: [])
    monkeypatch.setattr(show, "break_even_lines", lambda *a: [])
    monkeypatch.setattr(show, "spread_lines", lambda *a: [])
    from l2attr.analysis import spread
    monkeypatch.setattr(spread, "launch_lag_effect", lambda *a: None)
    from l2attr.rundir import RunDir
    monkeypatch.setattr(RunDir, "read", lambda self, table: __import__("pandas").DataFrame())
    assert main(["ladder", "--out", str(tmp_path / "runs"), "--quiet"]) == 0
    assert order == ["gpu", "fits", "head start", "versions", "torch", "run"]
    assert got["ahead"] == "AHEAD"
    (run,) = (tmp_path / "runs").iterdir()
    m = __import__("json").loads((run / "manifest.json").read_text())
    assert m["head_start"] is True and m["timings"]["torch_import_s"] >= 0
    assert m["versions"] == {"l2attr": "test", "torch": "fake"}


def test_run_ladder_takes_over_a_head_start_of_its_own_profiles(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The head start's workloads are the run's when it names the run's profiles (nothing built
    twice) and its compile future reaches compile_and_check; one of other profiles is waited for
    and left unused."""
    from concurrent.futures import Future

    import test_measure_run as tm
    from l2attr.dlrm.measure import check as checkmod
    from l2attr.ladders.measure import run as runmod
    from l2attr.dlrm.measure.prefetch import HeadStart, WorkloadPrefetch
    from l2attr.rundir import RunDir

    made: dict = {}

    def gpu(*a, **k):
        made["gpu"] = tm.FakeGpu(*a, **k)
        tm.FakeKernels.gpu = made["gpu"]
        return made["gpu"]
    monkeypatch.setattr(runmod, "Gpu", gpu)
    monkeypatch.setattr(checkmod, "VariantKernels", tm.FakeKernels)
    monkeypatch.setattr(checkmod, "check_variant", lambda *a, **k: {"sum": 0.0})
    monkeypatch.setattr(checkmod, "check_real_data", lambda *a, **k: 0.0)
    from l2attr.ladders.measure import protocol
    monkeypatch.setattr(protocol, "reference_launch", lambda gpu, idx, t: (lambda: None))
    import numpy as np
    shape = (tm.CFG.warmup_batches + tm.CFG.batches, tm.CFG.tables, tm.CFG.batch_size * tm.CFG.pooling)
    workload = SimpleNamespace(indices=np.zeros(shape, dtype=np.int64), hot=np.arange(10), source={"name": "x"})
    built: list[str] = []
    import l2attr.dlrm.workload as wl
    monkeypatch.setattr(wl, "build_workload", lambda *a, **k: built.append("run") or workload)
    waited: list[object] = []
    real_cc = checkmod.compile_and_check
    monkeypatch.setattr(runmod, "compile_and_check",
                        lambda cfg, opts, timings, compiling=None, memo=None: waited.append(compiling)
                        or real_cc(cfg, opts, timings, compiling, memo))
    done: Future = Future()
    done.set_result(0)

    ahead = HeadStart(WorkloadPrefetch(lambda name: built.append(f"ahead {name}") or workload, ["random"], 1), done)
    runmod.run_ladder(tm.CFG, tm._opts(), RunDir.create(tmp_path, "a", {"kind": "ladder"}), log=lambda s: None, ahead=ahead)
    assert built == ["ahead random"] and waited == [done]

    built.clear(), waited.clear()
    other = HeadStart(WorkloadPrefetch(lambda name: built.append(f"ahead {name}") or workload, ["reuse_high"], 1), done)
    runmod.run_ladder(tm.CFG, tm._opts(), RunDir.create(tmp_path, "b", {"kind": "ladder"}), log=lambda s: None, ahead=other)
    assert built == ["ahead reuse_high", "run"] and waited == [None]
