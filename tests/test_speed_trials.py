"""Issue 39's trials: tools/compare/timelines.py's rule on hand-made timelines, and the figures
docs/facts.md states of the H100 trials (examples/logs/speed/trials/) read back from that record."""

from __future__ import annotations

import gzip
import importlib.util
import json
import re
import tarfile
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
TRIALS = ROOT / "examples" / "logs" / "speed" / "trials"
spec = importlib.util.spec_from_file_location("compare_timeline", ROOT / "tools" / "compare" / "timelines.py")
compare_timeline = importlib.util.module_from_spec(spec)
spec.loader.exec_module(compare_timeline)


def _run(folder: Path, samples: dict[str, int], phases: tuple[str, ...]) -> Path:
    folder.mkdir()
    rows = [{"range": "r", "quantity": q, "t_us": float(i), "value": 1.0, "unit": "%", "metric": "m"}
            for q, n in samples.items() for i in range(n)]
    pd.DataFrame(rows).to_csv(folder / "timeline.csv", index=False)
    pd.DataFrame([{"range": "r", "phase": p, "start_us": 0.0, "end_us": 2.0, "duration_us": 2.0, "samples": 2}
                  for p in phases]).to_csv(folder / "phases.csv", index=False)
    return folder


def test_a_timeline_holds_when_every_quantity_keeps_half_its_samples_and_every_phase(tmp_path: Path) -> None:
    all3 = ("pin", "gap", "consumer")
    old = _run(tmp_path / "old", {"a": 10, "b": 10}, all3)
    assert compare_timeline.compare(_run(tmp_path / "half", {"a": 5, "b": 10}, all3), old)["holds"]
    thin = compare_timeline.compare(_run(tmp_path / "thin", {"a": 4, "b": 10}, all3), old)
    assert thin["thin_or_lost"] == ["a"] and not thin["holds"]
    lost = compare_timeline.compare(_run(tmp_path / "lost", {"a": 10}, ("pin", "consumer")), old)
    assert lost["thin_or_lost"] == ["b"] and lost["phases_missing"] == ["gap"]


@pytest.mark.parametrize("timeline", ["", "quantity,t_us\nl2,1\n", "\"unclosed\n", None])
def test_a_malformed_timeline_gets_one_line_and_exit_2(tmp_path: Path, capsys, timeline: str) -> None:
    all3 = ("pin", "gap", "consumer")
    old = _run(tmp_path / "old", {"a": 10}, all3)
    bad = _run(tmp_path / "bad", {"a": 10}, all3)
    if timeline is None:
        (bad / "timeline.csv").unlink()                 # missing
    else:
        (bad / "timeline.csv").write_text(timeline)
    assert compare_timeline.main([str(bad), str(old)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("compare_timeline: ") and "timeline.csv" in err[0]


def _facts() -> str:
    return (ROOT / "docs" / "facts.md").read_text(encoding="utf-8")


def test_the_one_sampling_pass_figures_are_the_trials(tmp_path: Path) -> None:
    m = re.search(r"it took (\d+) replays instead\s+of (\d+), and its report held all (\d+) quantities, each at "
                  r"(\d+) samples against the default's (\d+)", _facts())
    assert m, "docs/facts.md#pm-sampling: the trial's sentence"
    replays_pm1, replays_default, quantities, n_new, n_old = map(int, m.groups())
    with tarfile.open(TRIALS / "runs.tar.gz") as tar:
        tar.extractall(tmp_path, filter="data")
    (new,) = tmp_path.glob("examples/*-timeline-pm1")
    (old,) = tmp_path.glob("examples/*Z-timeline")
    r = compare_timeline.compare(new, old)
    assert r["holds"] and len(r["quantities"]) == quantities
    assert {(v["samples_new"], v["samples_old"]) for v in r["quantities"].values()} == {(n_new, n_old)}
    pm1 = gzip.decompress((TRIALS / "timeline_pm1.log.gz").read_bytes()).decode()
    default = gzip.decompress((TRIALS / "bench_profile.log.gz").read_bytes()).decode()
    assert pm1.count('Profiling "range"') == replays_pm1
    assert default.count('Profiling "range"') == replays_default


def test_the_fast_exit_figures_are_the_trials() -> None:
    m = re.search(r"kept all (\d+) kernels in (\d+) passes\s+and the same (\d+) cells", _facts())
    assert m, "docs/facts.md#process-exit: the trial's sentence"
    kernels, passes, cells = map(int, m.groups())
    with tarfile.open(TRIALS / "runs.tar.gz") as tar:
        (member,) = [x for x in tar.getmembers() if x.name.endswith("-profile-fastexit/manifest.json")]
        manifest = json.load(tar.extractfile(member))
    report = manifest["replayer_passes"]["sweep.ncu-rep"]
    assert (report["kernels"], report["min"], report["max"]) == (kernels, passes, passes)
    verdicts = [line for line in (TRIALS / "compare_exit.log").read_text().splitlines()
                if line.startswith("compare_profile:")]
    assert len(verdicts) == 4 and all(line.endswith("; holds") for line in verdicts)
    assert all(f"same cell keys ({cells} cells" in line for line in verdicts)


@pytest.mark.parametrize("name", ["bench_profile.log.gz", "timeline_pm1.log.gz"])
def test_the_gzipped_logs_are_whole(name: str) -> None:
    text = gzip.decompress((TRIALS / name).read_bytes()).decode()
    assert "==PROF== Report:" in text
