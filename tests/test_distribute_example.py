"""examples/distribute/compare.txt is what tools/compare/runs.py makes of the two committed H200
runs beside it (one process, then --workers 1 on the same GPU): prose generated from the runs."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EX = ROOT / "examples" / "distribute"


def test_committed_comparison_is_what_the_runs_say():
    spec = importlib.util.spec_from_file_location("compare_runs", ROOT / "tools" / "compare" / "runs.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    one, workers = sorted(p for p in EX.iterdir() if (p / "manifest.json").is_file())
    assert one.name.endswith("-one") and workers.name.endswith("-workers1")
    text, _ = mod.lines(one, workers)
    assert "\n".join(text) + "\n" == (EX / "compare.txt").read_text()
