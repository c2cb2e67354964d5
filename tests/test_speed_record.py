"""Issue 39's speed lines on the study page are the committed records' (tools/speed_record.py), and
the tool's one rule for a target, on values whose answer is known by hand."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
spec = importlib.util.spec_from_file_location("speed_record", ROOT / "tools" / "speed_record.py")
speed_record = importlib.util.module_from_spec(spec)
spec.loader.exec_module(speed_record)

from doc_pages import between, text_with  # noqa: E402


def test_the_page_says_what_the_records_hold() -> None:
    page = text_with(speed_record.BEGIN)
    assert between(page, speed_record.BEGIN, speed_record.END) == speed_record.block(), \
        "python tools/speed_record.py --write"


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
