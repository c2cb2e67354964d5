"""A manifest without a field its kind's writer always records is refused, naming file and field.

Before, a missing `gpu`, `command` or `created_utc` was shown as "unknown" in the report, so a
hand-edited or damaged manifest read like a whole one. Each case removes one field from a copy of
a committed run of every kind; the fields left optional on purpose (integrity/manifest.py says
why) must still load.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers_damage import RUNS, SWEEP_KINDS, copy_run, edit_manifest

from l2attr.analysis.load import read_run
from l2attr.sweep.load import load_sweep
from l2attr.cli import main
from l2attr.errors import Damage, UserError
from l2attr.integrity.manifest import REQUIRED_BASE, REQUIRED_V2, required_fields


def _load(kind: str, run: Path, damage: Damage | None = None) -> Any:
    damage = damage or Damage()
    return load_sweep(run, damage) if kind in SWEEP_KINDS else read_run(run, damage)


def _drop(dotted: str):
    def edit(m: dict) -> None:
        *parents, leaf = dotted.split(".")
        for p in parents:
            m = m[p]
        del m[leaf]
    return edit


# what each committed kind must record, by hand from its writer (integrity/manifest.py)
BY_KIND = {"ladder": ("measure",), "timeline": ("ranges",), "profile": (), **{k: ("sweep",) for k in SWEEP_KINDS}}
CASES = [(kind, field) for kind in sorted(RUNS) for field in (*REQUIRED_BASE, *REQUIRED_V2, *BY_KIND[kind])
         if not (field in ("config", "kind") or (kind in SWEEP_KINDS and field == "sweep"))]
# (kind, config and a sweep's settings are refused earlier by the loaders, in lines of their own)


def test_the_required_fields_of_each_kind():
    for kind in RUNS:
        m = {"kind": "sweep" if kind in SWEEP_KINDS else kind, "schema_version": 2}
        assert set(required_fields(m)) == {*REQUIRED_BASE, *REQUIRED_V2, *BY_KIND[kind]}, kind


@pytest.mark.parametrize("kind, field", CASES, ids=[f"{k}-{f}" for k, f in CASES])
def test_a_missing_required_field_is_refused(kind: str, field: str, tmp_path: Path) -> None:
    run = copy_run(kind, tmp_path)
    edit_manifest(run, _drop(field))
    with pytest.raises(UserError) as err:
        _load(kind, run)
    msg = str(err.value)
    assert "\n" not in msg
    assert msg.startswith(f"{run}/manifest.json: {field} is missing; every "), msg


@pytest.mark.parametrize("kind", ["ladder", "profile", "amortisation"])
def test_a_null_required_field_is_refused_too(kind: str, tmp_path: Path) -> None:
    run = copy_run(kind, tmp_path)
    edit_manifest(run, lambda m: m.update(command=None))
    with pytest.raises(UserError, match="command is missing"):
        _load(kind, run)


@pytest.mark.parametrize("kind", ["ladder", "profile", "timeline", "hotset"])
def test_optional_fields_may_be_left_out(kind: str, tmp_path: Path) -> None:
    """No git checkout (a wheel): git sha and source digest are null; no driver recorded."""
    run = copy_run(kind, tmp_path)

    def edit(m: dict) -> None:
        m["versions"] = {"l2attr": m["versions"]["l2attr"], "git_sha": None, "source_digest": None}
        m["gpu"].pop("driver", None)
    edit_manifest(run, edit)
    assert _load(kind, run) is not None


def test_a_version_1_profile_run_may_lack_gpu_and_versions():
    """Version 1 profile runs predate copying the children's facts (profile/manifest.py
    child_facts); a version 1 ladder always recorded them."""
    assert "gpu.name" not in required_fields({"kind": "profile", "schema_version": 1})
    assert "gpu.name" in required_fields({"kind": "profile", "schema_version": 2})
    assert "gpu.name" in required_fields({"kind": "ladder", "schema_version": 1})


def test_an_nsys_timeline_needs_only_the_base_fields():
    """Its writer (nsys_timeline_manifest) starts no l2attr child whose gpu and versions it could copy."""
    assert required_fields({"kind": "timeline", "method": "nsys", "schema_version": 2}) == REQUIRED_BASE


def test_allow_partial_says_what_is_missing(tmp_path: Path) -> None:
    run = copy_run("ladder", tmp_path)
    edit_manifest(run, _drop("gpu"))
    damage = Damage(allow_partial=True)
    assert _load("ladder", run, damage) is not None
    assert any("gpu.name is missing" in m for m in damage.messages)


def test_the_report_refuses_in_one_line(tmp_path: Path, capsys) -> None:
    run = copy_run("ladder", tmp_path)
    edit_manifest(run, _drop("created_utc"))
    assert main(["report", str(run), "-o", str(tmp_path / "r.md")]) == 2
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    assert len(err) == 1 and "manifest.json: created_utc is missing" in err[0]
    assert not (tmp_path / "r.md").exists()
