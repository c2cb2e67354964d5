"""tools/device.py's plan runner on the CPU with fake commands: a step past its budget is stopped
and said while the rest still runs and packs; what comes back is held to a call's limits; a
missing plan is one line and exit 2; the carried wheels' setting; every plan names files that exist."""

from __future__ import annotations

import io
import sys
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import device  # noqa: E402
import device_plans  # noqa: E402
import device_run  # noqa: E402

PY = sys.executable


def _ctx(tmp_path: Path, said: list[str], args: list[str] | None = None, gpu: str = "NVIDIA H100") -> device.Ctx:
    out = tmp_path / "out"
    (out / "logs").mkdir(parents=True)
    return device.Ctx(out=out, args=args or [], gpu=gpu, env={"PATH": "/usr/bin:/bin"}, say=said.append)


def test_a_step_past_its_budget_is_stopped_and_said_and_the_rest_still_runs_and_packs(tmp_path: Path) -> None:
    said: list[str] = []
    ctx = _ctx(tmp_path, said)
    plan = device.Plan("fake", (
        device.Step("sleeper", cmd=(PY, "-c", "print('started', flush=True); import time; time.sleep(30)"), budget=0.2),
        device.Step("writer", cmd=(PY, "-c", "import sys; open(sys.argv[1], 'w').write('x')", "{out}/made.txt"),
                    budget=20, need=1),
        device.Step("pack", call=device_plans.archive("back.tar.gz", "made.txt", "logs"), always=True),
    ), budget=60)
    assert device.run_plan(plan, ctx) == 1
    text = "\n".join(said)
    assert "device: sleeper stopped at its budget of 0 s" in text and "started" in text
    assert sorted(p.name for p in ctx.out.iterdir()) == ["back.tar.gz"]
    with tarfile.open(ctx.out / "back.tar.gz") as tar:
        assert {"made.txt", "logs/sleeper.log", "logs/writer.log"} <= set(tar.getnames())


def test_steps_that_do_not_fit_the_deadline_or_the_gpu_are_skipped_and_said(tmp_path: Path) -> None:
    said: list[str] = []
    ctx = _ctx(tmp_path, said, gpu="NVIDIA H100 80GB HBM3")
    plan = device.Plan("fake", (
        device.Step("h200 only", cmd=(PY, "-c", ""), when="H200"),
        device.Step("too long", cmd=(PY, "-c", ""), budget=100),
        device.Step("missing run", cmd=(PY, "-c", "", "{run:runs-b/*-speed-b}"), budget=5),
    ), budget=50)
    assert device.run_plan(plan, ctx) == 0
    text = "\n".join(said)
    assert "h200 only skipped: the GPU (NVIDIA H100 80GB HBM3) is not H200" in text
    assert "too long skipped: 0 s used of 50 s" in text and "missing run skipped: no run runs-b/*-speed-b" in text


def test_args_pass_through_or_the_step_s_defaults_stand(tmp_path: Path) -> None:
    step = device.Step("grid", cmd=("x", "--out", "{out}/grid", "{args}"), default_args=("--models", "llama"))
    assert device.argv_of(step, _ctx(tmp_path / "a", []))[3:] == ["--models", "llama"]
    ctx = _ctx(tmp_path / "b", [], args=["--models", "gpt2", "--repeats", "3"])
    assert device.argv_of(step, ctx) == ["x", "--out", f"{ctx.out}/grid", "--models", "gpt2", "--repeats", "3"]


def test_what_comes_back_is_held_to_a_call_s_limits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "out"
    for i in range(6):
        (out / "runs" / f"r{i}" / "child" / "0").mkdir(parents=True)
        (out / "runs" / f"r{i}" / "child" / "0" / "manifest.json").write_text("{}")
    for i in range(12):
        (out / f"f{i:02d}.json").write_text(str(i))
    (out / "logs").mkdir()
    (out / "logs" / "a.log").write_text("a")
    monkeypatch.setattr(device_run, "MAX_BYTES", 4)          # the runner holds the limits
    (out / "big.bin").write_bytes(b"0123456789")
    said: list[str] = []
    device.fit_limits(out, said.append)
    files = [p for p in out.rglob("*") if p.is_file()]
    assert len(files) <= device.MAX_FILES
    assert all(len(p.relative_to(out).parts) <= device.MAX_DEPTH for p in files)
    assert sorted(_leaves(out)) == sorted([*(f"runs/r{i}/child/0/manifest.json" for i in range(6)),
                                           *(f"f{i:02d}.json" for i in range(12)), "logs/a.log", "big.bin"])
    assert "device: big.bin is 0.0 MiB, over the 0 MiB a file may come back: it stays behind" in said


