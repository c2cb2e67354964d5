"""A sweep axis the project has never seen, declared here in one declaration plus its
registration, runs the whole CPU path: its CLI flag and bounds, its plan, the run loop on the fake
GPU (helpers_sweep), the tidy table, its judgement, its chart and the HTML report. Nothing else
is touched: if any layer still knew the axes by name, this axis would fall through it.

The fake GPU (helpers_sweep): consumer 50 µs, 40 µs on a pinned table; a polluting read of
60 MiB or more un-pins every table. So the pinned consumer is 1.25x OptMT's at 0 and 30 MiB
between pin and consumer (faster beyond noise: the fake's samples are exact) and 1.00x at 60 MiB
(equal medians: within noise).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers_sweep import LIMITS, FakeSweepDevice, sweep_manifest

from l2attr.cli import main
from l2attr.sweep import axes
from l2attr.sweep.axes.declare import (AxisSpec, Bound, ChartSpec, Column, Fact, JudgementSpec, Median, MiB,
                                              Option, Point, Series, Speedup, TableSpec, series_columns)
from l2attr.vocab import Arm, SweepJudgement, Quantity as Q

TOY = AxisSpec(
    axis="toy",
    summary="MiB of toy traffic between pin and consumer (--toy-mib)",
    title="Sweep: a toy axis",
    note="A toy axis declared inside a test.",
    answers="whether the toy traffic takes the pin's gain away",
    arms=(Arm.OPTMT, Arm.PIN),
    options=(Option("toy_mib", "--toy-mib", int, (0, 30, 60), "toy MiB between pin and consumer",
                    (Bound("{flag} {v}: toy MiB cannot be negative", lo=0),)),),
    points=lambda cfg, opts, limits=None: [Point(f"toy{n}", float(n), (Arm.OPTMT, Arm.PIN), pollute_bytes=n * MiB)
                                           for n in sorted(opts.toy_mib)],
    table=TableSpec(
        columns=(*series_columns(), Column("mib", "toy MiB", Fact("x"), "g"),
                 Column("optmt_us", "OptMT consumer (µs)", Median(Q.CONSUMER, arm=Arm.OPTMT)),
                 Column("pinned_us", "pinned consumer (µs)", Median(Q.CONSUMER)),
                 Column("speedup", "toy consumer-only speedup", Speedup(Q.CONSUMER), ".2f")),
        spread=Median(Q.CONSUMER, arm=Arm.PIN), row_arms=(Arm.PIN,), sort=("mib",)),
    chart=ChartSpec(title="Toy axis · {family}", x="mib", x_title="toy MiB between pin and consumer",
                    series=(Series("speedup", "consumer only"),)),
    judgement=JudgementSpec(SweepJudgement.PER_POINT, on="speedup", what="Toy verdict", at="{mib:g} toy MiB"),
)


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> AxisSpec:
    monkeypatch.setitem(axes.AXES, "toy", TOY)          # the registration: one line
    return TOY


def test_the_cli_offers_the_new_axis_and_its_bounds(toy, tmp_path: Path, capsys):
    assert main(["sweep", "toy", "--toy-mib", "0,-5", "--out", str(tmp_path / "runs")]) == 2
    assert capsys.readouterr().err == "l2attr sweep: error: --toy-mib -5: toy MiB cannot be negative\n"
    assert not (tmp_path / "runs").exists()
    with pytest.raises(SystemExit):
        main(["sweep", "--help"])
    assert "toy: MiB of toy traffic" in capsys.readouterr().out


def test_plan_measure_analyse_chart_report(toy, tmp_path: Path, capsys):
    from l2attr.sweep.analyse.judge import analyse_sweep
    from l2attr.sweep.load import load_sweep
    from l2attr.dlrm.config import WorkloadConfig
    from l2attr.sweep.measure.run import run_sweep
    from l2attr.sweep.declare import SweepOptions, points, validate
    from l2attr.report.charts import figure_json
    from l2attr.sweep.section.chart import figures
    from l2attr.rundir import RunDir
    from l2attr.vocab import Family

    cfg = WorkloadConfig(tables=2, rows=1000, batch_size=4, pooling=2, batches=3, warmup_batches=1, hot_rows=10)
    opts = SweepOptions("toy", families=[Family.ARTIFACT], profiles=["random"], repeats=2, toy_mib=[60, 0, 30])
    validate(cfg, opts)
    assert [p.point for p in points(cfg, opts)] == ["toy0", "toy30", "toy60"]                 # the plan
    run = RunDir.create(tmp_path, "toy", sweep_manifest(cfg, opts))     # what `l2attr sweep toy` writes first
    FakeSweepDevice.made.clear()
    run_sweep(cfg, opts, run, LIMITS, device_factory=FakeSweepDevice, log=lambda s: None)      # fake measure
    assert FakeSweepDevice.made[-1].units == 3 * 2 * 2 * 2       # points x arms x repeats x modes

    an = analyse_sweep(load_sweep(run.path))                                                   # table + judgement
    t = an.table.set_index("mib")
    assert t.loc[0.0, "speedup"] == pytest.approx(50 / 40) and t.loc[60.0, "speedup"] == pytest.approx(1.0)
    assert list(t["judgement"]) == ["faster", "faster", "within noise"]
    assert an.reading == ("Toy verdict: artifact random: 1.25× at 0 toy MiB (faster), 1.25× at 30 toy MiB "
                          "(faster), 1.00× at 60 toy MiB (within noise).")

    (fig,) = figures(an, "fig").values()                                                      # chart spec
    layout = figure_json(fig)["layout"]
    assert layout["title"]["text"] == "Toy axis · artifact"
    assert layout["xaxis"]["title"]["text"] == "toy MiB between pin and consumer"

    page = tmp_path / "toy.html"                                                              # the report
    assert main(["report", str(run.path), "-o", str(page)]) == 0
    html = page.read_text()
    assert "Sweep: a toy axis" in html and "toy consumer-only speedup" in html and "1.25× at 30 toy MiB" in html
    assert 'id="fig-sweep-0-artifact"' in html
