"""Loading and combining run dirs: configs must match, tables are concatenated with their run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers_rundirs import default_config, ladder_cells, write_ladder_run, write_profile_run

from l2attr.analysis import analyse, load_runs
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
    assert any("seed: 0 vs 3" in n for n in study.notes)
    assert any("seed" in c.text for c in analyse(study).caveats)


def test_duplicate_cells_keep_the_first_run_and_say_so(tmp_path: Path) -> None:
    a = write_ladder_run(tmp_path, "20261129T200000Z-a")
    b = write_ladder_run(tmp_path, "20261129T200100Z-b", cells=ladder_cells().assign(median_us=1.0))
    study = load_runs([a, b])
    assert set(study.cells["run"]) == {"20261129T200000Z-a"}
    assert any("20261129T200100Z-b" in n for n in study.notes)


@pytest.mark.parametrize("manifest, message", [
    ({"schema_version": 9, "kind": "ladder", "config": {}}, "schema version 9"),
    ({"schema_version": 1, "kind": "sweep", "config": {}}, "kind 'sweep'"),
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
