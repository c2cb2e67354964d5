"""The readers' manifest models (manifest_model.py, issue 52 "closed models"): a field a
reader uses is typed there; a damaged one is one line (nothing checked it) or reads as absent (check_manifest
said it); a field no rule declares is kept and named on the page, never used."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest

from l2attr.analysis.load import load_runs
from l2attr.errors import UserError
from l2attr.integrity.manifest import undeclared
from l2attr.manifest_model import MODELS, declared, recorded, typed
from l2attr.report.provenance import run_facts

LADDER = Path(__file__).resolve().parents[1] / "examples" / "20261130T193129Z-bench"


def test_a_damaged_field_nothing_checked_is_one_line() -> None:
    with pytest.raises(UserError, match=r"^run/manifest.json: gpu.uuid must be a string or null \(found 5\)$"):
        typed({"kind": "ladder", "gpu": {"uuid": 5}}, "run/manifest.json")


def test_a_damaged_field_check_manifest_said_reads_as_absent() -> None:
    m = {"kind": "timeline", "gpu": {"name": "H100", "l2_bytes": -5}, "timings": {"a": math.nan, "b": 2},
         "ranges": [{"range": "r", "instances": 3}, 7, {"range": "", "untimed": 1.5}]}
    facts = typed(m)
    assert facts.gpu.name == "H100" and facts.gpu.l2_bytes is None and facts.timings == {"b": 2.0}
    assert [(r.range, r.instances, r.untimed) for r in facts.ranges] == [("r", 3, None), (None, None, None)]
    assert recorded(m, "gpu.l2_bytes", "absent") == "absent" and recorded(m, "gpu.name") == "H100"
    assert m["gpu"]["l2_bytes"] == -5           # the manifest itself is left as recorded


def test_every_kind_model_declares_what_its_readers_take() -> None:
    assert {"measure.timer", "measure.variants", "gpu.uuid", "unit_timings"} <= declared("ladder")
    assert {"replayer_passes", "metrics_collected", "jobs", "control"} <= declared("profile")
    assert {"ranges", "method"} <= declared("timeline")
    assert {"step.mode", "step.facts.hidden_size", "step.facts.compile", "edges_level", "edges_kernel_level",
            "surgery.control_us", "graph.natural"} <= declared("step")
    assert {"sweep.axis", "sweep.hot_rows", "checks", "real_data_checks", "variants", "workloads"} <= declared("sweep")
    assert set(MODELS) == {"ladder", "profile", "timeline", "step", "sweep"}


def test_a_field_no_rule_declares_is_named_on_the_page(tmp_path: Path) -> None:
    run = tmp_path / LADDER.name
    shutil.copytree(LADDER, run)
    intact = run_facts(load_runs([run]).runs[0])
    assert undeclared(json.loads((LADDER / "manifest.json").read_text())) == []
    assert "Fields no rule declares" not in [g for g, _ in intact.groups]
    manifest = json.loads((run / "manifest.json").read_text())
    manifest.update(banana=1, apple={"x": 2})
    (run / "manifest.json").write_text(json.dumps(manifest))
    facts = run_facts(load_runs([run]).runs[0])
    assert ("Fields no rule declares", "apple, banana") in [(g, f[0].value) for g, f in facts.groups]


def test_check_manifest_holds_a_run_to_the_readers_models(tmp_path: Path) -> None:
    run = tmp_path / LADDER.name
    shutil.copytree(LADDER, run)
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["unit_timings"] = {"ladder:a:b": {"measure_s": -1}}
    (run / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(UserError, match=r"manifest.json: unit_timings must be an object: unit -> \(phase -> a finite "
                       r"number of seconds >= 0\), or null \(found -1\)"):
        load_runs([run])


def test_the_step_model_is_the_step_options_written_fields() -> None:
    """The readers' `step` (manifest_model.StepSection) declares each field StepOptions writes, of the
    same types (steps/declare.py takes them from the model layer), and nothing a run never records."""
    from l2attr.manifest_model import StepSection
    from l2attr.steps.declare import StepOptions

    written = [k for k, f in StepOptions.model_fields.items()
               if (f.json_schema_extra or {}).get("manifest", True) is not False]   # type: ignore[union-attr]
    assert list(StepSection.model_fields) == written

    def takes(model: type, name: str, value: object) -> bool:
        try:
            model.model_validate({name: value})
        except (ValueError, UserError):        # pydantic's ValidationError is a ValueError
            return False
        return True
    for name in ("repeats", "repeats_asked", "max_repeats", "rounds", "warmup", "edges", "mode", "name"):
        for value in (-1, 0, 1, 2, 10 ** 9, 10 ** 9 + 1, True, 2.0, "2", "surgery", "graph", "odd", "a b", "s-1"):
            assert takes(StepSection, name, value) == takes(StepOptions, name, value), (name, value)


def test_a_damaged_step_or_sweep_field_is_one_line_or_absent() -> None:
    m = {"kind": "step", "step": {"name": "s", "repeats": 5, "facts": {"layers": 2.5, "model": "m"}},
         "surgery": {"control_us": [0.1, float("nan")], "graph_kernels": True}, "edges_kernel_level": "yes"}
    facts = typed(m)
    assert facts.step.repeats == 5 and facts.step.facts.layers is None and facts.step.facts.model == "m"
    assert facts.surgery.control_us == [0.1] and facts.surgery.graph_kernels is None
    assert facts.edges_kernel_level is None and facts.mode is None
    with pytest.raises(UserError, match=r"^run/manifest.json: sweep.hot_rows must be a list of hot-set sizes"):
        typed({"kind": "sweep", "sweep": {"hot_rows": ["x"]}}, "run/manifest.json")


STEP = Path(__file__).resolve().parents[1] / "examples" / "steps" / "runs" / "20261201T170613Z-selfcheck-quarter-l2-marked"
SWEEP = Path(__file__).resolve().parents[1] / "examples" / "20261130T215547Z-bench-window"
ODD = "Fields no rule declares (kept, not read): apple, banana."


def _with_odd_fields(run: Path, tmp: Path) -> Path:
    copy = tmp / run.name
    shutil.copytree(run, copy)
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest.update(banana=1, apple={"x": 2})
    (copy / "manifest.json").write_text(json.dumps(manifest))
    return copy


@pytest.mark.parametrize("run", [STEP, SWEEP], ids=["step", "sweep"])
def test_a_step_or_sweep_page_names_a_field_no_rule_declares(run: Path, tmp_path: Path) -> None:
    """The step's and the sweep's provenance (the step section's first line, the sweep chapter's run
    line; the HTML card's identity list, the chapter's run note) name what the model does not know."""
    from l2attr.cli import main

    assert undeclared(json.loads((run / "manifest.json").read_text())) == []
    assert main(["report", str(run), "--format", "md", "-o", str(tmp_path / "intact.md")]) == 0
    assert "Fields no rule declares" not in (tmp_path / "intact.md").read_text()
    odd = _with_odd_fields(run, tmp_path / "odd")
    assert main(["report", str(odd), "--format", "md", "-o", str(tmp_path / "odd.md")]) == 0
    assert ODD in (tmp_path / "odd.md").read_text()
    if run == STEP:
        from l2attr.steps.analyse.answer import analyse_step
        from l2attr.steps.section.html import card

        assert ("fields no rule declares (kept, not read)", "apple, banana") in card(analyse_step(odd), 0)["identity"]
    else:
        from l2attr.sweep.analyse.judge import analyse_sweep
        from l2attr.sweep.load import load_sweep
        from l2attr.sweep.section.html import section

        assert section(analyse_sweep(load_sweep(odd)), 0)[0]["undeclared"] == "apple, banana"
