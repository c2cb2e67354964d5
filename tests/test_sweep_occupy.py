"""The occupy sweep (formerly `capacity`) is named for what it does: part of L2 held by evict_last
lines of a dummy buffer. No label, chart axis, help text, reading or report says "A100" (it was
never measured on one) or calls the points a smaller L2 unless its recorded ncu check says the
lines stay; the check is printed beside it when the run dir holds one."""

from __future__ import annotations

import json
from pathlib import Path

from helpers_sweep import write_sweep_run

from l2attr.sweep.analyse.judge import analyse_sweep
from l2attr.sweep.load import load_sweep, read_check
from l2attr.cli import main
from l2attr.sweep import axes
from l2attr.sweep.axes import occupy
from l2attr.report.charts import figure_json
from l2attr.sweep.section.chart import figures
from l2attr.vocab import SweepAxis

ROOT = Path(__file__).resolve().parents[1]
COMMITTED = ROOT / "examples" / "20261130T215521Z-bench-capacity"


def _declared_text(spec: axes.AxisSpec) -> str:
    parts = [spec.summary, spec.title, spec.note, spec.answers, spec.chart.title, spec.chart.x_title,
             spec.judgement.what, spec.judgement.at, *(o.help for o in spec.options),
             *(c.header for c in spec.table.columns), *(s.label for s in spec.chart.series)]
    return "\n".join(parts)


def _check(tmp: Path, retained: dict[float, float]) -> Path:
    rows = [{"occupy_mib": mib, "arm": arm, "retained_share": share if arm == "evict_last" else 0.0}
            for mib, share in retained.items() for arm in ("evict_last", "normal")]
    (tmp / occupy.CHECK_FILE).write_text(json.dumps({"traffic_mib": 120.0, "results": rows}))
    return tmp / occupy.CHECK_FILE


def test_no_a100_in_the_declarations_or_the_sources():
    for name in (SweepAxis.OCCUPY, SweepAxis.CAPACITY):
        assert "A100" not in _declared_text(axes.AXES[name])
    for path in [*(ROOT / "l2attr" / "sweep").rglob("*.py"), ROOT / "tools" / "capacity_ncu_check.py"]:
        assert "A100" not in path.read_text(), path


def test_a_fake_occupy_run_reports_no_a100_and_no_smaller_l2(tmp_path: Path):
    run = write_sweep_run(tmp_path, "occupy", occupy_mib=[0.0, 20.0])
    an = analyse_sweep(load_sweep(run))
    assert an.check is None and "occupy_mib" in an.table.columns
    texts = [an.reading, *(json.dumps(figure_json(f)) for f in figures(an, "fig").values())]
    for out in ("r.md", "r.html"):
        assert main(["report", str(run), "-o", str(tmp_path / out)]) == 0
        texts.append((tmp_path / out).read_text())
    for t in texts:
        assert "A100" not in t and "smaller L2" not in t and "effective L2" not in t


def test_the_committed_capacity_run_reads_as_occupy_with_its_check_beside_it(tmp_path: Path):
    an = analyse_sweep(load_sweep(COMMITTED))
    assert an.spec.renamed_to == SweepAxis.OCCUPY and an.title == axes.AXES[SweepAxis.OCCUPY].title
    # its points were L2 minus the MiB held (l2_60MiB .. l2_20MiB on a 60 MiB L2): 0 .. 40 MiB held
    assert sorted(set(an.table["occupy_mib"])) == [0.0, 10.0, 20.0, 30.0, 40.0]
    lines = an.check.lines()
    assert "20 MiB held: 7.0 % still in L2" in lines[0] and "not a smaller L2" in lines[1]
    out = tmp_path / "r.md"
    assert main(["report", str(COMMITTED), "-o", str(out)]) == 0
    md = out.read_text()
    assert "**Check.** Nsight Compute check of the held lines" in md and "A100" not in md


def test_the_check_says_smaller_l2_only_when_the_lines_stay(tmp_path: Path):
    held = read_check(_check(tmp_path, {20.0: 0.97, 40.0: 0.95}))
    assert held.stays and "emulate a smaller L2" in held.lines()[1]
    gone = read_check(_check(tmp_path, {20.0: 0.97, 40.0: 0.5}))     # one size falls short: not a smaller L2
    assert gone.stays is False and "not a smaller L2" in gone.lines()[1]
    (tmp_path / occupy.CHECK_FILE).write_text("{not json")
    assert "unreadable" in read_check(tmp_path / occupy.CHECK_FILE).lines()[0]
    assert read_check(tmp_path / "absent.json") is None


def test_capacity_is_read_not_run(tmp_path: Path, capsys):
    assert main(["sweep", "capacity", "--out", str(tmp_path / "runs")]) == 2
    assert "the capacity sweep is now `occupy`" in capsys.readouterr().err
    assert SweepAxis.CAPACITY.value not in axes.runnable()