def _leaves(out: Path) -> list[str]:
    """Every file under OUT, archives opened (an archive may hold archives): nothing lost on the way."""
    found: list[str] = []

    def walk(name: str, data: bytes | None, path: Path | None) -> None:
        if not name.endswith(".tar.gz"):
            found.append(name)
            return
        with tarfile.open(path, "r:gz") if path else tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            for m in tar.getmembers():
                if m.isfile():
                    walk(m.name, tar.extractfile(m).read(), None)
    for p in sorted(out.rglob("*")):
        if p.is_file():
            walk(p.relative_to(out).as_posix(), None, p)
    return found


def test_a_missing_plan_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert device.main(["no-such-plan"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("device: no plan 'no-such-plan'; plans: gpu-tests, grid")


def test_the_carried_setting_without_and_with_a_packed_folder(tmp_path: Path) -> None:
    env = device.prepare(tmp_path, {"PYTHONDONTWRITEBYTECODE": "1", "PATH": "/bin"}, site=tmp_path / "site")
    assert env["PYTHONPATH"] == str(tmp_path) and env["PYTHONUNBUFFERED"] == "1"
    assert "PYTHONDONTWRITEBYTECODE" not in env and env["L2ATTR_DEVICE_DONTWRITEBYTECODE"] == "1"
    assert env["L2ATTR_CACHE_DIR"] == "/tmp/l2attr-cache"
    (tmp_path / ".whl").mkdir()
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text("X = 1\n")
    with tarfile.open(tmp_path / ".whl" / "pkg-min.tar.xz", "w:xz") as tar:
        tar.add(tmp_path / "pkg", arcname="pkg")
    env = device.prepare(tmp_path, {}, site=tmp_path / "site")
    assert env["PYTHONPATH"].split(":") == [str(tmp_path / "site"), str(tmp_path)]
    assert env["L2ATTR_DEVICE_DONTWRITEBYTECODE"] == "unset"
    assert (tmp_path / "site" / "pkg" / "mod.py").read_text() == "X = 1\n"


def test_every_plan_names_scripts_that_exist_and_packs_its_runs() -> None:
    for name, plan in device_plans.PLANS.items():
        for step in plan.steps:
            assert step.cmd or step.call, (name, step.name)
            scripts = [p for p in step.cmd if p.endswith(".py") and not p.startswith("{")]
            assert all((ROOT / s).is_file() for s in scripts), (name, step.name, scripts)
        assert plan.steps[-1].always or plan.steps[-1].cmd[:3] == device_plans.GPU_SUITE[:3], name


def test_the_grid_resumes_from_the_committed_grid_of_its_gpu_kind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """resume_grid copies the committed folder of the GPU's kind (runs, ncu caches; not the page or
    reports) into {out}/grid; a GPU of another kind starts empty."""
    root = tmp_path / "repo"
    home = root / "g100"
    (home / "run1").mkdir(parents=True)
    (home / "run1" / "manifest.json").write_text("{}")
    (home / "ncu").mkdir()
    (home / "ncu" / "m-write-back.csv").write_text("step\n")
    (home / "ncu" / "x.ncu-rep").write_text("big")
    (home / "README.md").write_text("page")
    monkeypatch.setattr(device_plans, "ROOT", root)
    monkeypatch.setattr(device_plans, "GRID_HOME", {"H200": "g200", "H100": "g100"})
    said: list[str] = []
    ctx = _ctx(tmp_path, said, gpu="NVIDIA H100 80GB HBM3")
    device_plans.resume_grid(ctx)
    got = sorted(str(p.relative_to(ctx.out / "grid")) for p in (ctx.out / "grid").rglob("*") if p.is_file())
    assert got == ["ncu/m-write-back.csv", "run1/manifest.json"] and said == ["resumed from g100"]
    other = _ctx(tmp_path / "b", [], gpu="NVIDIA H200")
    device_plans.resume_grid(other)
    assert not (other.out / "grid").exists()
