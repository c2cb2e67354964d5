"""The registries: a new L2 condition is one line in l2attr/vocab/conditions.py, and a new
per-series analyzer one entry in l2attr/study/study.py, and nothing else (a report section
then reads it by that name, and cannot before).

A new condition:
The test copies the package, adds one line to the registry's class and nothing more, then runs
the CPU path of an experiment in a child process on that copy: the declaration and its repeat
plan, the protocol order on the fake GPU of test_experiment_engine.py, the run dir's tables
(read back through the integrity checks), the analysis and the report page. The condition is
`cold_alone`: flush, then the consumer alone, no producer. The fake GPU's consumer takes 14 us
cold and 10 us after its producer, and the producer 2 us (5 us on the host clock), so the
answers are known by hand: the consumer alone is 1.4x slower than natural, the producer step
costs 2 us of kernel time for a 4 us saving (break-even 0.5 consumer calls), and it does not
pay on the host clock (15 us against 14 us)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import REPO

LINE = ('    COLD_ALONE = _c("cold_alone", "flush, then the consumer alone (declared by a test)",\n'
        '                    before="flush_l2", producer=False, engines=(EXPERIMENT,))\n')
ANCHOR = "    # the ladder's words for the same conditions"

CHILD = r'''
import json, sys
from pathlib import Path

import pandas as pd

import l2attr
from l2attr.experiment.table import analyse_experiment, load_experiment
from l2attr.cli import main
from l2attr.experiment.measure import repeat_plan
from l2attr.measure.cell import CallOps, device_call
from l2attr.vocab import CELL_CONDITIONS, L2Condition
from test_experiment_engine import FakeGpu

out = Path(sys.argv[1])
new = L2Condition("cold_alone")
g = FakeGpu()
device_call(g, CallOps(consumer=g.consumer, producer=g.producer), new, 0)
order = list(g.log)

g = FakeGpu()
exp = l2attr.Experiment("new-condition", consumer=g.consumer, producer=g.producer, calls=6, warmup=2,
                        repeats=2, conditions=["natural", "cold_alone"], baseline="cold_alone", out=out)
plan = [m.value for _, m in repeat_plan(exp.repeats)]
res = exp.time(device=g, log=lambda s: None)
an = analyse_experiment(load_experiment(res.run_dir))          # the integrity checks read it back
row = an.verdict.iloc[0]
cells = res.cells.set_index(["condition", "quantity", "timer"])["median_us"]
page = out / "page.html"
rc = main(["report", str(res.run_dir), "-o", str(page)])
print(json.dumps({
    "in_registry": new in CELL_CONDITIONS, "order": order, "plan": plan,
    "conditions": sorted(pd.read_csv(res.run_dir / "exp_samples.csv")["condition"].unique()),
    "cold_alone_consumer": cells[("cold_alone", "consumer", "kernel")],
    "baseline": row["baseline"], "consumer_speedup": row["consumer_speedup"],
    "break_even_kernel": row["break_even_kernel"], "wall_charged": row["wall_charged_judgement"],
    "report_rc": rc, "page_names_it": "cold_alone" in page.read_text(),
    "page_has_headline": row["headline"].split(":")[0] in page.read_text(),
}))
'''


def _copy_with_one_line(tmp: Path) -> Path:
    root = tmp / "tree"
    shutil.copytree(REPO / "l2attr", root / "l2attr", ignore=shutil.ignore_patterns("__pycache__"))
    for data in ("kernels", "metrics", "reports"):
        (root / data).symlink_to(REPO / data)
    registry = root / "l2attr" / "vocab" / "conditions.py"
    text = registry.read_text()
    assert text.count(ANCHOR) == 1
    registry.write_text(text.replace(ANCHOR, LINE + ANCHOR))
    return root


def test_a_condition_declared_in_the_registry_runs_through_the_cpu_path(tmp_path: Path) -> None:
    root = _copy_with_one_line(tmp_path)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), str(REPO / "tests")])}
    done = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path / "runs")], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["in_registry"]
    assert got["order"] == ["flush", "timer", "consumer"]          # before: flush_l2; no producer
    assert got["plan"] == ["device", "host", "device", "host"]
    assert got["conditions"] == ["cold_alone", "natural"]
    assert got["cold_alone_consumer"] == 14.0
    assert got["baseline"] == "cold_alone"
    assert abs(got["consumer_speedup"] - 1.4) < 1e-9
    assert abs(got["break_even_kernel"] - 0.5) < 1e-9              # 2 us producer / (14 - 10) us saved
    assert got["wall_charged"] == "slower"                         # 15 us charged call against 14 us
    assert got["report_rc"] in (0, None) and got["page_names_it"] and got["page_has_headline"]


def test_without_the_line_the_word_is_refused_with_the_valid_ones() -> None:
    """The control: the copy's one line is what makes the word valid."""
    import pytest

    import l2attr
    from l2attr.errors import UserError

    with pytest.raises(UserError, match="unknown condition 'cold_alone'; valid: natural, no_producer"):
        l2attr.Experiment("p", consumer=lambda: 0, producer=lambda: 0, conditions=["natural", "cold_alone"])


