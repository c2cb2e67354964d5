"""Issue 39's speed lines on the study page are the committed records' (tools/docgen/speed_record.py), and
the tool's one rule for a target, on values whose answer is known by hand."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools" / "docgen"))
spec = importlib.util.spec_from_file_location("speed_record", ROOT / "tools" / "docgen" / "speed_record.py")
speed_record = importlib.util.module_from_spec(spec)
spec.loader.exec_module(speed_record)

from doc_pages import between, text_with  # noqa: E402


def test_the_page_says_what_the_records_hold() -> None:
    page = text_with(speed_record.BEGIN)
    assert between(page, speed_record.BEGIN, speed_record.END) == speed_record.block(), \
        "python tools/docgen speed_record --write"


@pytest.mark.parametrize("value, target, word", [(11.99, 12.0, "within"), (12.0, 12.0, "within"),
                                                  (12.01, 12.0, "OVER"), (88.4, 60.0, "OVER")])
def test_a_target_is_met_at_or_under_it(value: float, target: float, word: str) -> None:
    assert speed_record.verdict(value, target) == word


def test_the_grid_line_is_one_process_or_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The grid's wall is one call's: two calls (a grid resumed) have no single wall to state."""
    call = {"wall_s": 100.0, "gpu": "G", "models": {"m": {"ncu_s": 60.0, "steps_s": 30.0, "steps": ["a", "b"]}}}
    grid = tmp_path / "grid_calls.jsonl"
    grid.write_text(json.dumps(call) + "\n")
    monkeypatch.setattr(speed_record, "GRID", grid)
    monkeypatch.setattr(speed_record, "ROOT", tmp_path)
    line = speed_record.grid_line()
    assert "2 steps" in line and "**100.0 s** (within the target of 600 s; ncu readings 60.0 s, steps 30.0 s" in line
    grid.write_text(json.dumps(call) + "\n" + json.dumps(call) + "\n")
    with pytest.raises(ValueError):
        speed_record.grid_line()


def test_bytecode_written_on_another_gpu_is_not_claimed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The exit line says the ladder read bytecode an earlier probe wrote: only for one GPU."""
    probe = {"exit_with_teardown_s": [0.5, 0.4, 0.6], "exit_without_teardown_s": [0.1, 0.2, 0.1],
             "import_torch_no_cache_s": [4.0, 1.0, 1.5]}
    for name, uuid in (("final", "GPU-a"), ("earlier", "GPU-a"), ("elsewhere", "GPU-b")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "exit_probe.json").write_text(json.dumps(probe))
        (tmp_path / name / "machine.log").write_text(f"NVIDIA H100, {uuid}, 580, 1980 MHz\ncommit x\n")
    monkeypatch.setattr(speed_record, "ROOT", tmp_path)
    line = speed_record.exit_line(tmp_path / "final", tmp_path / "earlier")
    assert "took 4.00 s and the next two 1.00–1.50 s" in line and "0.10–0.20 s without it" in line
    with pytest.raises(ValueError):
        speed_record.exit_line(tmp_path / "final", tmp_path / "elsewhere")


def test_the_newest_profile_record_ran_todays_default_command_lines() -> None:
    """The profile line calls its record's ncu command lines today's defaults: rebuilt from the
    code (argv of `l2attr profile --metrics l2` and `--timeline`, paths and interpreter as on the
    device), they equal those the record's manifests hold."""
    import tarfile

    from l2attr.cli import build_parser
    from l2attr.commands.profile import _settings
    from l2attr.dlrm.profile.plan import CONTROL_RUNG, child_command, make_plan
    from l2attr.names import NVTX_CALL_INCLUDE
    from l2attr.profile.metricsets import resolve_metrics
    from l2attr.profile.pmsampling import timeline_ncu_argv

    folder = speed_record.PROFILE_RECORD
    with tarfile.open(folder / "runs.tar.gz") as tar:       # <top>/<run>/manifest.json
        manifests = {m.name.split("/")[1]: json.load(tar.extractfile(m)) for m in tar.getmembers()
                     if m.name.count("/") == 2 and m.name.endswith("/manifest.json")}
    (prof,) = [m for name, m in manifests.items() if name.endswith("-profile")]
    (tl,) = [m for name, m in manifests.items() if name.endswith("-timeline")]
    recorded_sweep, recorded_tl = prof["jobs"][0]["argv"], tl["jobs"][0]["argv"]
    ncu, python = recorded_sweep[0], recorded_tl[recorded_tl.index("-f") + 1]
    run_dir = Path(recorded_sweep[recorded_sweep.index("-o") + 1]).parents[1]
    s = _settings(build_parser().parse_args(["profile", "--metrics", "l2"]))
    plan = make_plan(run_dir, s.cfg, s.rungs, s.profiles, s.calls_per_cell, resolve_metrics("l2", "gh100").metrics,
                     s.opts, ncu, s.control, s.control_profile, s.extra, python, s.control_family)
    assert plan.argv["sweep"] == recorded_sweep
    t = _settings(build_parser().parse_args(["profile", "--timeline"]))
    tl_dir = Path(recorded_tl[recorded_tl.index("-o") + 1]).parents[1]
    child = child_command(t.cfg, [CONTROL_RUNG], ["reuse_high"], "natural", 1, tl_dir / "child", "timeline",
                          [*t.extra, "--family", t.control_family, "--nvtx-calls"], python)
    assert timeline_ncu_argv(child, tl_dir / "ncu" / "timeline", ncu, NVTX_CALL_INCLUDE, chip="gh100",
                             section="L2attrTimeline", section_folder=tl_dir / "ncu" / "sections",
                             max_passes=t.pm_max_passes) == recorded_tl


