"""`l2attr sweep --profile`: range names, the ncu child's command, ncu rows -> sweep_dram.csv ->
DRAM MiB per call in the sweep's table."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from helpers_sweep import write_sweep_run

from l2attr.sweep.analyse.judge import analyse_sweep
from l2attr.sweep.load import load_sweep
from l2attr.cli import main
from l2attr.dlrm.config import WorkloadConfig, build_config
from l2attr.rundir import RunDir
from l2attr.sweep.measure import dram
from l2attr.sweep.declare import SweepOptions
from l2attr.vocab import Family, SweepAxis
from l2attr.names import parse_sweep_range_name, sweep_range_name

MiB = 1 << 20


def test_range_names_round_trip_with_a_colon_in_the_point():
    name = sweep_range_name("consumer", "artifact", "reuse_high", "l2p_optmt", 11, 3, 8, "interleaved:k8")
    back = parse_sweep_range_name("l2attr@" + name)
    assert back == {"role": "consumer", "family": "artifact", "profile": "reuse_high", "arm": "l2p_optmt",
                    "table": 11, "group": 3, "position": 8, "point": "interleaved:k8"}
    assert parse_sweep_range_name("l2attr@consumer:artifact:optmt:none:random:natural:t1:b2") is None


def test_child_repeats_the_sweep_with_the_same_workload(tmp_path: Path):
    cfg = WorkloadConfig(tables=3, rows=1234, hot_rows=77, dtype="bf16")
    opts = SweepOptions(axis=SweepAxis.POLLUTION, families=[Family.TUNED], profiles=["random"],
                        pollution_mib=[0.0, 7.5], cache_dir=str(tmp_path / "c"))
    argv = dram.child_argv(tmp_path, cfg, opts)
    assert argv[argv.index("sweep") + 1] == "pollution" and "--nvtx-ranges" in argv
    assert argv[argv.index("--repeats") + 1] == "1" and "--no-host-repeat" in argv
    assert argv[argv.index("--pollute-mib") + 1] == "0,7.5" and argv[argv.index("--spin-us") + 1] == "0"
    assert build_config(toml_path=Path(argv[argv.index("--config") + 1])) == cfg


def test_ncu_rows_become_dram_mib_per_call_in_the_hotset_table(tmp_path: Path):
    run = write_sweep_run(tmp_path, "hotset", profiles=("random",), hot_rows=[0, 5])   # the rows below: all it profiles
    rows = []
    for t in range(2):
        for role, point, arm, mb in (("consumer", "hot0", "optmt", 30), ("consumer", "hot5", "l2p_optmt", 8),
                                     ("pin", "hot5", "l2p_optmt", 31)):
            name = "l2attr@" + sweep_range_name(role, "artifact", "random", arm, t, 3, 1, point)
            rows += [{"nvtx_range": name, "metric": "dram__bytes_read.sum", "value": mb * MiB + t},
                     {"nvtx_range": name, "metric": "gpu__time_duration.sum", "value": 1000.0},
                     {"nvtx_range": "someone else's", "metric": "dram__bytes_read.sum", "value": 1.0}]
    table = dram.to_table(pd.DataFrame(rows))
    assert len(table) == 6 and set(table["role"]) == {"consumer", "pin"}
    RunDir(run).write(dram.SWEEP_DRAM, table)
    t = analyse_sweep(load_sweep(run)).table
    t = t[t["profile"] == "random"].set_index("hot_rows")
    assert t.loc[0, "consumer_dram_mib"] == pytest.approx(30, abs=1e-5)
    assert t.loc[5, "consumer_dram_mib"] == pytest.approx(8, abs=1e-5) and t.loc[5, "pin_dram_mib"] == pytest.approx(31, abs=1e-5)
    assert main(["report", str(run), "-o", str(tmp_path / "r.md")]) == 0
    assert "consumer DRAM (MiB/call)" in (tmp_path / "r.md").read_text()


def test_profile_without_ncu_is_one_line_before_the_gpu(tmp_path: Path, monkeypatch, capsys):
    monkeypatch.setattr("shutil.which", lambda name: None)
    assert main(["sweep", "hotset", "--profile", "--out", str(tmp_path / "runs")]) == 2
    assert capsys.readouterr().err == ("l2attr sweep: error: --profile needs Nsight Compute's ncu on PATH "
                                       "(see `l2attr doctor`)\n")
    assert not (tmp_path / "runs").exists()


def test_ranges_only_around_pin_and_consumer_of_the_first_tables_of_the_last_group():
    pytest.importorskip("nvtx")
    from contextlib import nullcontext

    from l2attr.sweep.measure.run import nvtx_ranges
    from l2attr.sweep.measure.protocol import Call
    from l2attr.sweep.declare import Point
    from l2attr.vocab import Arm, Role

    p = Point("hot5", 5.0, (Arm.PIN,), hot_rows=5, groups=3)
    ranges = nvtx_ranges(Family.ARTIFACT, "random", p, Arm.PIN)
    on = lambda c, role: not isinstance(ranges(c, role), nullcontext)  # noqa: E731
    assert on(Call(2, 0, 0, 1, True), Role.CONSUMER) and on(Call(2, 3, 0, 1, True), Role.PIN)
    assert not on(Call(1, 0, 0, 1, True), Role.CONSUMER)           # not the last group
    assert not on(Call(2, dram.PROFILED_TABLES, 0, 1, True), Role.CONSUMER)
    assert not on(Call(2, 0, 0, 1, True), Role.POLLUTE)


def test_the_committed_sweep_rows_round_trip_through_the_grammar():
    """Every kernel the committed --profile sweeps recorded is a name names.SWEEP builds and parses."""
    root = Path(__file__).resolve().parents[1] / "examples"
    tables = sorted(root.glob("*/sweep_dram.csv"))
    assert tables
    for path in tables:
        for rec in pd.read_csv(path, dtype={"point": str}).to_dict("records"):
            ident = {k: rec[k] for k in ("role", "family", "profile", "arm", "table", "group", "position", "point")}
            assert parse_sweep_range_name("l2attr@" + sweep_range_name(**ident)) == ident