# -- the analyzers ---------------------------------------------------------------------------------

def _pin_over_consumer(i, got):
    """The pin kernel's median over the consumer's, per profile, for the pinned rung."""
    import pandas as pd

    k = i.cells[(i.cells["timer"] == "kernel") & (i.cells["rung"] == "l2p_optmt")]
    med = k.pivot_table(index="profile", columns="quantity", values="median_us")
    return pd.DataFrame({"profile": med.index, "ratio": med["pin"] / med["consumer"]}).reset_index(drop=True)


def test_an_analyzer_registered_by_name_is_run_per_series_and_cut_by_series_view(tmp_path, monkeypatch) -> None:
    """One entry in SERIES_ANALYZERS: every series computes it, the analysis holds it under its
    name, a one-series view cuts it. The ratios are the helper's timings, pin over consumer."""
    import pytest
    from helpers_rundirs import write_ladder_run

    from l2attr.study import analyse, load_runs
    from l2attr.study import study

    monkeypatch.setitem(study.SERIES_ANALYZERS, "pin_over_consumer", _pin_over_consumer)
    monkeypatch.setattr(study, "SERIES_FRAMES", tuple(study.SERIES_ANALYZERS))
    an = analyse(load_runs([write_ladder_run(tmp_path)]))
    got = an.frame("pin_over_consumer").set_index("profile")["ratio"]
    assert got["reuse_high"] == pytest.approx(15.0 / 33.5)
    assert got["random"] == pytest.approx(18.6 / 61.1)
    view = study.series_view(an, an.series[0])
    assert set(view.pin_over_consumer["series"]) == {an.series[0].name}
    with pytest.raises(KeyError, match="registered: ladder, charges"):
        an.frame("no_such_analysis")


def test_a_section_reads_a_new_analyzer_by_its_one_name(tmp_path, monkeypatch) -> None:
    """The entry in SERIES_ANALYZERS is what a section declares; without it the declaration is
    refused. The section's build sees the frame cut to its series (reuse_high: 15.0 / 33.5)."""
    import pytest
    from helpers_rundirs import write_ladder_run

    from l2attr.study import analyse, load_runs
    from l2attr.study import study
    from l2attr.report.reads import UnknownAnalysis
    from l2attr.report.registry import SectionSpec

    def build(v):
        return {"ratio": v.pin_over_consumer.set_index("profile")["ratio"]["reuse_high"]}

    with pytest.raises(UnknownAnalysis, match="section 'ratios' reads 'pin_over_consumer'"):
        SectionSpec("ratios", "Ratios", build, per_series=True, reads=("pin_over_consumer",))
    monkeypatch.setitem(study.SERIES_ANALYZERS, "pin_over_consumer", _pin_over_consumer)
    monkeypatch.setattr(study, "SERIES_FRAMES", tuple(study.SERIES_ANALYZERS))
    spec = SectionSpec("ratios", "Ratios", build, per_series=True, reads=("pin_over_consumer",))
    an = analyse(load_runs([write_ladder_run(tmp_path)]))
    assert spec.fields(study.series_view(an, an.series[0]))["ratio"] == pytest.approx(15.0 / 33.5)