def test_every_record_names_a_commit_of_this_history(tmp_path: Path) -> None:
    """A record's tree is a commit git knows (a mistyped COMMIT=... label is caught; machine.log's
    `tree X: why` line corrects one), and the correction line wins over the label."""
    import shutil
    import subprocess

    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("no git history here")
    for log in sorted((ROOT / "examples" / "logs" / "speed").glob("*/machine.log")):
        sha = speed_record._commit(log.parent)
        if sha == "?":
            continue
        found = subprocess.run(["git", "cat-file", "-e", f"{sha}^{{commit}}"], cwd=ROOT, capture_output=True)
        assert found.returncode == 0, f"{log.relative_to(ROOT)} names {sha}, not a commit here"
    (tmp_path / "machine.log").write_text("GPU, uuid\ncommit abc1234, 2026\ntree def5678: the label was wrong\n")
    assert speed_record._commit(tmp_path) == "def5678"


def _write_record(folder: Path, total: float, uuid: str, kernels: int = 0) -> None:
    folder.mkdir(parents=True)
    (folder / "machine.log").write_text(f"NVIDIA H100, {uuid}, 580, 1980 MHz\ncommit abc1234, 2026\n")
    (folder / "profile.json").write_text(json.dumps({"total_s": total, "target_s": 60.0, "control": "clear",
                                                     "passes": {"sweep.ncu-rep": {"kernels": kernels}}}))


def test_the_spread_line_counts_records_within_and_the_same_machine_twice(tmp_path: Path) -> None:
    """Hand numbers: 55 and 58 on one GPU, 61 on another: 2 of 3 within, 3 s apart on the one."""
    for name, total, uuid in (("a", 55.0, "GPU-1"), ("b", 58.0, "GPU-1"), ("c", 61.0, "GPU-2")):
        _write_record(tmp_path / name, total, uuid)
    line = speed_record.spread_line([tmp_path / n for n in "abc"])
    assert "2 of 3 records" in line and "on 2 GPUs, 55.0–61.0 s" in line and "differed by at most 3.0 s" in line
    alone = speed_record.spread_line([tmp_path / "a", tmp_path / "c"], "these lines")
    assert "1 of 2 records of these lines" in alone and "no machine ran it twice" in alone


