"""The README's test command: two set-up commands on the first screen, the same test command in
.ci/run followed by the slow tests, and the benchmark's recorded figure of that very command."""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path

import pytest

try:
    import tomllib
except ImportError:                 # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("bench_tests", ROOT / "benchmarks" / "bench_tests.py")
bench_tests = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench_tests)

sys.path.insert(0, str(ROOT / "tools" / "docgen"))
from doc_pages import between, text_with  # noqa: E402

README = (ROOT / "README.md").read_text(encoding="utf-8")
CI = (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_first_screen_has_two_set_up_commands() -> None:
    block = README.split("```bash\n", 1)[1].split("```", 1)[0]
    commands = [line for line in block.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    assert len(commands) == 2, commands
    assert commands[1] == bench_tests.readme_test_line(README)
    assert '-m "not slow"' in commands[1]


def test_ci_runs_the_readme_command_then_the_slow_tests() -> None:
    lines = [line.strip() for line in CI.splitlines()]
    readme = bench_tests.readme_test_line(README)
    assert readme in lines, f".ci/run does not run the README's test command: {readme}"
    slow = [i for i, line in enumerate(lines) if line.startswith("python -m pytest") and "-m slow" in line]
    assert slow and slow[0] > lines.index(readme), ".ci/run must run `-m slow` after the README's command"


def test_the_slow_mark_is_registered() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    markers = pyproject["tool"]["pytest"]["ini_options"]["markers"]
    assert any(m.startswith("slow:") for m in markers)
    assert any(dep.startswith("pytest-xdist") for dep in pyproject["project"]["optional-dependencies"]["dev"])


def test_benchmark_block_is_the_recorded_run_of_this_command() -> None:
    if os.environ.get(bench_tests.BENCHMARKING):
        pytest.skip("inside benchmarks/bench_tests.py: the record is the one this run makes")
    record = json.loads(bench_tests.RECORD.read_text())
    assert record["command"] == bench_tests.test_command(README), "re-run benchmarks/bench_tests.py --record"
    page = text_with(bench_tests.BEGIN)       # the study page's benchmark list (tools/docgen/doc_pages.py)
    body = between(page, bench_tests.BEGIN, bench_tests.END)
    assert body == bench_tests.readme_block(record), "python benchmarks/bench_tests.py --readme --write"


def test_summary_line_parsing() -> None:
    assert bench_tests._summary("==== 7 passed, 2 skipped, 3 deselected in 81.20s (0:01:21) ====\n") == \
        "7 passed, 2 skipped, 3 deselected"
    assert bench_tests._summary("1 failed, 3 passed in 2.0s\n") == "1 failed, 3 passed"
    assert bench_tests._summary("collected nothing\n") == "no pytest summary line"


def test_the_block_keeps_quiet_and_loaded_runs_apart() -> None:
    run = {"wall_s": 50.0, "cpu_s": 90.0, "load_before": 0.5, "exit": 0, "summary": "9 passed"}
    record = {"command": "python -m pytest", "cores": 2, "date": "2026-12-02",
              "runs": [run, {**run, "wall_s": 60.0}, {**run, "load": 2, "wall_s": 200.0, "load_before": 2.4},
                       {**run, "load": 2, "wall_s": 210.0, "exit": 1, "summary": "1 failed, 8 passed"}]}
    block = bench_tests.readme_block(record)
    assert "`--repeat 2`, no added load: **50.0, 60.0 s** wall" in block
    assert "0 failed runs of 2" in block
    assert "`--repeat 2 --load 2`, 2 busy processes competing: **200.0, 210.0 s** wall" in block
    assert "load average 0.5–2.4 before each run), 1 failed run of 2, the last: 1 failed, 8 passed" in block


def test_the_host_probe_is_said_only_when_every_run_has_one(monkeypatch: pytest.MonkeyPatch) -> None:
    run = {"wall_s": 50.0, "cpu_s": 90.0, "load_before": 0.5, "exit": 0, "summary": "9 passed"}
    both = {"command": "python -m pytest", "cores": 2, "date": "2026-12-06",
            "runs": [{**run, "host_probe_s": 1.31}, {**run, "host_probe_s": 1.62}]}
    assert "before each run; host probe 1.31–1.62 s)" in bench_tests.readme_block(both)
    one = {**both, "runs": [run, {**run, "host_probe_s": 1.62}]}
    assert "host probe" not in bench_tests.readme_block(one)
    monkeypatch.setattr(bench_tests, "PROBE_ADDS", 1000)        # the loop itself, short
    assert 0 <= bench_tests.host_probe_s() < 1
