"""`l2attr profile --workers`: the plan split into one ncu child per family x profile (the
validity control's arms folded into its family x profile child), the units on a real LocalCluster with a fake ncu unit that hands back a recorded
report, the lead laying them out as one-process runs do and importing them. Skips without Dask."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

pytest.importorskip("distributed")

from conftest import FIXTURES  # noqa: E402

from l2attr.cli import main  # noqa: E402
from l2attr.distribute.cluster import open_cluster  # noqa: E402
from l2attr.distribute.options import Distribute  # noqa: E402
from l2attr.distribute.profile import profile_on_workers, unit_jobs  # noqa: E402
from l2attr.distribute.where import where_am_i  # noqa: E402
from l2attr.dlrm.config import PRESETS  # noqa: E402
from l2attr.dlrm.declare import parse_families  # noqa: E402
from l2attr.dlrm.profile.plan import ProfileSettings  # noqa: E402
from l2attr.rundir import RunDir  # noqa: E402
from l2attr.schema import METRICS, UNITS  # noqa: E402

SLOTS = ("GPU-fake-0", "GPU-fake-1")
REPORT = FIXTURES / "ncu" / "evict_natural.ncu-rep"


def settings(tmp_path: Path, **kw) -> ProfileSettings:
    return ProfileSettings(cfg=PRESETS["small"], profiles=["reuse_high", "random"], out=tmp_path, ncu="/bin/true",
                           chip="gh100", validate_metrics=False, extra=["--family", "all"], **kw)


def test_the_plan_is_one_ncu_child_per_family_and_profile(tmp_path):
    jobs = {j.name: j for j in unit_jobs(tmp_path, settings(tmp_path), parse_families("all"))}
    assert sorted(jobs) == sorted([f"sweep-{f}-{p}" for f in ("artifact", "tuned", "fast")
                                   for p in ("reuse_high", "random")])
    # the control (the headline family's l2p_optmt on the hottest profile) runs in that unit's child
    control = list(jobs["sweep-artifact-reuse_high"].child)
    assert control.count("--extra-cell") == 2 and "artifact:l2p_optmt:reuse_high:flush_after_pin" in control
    assert "--extra-cell" not in jobs["sweep-tuned-reuse_high"].child
    fast = list(jobs["sweep-fast-random"].child)
    assert fast[fast.index("--rungs") + 1] == "optmt,l2p_optmt"       # the rungs the fast family has
    assert fast[fast.index("--profiles") + 1] == "random" and fast[-2:] == ["--family", "fast"]
    assert jobs["sweep-tuned-random"].output == tmp_path / "ncu" / "sweep-tuned-random"


def test_a_control_without_its_unit_is_refused(tmp_path):
    from l2attr.errors import UserError

    with pytest.raises(UserError, match="validity control .* has no unit"):
        unit_jobs(tmp_path, settings(tmp_path), parse_families("tuned"))      # control family: artifact


def test_dry_run_prints_the_units(monkeypatch, capsys):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", ",".join(SLOTS))
    assert main(["profile", "--workers", "2", "--dry-run", "--chip", "gh100", "--no-validate-metrics",
                 "--preset", "small", "--ncu", "/bin/true"]) == 0
    out = capsys.readouterr().out
    assert "[sweep-artifact-reuse_high]" in out and "[sweep-fast-random]" in out
    assert out.count("\n[") + out.startswith("[") == 12          # 3 families x 4 profiles, one ncu child each


def fake_ncu_unit(s, families, name, metrics, opts, ncu):
    """A worker's ncu unit without a GPU: a recorded report and a child manifest, as profile_unit returns."""
    start = time.time()
    time.sleep(0.2)
    child = {f"20261201T000000Z-{name}/manifest.json": b'{"gpu": {"name": "Fake GPU"}, "versions": {}}'}
    return {"returncode": 0, "wall_s": 0.2, "tail": "", "argv": [ncu, name], "report": REPORT.read_bytes(),
            "child": child, "log": [], "span": (where_am_i().gpu_uuid, start, time.time())}


class Log:
    def __init__(self):
        self.lines = []

    def line(self, text):
        self.lines.append(text)

    def rule(self, title):
        pass

    def stream(self, text):
        pass


def fake_probe(check, args):
    w = where_am_i()
    return {"where": w, "gpu": {"name": "Fake GPU", "chip": "gh100", "uuid": w.gpu_uuid}, "versions": {}, "check": None}


def test_profile_units_on_two_workers_land_as_one_process_lays_them_out(tmp_path):
    s = settings(tmp_path, metrics="duration", control_family="tuned")
    with open_cluster(Distribute(workers=2, slots=SLOTS), log=lambda x: None, prefer_cuda=False) as c:
        out = profile_on_workers(s, parse_families("tuned"), Distribute(workers=2, slots=SLOTS), Log(), client=c,
                                 unit_fn=fake_ncu_unit, probe_fn=fake_probe)
    run = RunDir(out.run)
    names = [j.name for j in out.plan.jobs]
    assert names == ["sweep-tuned-reuse_high", "sweep-tuned-random"]
    for n in names:
        assert (out.run / "ncu" / f"{n}.ncu-rep").read_bytes() == REPORT.read_bytes()
        assert (out.run / "child" / f"20261201T000000Z-{n}" / "manifest.json").is_file()
    units = run.read(UNITS)
    assert sorted(units["unit"]) == sorted(f"ncu:{n}" for n in names) and set(units["gpu_uuid"]) <= set(SLOTS)
    m = run.manifest()
    assert m["status"] == "done" and m["gpu"]["count"] == 2 and [j["name"] for j in m["jobs"]] == names
    assert not run.read(METRICS).empty