def test_the_facts_page_says_what_the_one_replay_timeline_trial_measured() -> None:
    """docs/facts.md's figures of the timeline without ncu's range duration, read back from the
    trial's manifests: the ncu job's walls, the timestamped samples and the two durations."""
    import tarfile

    arms: dict[str, list[dict]] = {}
    with tarfile.open(speed_record.SPEED / "timeline_nodur" / "runs.tar.gz") as tar:
        for m in sorted(tar.getmembers(), key=lambda m: m.name):
            if m.name.endswith("/manifest.json"):
                arm = m.name.split("/")[-2].split("-", 1)[1].rstrip("12")
                arms.setdefault(arm, []).append(json.load(tar.extractfile(m)))

    def both(arm: str, f) -> str:
        return " and ".join(f(m) for m in arms[arm])
    wall = lambda m: f"{m['wall_s']['timeline']:.1f}"                                  # noqa: E731
    samples = lambda m: f"{m['ranges'][0]['instances'] - m['ranges'][0]['untimed']}"   # noqa: E731
    facts = " ".join((ROOT / "docs" / "facts.md").read_text().split())
    assert all(m["ranges"][0]["duration_us"] is None for m in arms["nodur"])
    assert f"its ncu job took {both('nodur', wall)} s against {both('dur', wall)} s" in facts
    assert f"at {both('nodur', samples)} samples against {both('dur', samples)}" in facts
    durations = both("dur", lambda m: f"{m['ranges'][0]['duration_us']:,.0f}")
    assert f"its two values were {durations} µs on the same range" in facts


def test_the_passes_line_reads_each_group_from_the_probe_summary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(speed_record, "ROOT", tmp_path)
    (tmp_path / "machine.log").write_text("NVIDIA H100, GPU-1, 580\ncommit abc1234\n")
    (tmp_path / "summary.log").write_text(
        "l2: exit 0, wall 7 s, passes 3, metrics a,b\nno_dram: exit 0, wall 7 s, passes 2, metrics a\n"
        "only_dram: exit 0, wall 2 s, passes 1, metrics b\nl2: ms per profiled launch, pass by pass: 1.0; sum 1.0\n")
    line = speed_record.passes_line(tmp_path)
    assert "the whole set 3; each group alone: dram 1; the set less any one group: 2." in line


def test_the_facts_page_says_what_the_pass_probe_measured() -> None:
    """docs/facts.md's paragraph on passes against the committed probe: lookups 3 alone, DRAM, fill
    and duration 1 each, the set 3 with or without any one group."""
    passes = speed_record.probe_passes(speed_record.SPEED / "pass_probe")
    assert passes["only_lookup"] == passes["only_evict_last"] == passes["l2"] == 3
    assert passes["only_dram"] == passes["only_fill"] == passes["only_duration"] == 1
    assert {v for k, v in passes.items() if k.startswith("no_")} == {3}
    facts = " ".join((ROOT / "docs" / "facts.md").read_text().split())
    assert "the L2 lookup counters take 3 passes by themselves" in facts
    assert "the DRAM bytes, the L2 fill and the duration take 1 pass each alone" in facts
    assert "The `l2` set takes 3, and so does the set less any one group" in facts


def test_the_family_line_compares_runs_of_one_gpu_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Hand numbers: 40 s for 100 kernels against 70 s for 200 on one GPU; another GPU is refused."""
    monkeypatch.setattr(speed_record, "ROOT", tmp_path)
    _write_record(tmp_path / "all", 70.0, "GPU-1", kernels=200)
    _write_record(tmp_path / "one", 40.0, "GPU-1", kernels=100)
    _write_record(tmp_path / "other", 40.0, "GPU-2", kernels=100)
    line = speed_record.family_line(tmp_path / "all", tmp_path / "one")
    assert "100 profiled kernels against 200" in line
    assert "**40.0 s** (within the target of 60 s) against 70.0 s for the default (OVER)" in line
    with pytest.raises(ValueError):
        speed_record.family_line(tmp_path / "all", tmp_path / "other")
