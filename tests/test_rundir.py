"""Run directories: creation, manifest, schema checks, atomic appends, bad input."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from l2attr.errors import UserError
from l2attr.rundir import RunDir
from l2attr.schema import CELLS, SAMPLES, SCHEMA_VERSION


def _samples(n: int, repeat: int = 0) -> pd.DataFrame:
    return pd.DataFrame({"family": "artifact", "rung": "optmt", "pin": "none", "profile": "random",
                         "l2_state": "natural", "repeat": repeat, "batch": range(n), "table": 0,
                         "pin_time_us": float("nan"), "consumer_time_us": 50.0 + repeat,
                         "consumer_artifact_time_us": float("nan"), "call_wall_time_us": float("nan")})


def test_create_writes_manifest_with_schema_version(tmp_path):
    run = RunDir.create(tmp_path, "ladder", {"kind": "ladder", "config": {"rows": 1}})
    m = json.loads((run.path / "manifest.json").read_text())
    assert m["schema_version"] == SCHEMA_VERSION and m["kind"] == "ladder"
    assert m["created_utc"].endswith("+00:00")
    assert run.path.name.endswith("-ladder") and run.path.name[:8].isdigit()


def test_append_accumulates_and_leaves_no_temp_files(tmp_path):
    run = RunDir.create(tmp_path, "x", {"kind": "ladder"})
    run.append(SAMPLES, _samples(3))
    run.append(SAMPLES, _samples(2, repeat=1)[list(reversed(SAMPLES.columns))])  # any column order
    back = run.read(SAMPLES)
    assert len(back) == 5
    assert list(back.consumer_time_us) == [50.0, 50.0, 50.0, 51.0, 51.0]
    assert list(back.repeat) == [0, 0, 0, 1, 1]
    assert not [p for p in run.path.iterdir() if p.name.startswith(".")]


def test_append_with_new_columns_rewrites_the_table(tmp_path):
    run = RunDir.create(tmp_path, "x", {"kind": "ladder"})
    run.append(SAMPLES, _samples(2))
    run.append(SAMPLES, _samples(1, repeat=1).assign(launch_lag_us=3.0))
    back = run.read(SAMPLES)
    assert len(back) == 3 and back.launch_lag_us.isna().sum() == 2 and back.launch_lag_us.iloc[2] == 3.0


def test_write_refuses_wrong_schema(tmp_path):
    run = RunDir.create(tmp_path, "x", {"kind": "ladder"})
    with pytest.raises(UserError, match="missing columns"):
        run.write(CELLS, pd.DataFrame({"rung": ["a"]}))


@pytest.mark.parametrize("setup, needle", [
    (lambda p: None, "run dir not found"),
    (lambda p: p.mkdir(), "no manifest.json"),
    (lambda p: (p.mkdir(), (p / "manifest.json").write_text("{")), "not valid JSON"),
    (lambda p: (p.mkdir(), (p / "manifest.json").write_text('{"schema_version": 99}')), "schema version 99"),
])
def test_open_bad_run_dirs(tmp_path, setup, needle):
    path = tmp_path / "run"
    setup(path)
    with pytest.raises(UserError, match=needle):
        RunDir.open(path)


def test_bad_run_name(tmp_path):
    with pytest.raises(UserError, match="run name"):
        RunDir.create(tmp_path, "a/b", {})


def test_a_compressed_table_reads_like_the_plain_one_and_a_cut_one_is_refused(tmp_path):
    import gzip
    import lzma

    import pandas as pd
    import pytest

    from l2attr.errors import UserError
    from l2attr.rundir import RunDir
    from l2attr.schema import STEP_TIMES

    run = RunDir.create(tmp_path, "gz", {"kind": "step"})
    df = pd.DataFrame({"repeat": [0, 1], "step_us": [10.0, 11.0], "discard": ["", ""]})
    run.write(STEP_TIMES, df)
    plain = run.path / STEP_TIMES.filename
    packed = plain.with_name(plain.name + ".gz")
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    plain.unlink()
    assert run.has(STEP_TIMES) and run.read(STEP_TIMES)["step_us"].tolist() == [10.0, 11.0]
    run.append(STEP_TIMES, df.assign(repeat=[2, 3]))          # appending rewrites it plain
    assert plain.is_file() and not packed.is_file() and len(run.read(STEP_TIMES)) == 4
    packed.write_bytes(gzip.compress(plain.read_bytes())[:-8])
    plain.unlink()
    with pytest.raises(UserError, match="gzip"):
        run.read(STEP_TIMES)
    packed.unlink()
    xz = plain.with_name(plain.name + ".xz")           # the largest committed tables: xz, a third smaller
    run.write(STEP_TIMES, df)
    xz.write_bytes(lzma.compress(plain.read_bytes()))
    plain.unlink()
    assert run.table_file(STEP_TIMES) == xz and run.read(STEP_TIMES)["step_us"].tolist() == [10.0, 11.0]
    xz.write_bytes(lzma.compress(b"repeat,step_us,discard\n0,10.0,\n")[:-8])
    with pytest.raises(UserError, match="not a whole xz file"):
        run.read(STEP_TIMES)
