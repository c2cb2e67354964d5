"""Runs combined in one report: one workload on one GPU, or a comparison said at the top — the
same rule for ladder, profile, timeline and sweep runs (issue 20)."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers_damage import copy_run, edit_manifest

from l2attr.cli import main
from l2attr.integrity.runs import combine, differences


def test_differences_name_config_and_gpu() -> None:
    a = {"config": {"rows": 500_000}, "gpu": {"name": "NVIDIA H200", "l2_bytes": 62914560}}
    b = {"config": {"rows": 100_000}, "gpu": {"name": "NVIDIA A100", "l2_bytes": 41943040}}
    assert differences(a, b) == ["rows: 500000 vs 100000", "gpu.l2_bytes: 62914560 vs 41943040",
                                 "gpu.name: 'NVIDIA H200' vs 'NVIDIA A100'"]
    assert differences(a, {**a, "gpu": {"name": "NVIDIA H200"}}) == []   # a fact one side lacks
    notes, differing = combine([("a", a), ("b", b)], allow_mixed=True)
    assert differing == {"b"} and "comparison" in notes[0]


@pytest.mark.parametrize("first, second", [("ladder", "amortisation"), ("amortisation", "ladder")])
def test_a_ladder_of_another_shape_beside_a_sweep(first: str, second: str, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """A 100K-row ladder with the 500K-row amortisation sweep, either order: refused; with
    --allow-mixed a comparison with the difference at the top, and the verdict does not quote
    the other workload's break-even."""
    runs = {k: copy_run(k, tmp_path) for k in ("ladder", "amortisation")}
    edit_manifest(runs["ladder"], lambda m: m["config"].update(rows=100_000))
    args = ["report", str(runs[first]), str(runs[second]), "--format", "md"]
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "rows: " in err and "--allow-mixed" in err
    assert main([*args, "--allow-mixed"]) == 0
    text = capsys.readouterr().out
    head = text[:text.index("**Verdict")]
    assert "differ in workload or GPU" in head and "rows: " in head
    assert "(l2attr sweep amortisation)" not in text


def test_the_same_shape_sweep_is_quoted_by_the_verdict(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Control for the test above: the untouched pair is one study, and the verdict quotes it."""
    ladder, sweep = copy_run("ladder", tmp_path), copy_run("amortisation", tmp_path)
    assert main(["report", str(ladder), str(sweep), "--format", "md"]) == 0
    text = capsys.readouterr().out
    assert "differ in workload or GPU" not in text


@pytest.mark.parametrize("other", ["profile", "timeline"])
def test_an_a100_ladder_with_an_h200_profile(other: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ladder, run = copy_run("ladder", tmp_path), copy_run(other, tmp_path)
    edit_manifest(ladder, lambda m: m["gpu"].update(name="NVIDIA A100-SXM4-40GB"))
    assert main(["report", str(ladder), str(run), "--format", "md"]) == 2
    err = capsys.readouterr().err
    assert "gpu.name: 'NVIDIA A100-SXM4-40GB' vs 'NVIDIA H200'" in err


def test_sweeps_alone_obey_the_same_rule(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = copy_run("capacity", tmp_path), copy_run("window", tmp_path)
    edit_manifest(b, lambda m: m["gpu"].update(name="NVIDIA A100"))
    assert main(["report", str(a), str(b), "--format", "md"]) == 2
    assert "gpu.name" in capsys.readouterr().err
    out = tmp_path / "s.html"
    assert main(["report", str(a), str(b), "--allow-mixed", "-o", str(out)]) == 0
    html = out.read_text()
    assert "Read this first" in html[:html.index("<main")] and "NVIDIA A100" in html[:html.index("<main")]


def test_two_gpus_of_one_kind_are_a_comparison_when_both_runs_record_their_uuid():
    """Identity includes the physical GPU where both manifests record it (older runs do not)."""
    import pytest

    from l2attr.errors import UserError
    from l2attr.integrity.runs import combine

    def m(uuid=None):
        gpu = {"name": "NVIDIA H200", "l2_bytes": 62914560, **({"uuid": uuid} if uuid else {})}
        return {"config": {"rows": 500000}, "gpu": gpu}

    assert combine([("a", m("GPU-1")), ("b", m("GPU-1"))], False) == ([], set())
    assert combine([("a", m("GPU-1")), ("b", m())], False) == ([], set())      # an older run: no uuid
    with pytest.raises(UserError, match="gpu.uuid"):
        combine([("a", m("GPU-1")), ("b", m("GPU-2"))], False)
    notes, differing = combine([("a", m("GPU-1")), ("b", m("GPU-2"))], True)
    assert differing == {"b"} and "comparison" in notes[0]
