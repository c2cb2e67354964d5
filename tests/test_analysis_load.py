"""Loading and combining run dirs: configs must match, tables are concatenated with their run."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

import pytest
from helpers_rundirs import (default_config, ladder_cells, metric_rows, scaled_samples, write_ladder_run,
                             write_profile_run)

from l2attr.study import analyse, load_runs
from l2attr.analysis.load import config_differences, manifest_first, manifest_value
from l2attr.errors import UserError


def test_ladder_and_profile_combine(tmp_path: Path) -> None:
    study = load_runs([write_ladder_run(tmp_path), write_profile_run(tmp_path)])
    assert study.has_layer_a and study.has_layer_b
    assert set(study.cells["run"]) == {"20261129T200000Z-ladder"}
    assert set(study.metrics["run"]) == {"20261129T210000Z-profile"}
    assert study.hbm_copy_GBps()[0] == 4020.0


def test_mixed_configs_are_refused_naming_the_keys(tmp_path: Path) -> None:
    a = write_ladder_run(tmp_path)
    b = write_profile_run(tmp_path, config=default_config(batch_size=512, pooling=50))
    with pytest.raises(UserError) as err:
        load_runs([a, b])
    message = str(err.value)
    assert "batch_size: 2048 vs 512" in message and "pooling: 150 vs 50" in message
    assert "\n" not in message


def test_allow_mixed_turns_refusal_into_caveat(tmp_path: Path) -> None:
    a = write_ladder_run(tmp_path)
    b = write_profile_run(tmp_path, config=default_config(seed=3))
    study = load_runs([a, b], allow_mixed=True)
    assert any("seed: 0 vs 3" in n for n in study.mixed)
    assert any("seed" in c.text for c in analyse(study).caveats)


def test_duplicate_cells_keep_one_run_and_compare_the_other(tmp_path: Path) -> None:
    """Same created_utc: the order given decides; the other run's rows are kept for the compare
    section and an info caveat names both runs."""
    a = write_ladder_run(tmp_path, "20261129T200000Z-a")
    b = write_ladder_run(tmp_path, "20261129T200100Z-b", samples=scaled_samples(2.0))
    study = load_runs([a, b])
    assert set(study.cells["run"]) == {"20261129T200000Z-a"}
    assert set(study.overlaps["cells"]["run"]) == {"20261129T200000Z-a", "20261129T200100Z-b"}
    an = analyse(study)
    doubled = set((2.0 * ladder_cells()["median_us"]).round(6))
    assert set(an.compare["run"]) == {"20261129T200100Z-b"} and set(an.compare["median_us"].round(6)) <= doubled
    assert any("20261129T200100Z-b" in c.text and c.level == "info" for c in an.caveats)


def test_newer_run_wins(tmp_path: Path) -> None:
    a = write_ladder_run(tmp_path, "20261129T200000Z-a")
    b = write_ladder_run(tmp_path, "20261129T200100Z-b", samples=scaled_samples(2.0),
                         created_utc="2026-11-30T00:00:00Z")
    assert set(load_runs([a, b]).cells["run"]) == {"20261129T200100Z-b"}


@pytest.mark.parametrize("manifest, message", [
    ({"schema_version": 9, "kind": "ladder", "config": {}}, "schema version 9"),
    ({"schema_version": 2, "kind": "sweep", "config": {}}, "kind 'sweep'"),
    ({"schema_version": 1, "kind": "step", "config": {}}, "schema_version must be 2 for a step run"),
    ({"schema_version": 1, "kind": "ladder"}, "no workload 'config'"),
    ([1, 2], "expected a JSON object"),
])
def test_bad_manifests(tmp_path: Path, manifest: object, message: str) -> None:
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(UserError, match=message):
        load_runs([tmp_path / "run"])


def test_non_numeric_column_is_refused(tmp_path: Path) -> None:
    run = write_ladder_run(tmp_path)
    text = (run / "cells.csv").read_text().splitlines()
    header = text[0].split(",")
    first = text[1].split(",")
    first[header.index("median_us")] = "fast"
    (run / "cells.csv").write_text("\n".join([text[0], ",".join(first), *text[2:]]) + "\n")
    with pytest.raises(UserError, match="median_us must be numeric"):
        load_runs([run])


def test_config_differences_lists_every_key() -> None:
    assert config_differences({"a": 1, "b": 2}, {"a": 1, "b": 3, "c": 4}) == ["b: 2 vs 3", "c: '<absent>' vs 4"]


def test_manifest_lookup_defaults_to_unknown() -> None:
    m = {"gpu": {"name": "H200", "driver": None}, "replay_mode": "application"}
    assert manifest_value(m, "gpu.name") == "H200"
    assert manifest_value(m, "gpu.driver") == "unknown"
    assert manifest_value(m, "ncu.version") == "unknown"
    assert manifest_first(m, "ncu.replay_mode", "replay_mode") == "application"


# --- damaged tables: refused naming the file and what is wrong, never analysed in part ------
# write_ladder_run: 4 profiles x 6 rungs, each with consumer, kernels and call_wall cells, plus a
# pin cell for the 2 pinning rungs: 4 * (6 * 3 + 2) = 80 rows + the header = 81 lines.
CELL_LINES = 1 + 4 * (4 * 4 + 2 * 5)   # header + per profile: 4 rungs x 4 quantity/timer rows, 2 pinning x 5


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines(keepends=True)


def _refused(run: Path) -> str:
    with pytest.raises(UserError) as err:
        load_runs([run])
    assert "\n" not in str(err.value)
    return str(err.value)


def test_cells_cut_mid_row(tmp_path: Path) -> None:
    run = write_ladder_run(tmp_path)
    cells = run / "cells.csv"
    assert len(_lines(cells)) == CELL_LINES
    cells.write_bytes(cells.read_bytes()[:-10])
    assert _refused(run) == f"{cells}:{CELL_LINES}: the last row is cut off (no newline at the end; was the file truncated?)"


def test_cells_row_with_missing_fields(tmp_path: Path) -> None:
    run = write_ladder_run(tmp_path)
    cells = run / "cells.csv"
    lines = _lines(cells)
    lines[4] = ",".join(lines[4].split(",")[:3]) + "\n"
    cells.write_text("".join(lines))
    assert _refused(run) == f"{cells}:5: the row has 3 field(s), the header 15 (cut short or damaged)"


def test_header_only_cells_is_an_interrupted_run_not_a_missing_one(tmp_path: Path) -> None:
    run = write_ladder_run(tmp_path)
    cells = run / "cells.csv"
    cells.write_text(_lines(cells)[0])
    assert _refused(run) == f"{cells}: ladder run has no cells (interrupted?)"


@pytest.mark.parametrize("column, value, problem", [
    ("median_us", -1.12, "a negative value (-1.12)"),
    ("p90_us", float("inf"), "a value that is not finite (inf)"),
    ("ci95_lo_us", float("nan"), "an empty value"),
    ("n_samples", -5, "a negative value (-5)"),
])
def test_bad_numbers_name_file_line_and_column(tmp_path: Path, column: str, value: float, problem: str) -> None:
    cells = ladder_cells()
    cells.loc[7, column] = value                 # row 7: line 9 (header is line 1)
    run = write_ladder_run(tmp_path, cells=cells)
    assert _refused(run) == f"{run / 'cells.csv'}:9: column {column} has {problem}"


def test_empty_times_allowed_where_the_writer_leaves_them_empty(tmp_path: Path) -> None:
    # samples: no pin time for rungs without a pin, no event times in the host-timed repeat
    study = load_runs([write_ladder_run(tmp_path)])
    assert study.samples["pin_time_us"].isna().any() and study.samples["call_wall_time_us"].isna().any()


def test_samples_cut_at_a_row_boundary(tmp_path: Path) -> None:
    # the last two sample rows are call 4 of random/torch (one event-timed, one host-timed)
    run = write_ladder_run(tmp_path)
    samples = run / "samples.csv"
    samples.write_text("".join(_lines(samples)[:-2]))
    assert _refused(run) == (f"{samples}: 4 consumer_time_us samples for reference/torch/none/random/natural, "
                             "but cells.csv counted 5 (samples.csv lost rows: truncated?)")


def _last_kernel(run: Path) -> tuple[int, int]:
    """(rows of the file's last kernel, of which derived rates): the file ends with the last
    kernel of control_after_flush.ncu-rep, raw metrics sorted by name, then its derived rates."""
    df = pd.read_csv(run / "metrics.csv")
    last = df[(df["report"] == df["report"].iloc[-1]) & (df["launch"] == df["launch"].iloc[-1])]
    return len(last), int(last["metric"].str.startswith("derived:").sum())


def test_metrics_cut_mid_row_or_losing_whole_kernels(tmp_path: Path) -> None:
    run = write_profile_run(tmp_path)
    metrics = run / "metrics.csv"
    whole = _lines(metrics)
    metrics.write_text("".join(whole)[:-7])
    assert _refused(run).startswith(f"{metrics}:{len(whole)}: the last row is cut off")
    metrics.write_text("".join(whole))
    per_kernel, _ = _last_kernel(run)
    metrics.write_text("".join(whole[:-per_kernel]))          # the whole last kernel is gone
    assert _refused(run) == (f"{metrics}: 3 of the 4 kernels of control_after_flush.ncu-rep that "
                             "manifest.json[replayer_passes] lists (truncated?)")


def test_metrics_losing_the_last_kernels_rows_without_a_kernel_count(tmp_path: Path) -> None:
    run = write_profile_run(tmp_path, replayer_passes=None)      # older runs record no count
    metrics = run / "metrics.csv"
    per_kernel, derived = _last_kernel(run)
    raw = per_kernel - derived
    metrics.write_text("".join(_lines(metrics)[:-(derived + 2)]))   # its rates and two raw metrics
    assert _refused(run) == (f"{metrics}: the last kernel of control_after_flush.ncu-rep (launch 3) has "
                             f"{raw - 2} metrics, the others up to {raw} (truncated?)")


def test_metrics_losing_the_last_kernels_derived_rate(tmp_path: Path) -> None:
    hit, miss = "lts__t_sectors_op_read_lookup_hit.sum", "lts__t_sectors_op_read_lookup_miss.sum"
    rows = metric_rows({("optmt", "random", "consumer"): {hit: 3.0, miss: 1.0}})
    assert rows["metric"].iloc[-1] == "derived:lts__t_sectors_op_read_hit_rate.pct"   # 75 %, appended last
    run = write_profile_run(tmp_path, metrics=rows, control=None)
    metrics = run / "metrics.csv"
    assert len(load_runs([run]).metrics) == 4 * 4       # 4 kernels: hit, miss, passes, derived
    metrics.write_text("".join(_lines(metrics)[:-1]))
    assert _refused(run) == (f"{metrics}: the last kernel of sweep.ncu-rep (launch 3) lacks "
                             f"derived:lts__t_sectors_op_read_hit_rate.pct, which its {hit} and {miss} "
                             "give (truncated?)")


def test_a_kernel_without_lookups_has_no_rate_and_that_is_whole(tmp_path: Path) -> None:
    hit, miss = "lts__t_sectors_op_read_lookup_hit.sum", "lts__t_sectors_op_read_lookup_miss.sum"
    rows = metric_rows({("optmt", "random", "consumer"): {hit: 0.0, miss: 0.0}})
    assert not rows["metric"].str.startswith("derived:").any()
    assert len(load_runs([write_profile_run(tmp_path, metrics=rows, control=None)]).metrics) == 4 * 3


def test_header_only_metrics(tmp_path: Path) -> None:
    run = write_profile_run(tmp_path)
    metrics = run / "metrics.csv"
    metrics.write_text(_lines(metrics)[0])
    assert _refused(run) == f"{metrics}: profile run has no metrics (interrupted?)"


def test_a_whole_run_passes_every_check(tmp_path: Path) -> None:
    study = load_runs([write_ladder_run(tmp_path), write_profile_run(tmp_path)])
    assert len(study.cells) == CELL_LINES - 1
    assert study.metrics["launch"].nunique() == 112       # 28 (rung, profile, role) x 2 tables x 2 batches
