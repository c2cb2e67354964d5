"""Properties of the workload config: preset, then TOML file, then flags; bad values are UserErrors."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from l2attr.dlrm.config import DTYPES, PRESETS, WorkloadConfig, build_config
from l2attr.errors import UserError

POSITIVE = ("tables", "rows", "dim", "batch_size", "pooling", "batches")
NON_NEGATIVE = ("warmup_batches", "hot_rows", "seed")
FIELDS = [f.name for f in dataclasses.fields(WorkloadConfig)]


def value_for(name: str) -> st.SearchStrategy:
    if name == "dtype":
        return st.sampled_from(DTYPES)
    return st.integers(1 if name in POSITIVE else 0, 10**6)


partial = st.fixed_dictionaries({}, optional={name: value_for(name) for name in FIELDS})


def toml_text(values: dict) -> str:
    return "".join(f'{k} = "{v}"\n' if isinstance(v, str) else f"{k} = {v}\n" for k, v in values.items())


@given(st.sampled_from(sorted(PRESETS)), partial, partial, st.booleans())
def test_later_sources_win_key_by_key(tmp_path_factory: pytest.TempPathFactory, preset: str, file_values: dict,
                                      flags: dict, nested: bool) -> None:
    path = tmp_path_factory.mktemp("c") / "w.toml"
    path.write_text(("[workload]\n" if nested else "") + toml_text(file_values))
    expected = {**PRESETS[preset].to_dict(), **file_values, **flags}
    try:
        want = WorkloadConfig(**expected)
    except UserError as exc:     # e.g. hot_rows above rows: the same refusal from every route
        with pytest.raises(UserError) as err:
            build_config(preset, path, flags)
        assert str(err.value) == str(exc)
        return
    assert build_config(preset, path, flags) == want
    assert build_config(preset, path, {**flags, **{k: None for k in FIELDS if k not in flags}}) == want  # None: unset


junk = st.one_of(st.integers(-10**6, 0), st.booleans(), st.floats(allow_nan=True), st.text(max_size=5),
                 st.none(), st.lists(st.integers(), max_size=2))


@given(st.sampled_from(FIELDS), junk)
def test_a_bad_value_is_a_user_error_naming_the_field(name: str, value: object) -> None:
    if name == "dtype" and value in DTYPES:
        return
    good = WorkloadConfig().to_dict()
    if name in NON_NEGATIVE and isinstance(value, int) and not isinstance(value, bool) and value == 0:
        assert WorkloadConfig(**{**good, name: 0}).to_dict()[name] == 0     # 0 is allowed there
        return
    with pytest.raises(UserError) as err:
        WorkloadConfig(**{**good, name: value})
    assert f"config: {name} must be" in str(err.value)


@given(st.from_regex(r"[a-z][a-z_]{0,12}", fullmatch=True).filter(lambda k: k not in FIELDS and k != "preset"))
def test_unknown_toml_keys_are_named(tmp_path_factory: pytest.TempPathFactory, key: str) -> None:
    path = tmp_path_factory.mktemp("c") / "w.toml"
    path.write_text(f"{key} = 1\n")
    with pytest.raises(UserError, match=f"unknown key\\(s\\) {key};"):
        build_config(None, path)


@given(st.one_of(st.binary(max_size=60),
                 st.sampled_from([b"workload = 1\n", b"rows = 1.5\n", b"rows = 1979-05-27\n",
                                  b"dtype = 16\n", b"[workload]\nrows = [1]\n"])))
def test_any_file_is_a_config_or_a_user_error(tmp_path_factory: pytest.TempPathFactory, data: bytes) -> None:
    path = tmp_path_factory.mktemp("c") / "w.toml"
    path.write_bytes(data)
    try:
        cfg = build_config(None, path)
    except UserError:
        return
    assert isinstance(cfg, WorkloadConfig)


def test_missing_config_file(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="config file not found"):
        build_config(None, tmp_path / "none.toml")


@pytest.mark.parametrize("data, message", [
    (b"\x80", "not valid TOML ('utf-8' codec can't decode byte 0x80"),
    (b"workload = 1\n", "'workload' must be a table ([workload]), found int"),
])
def test_files_that_once_raised_a_traceback(tmp_path: Path, data: bytes, message: str) -> None:
    path = tmp_path / "w.toml"
    path.write_bytes(data)
    with pytest.raises(UserError) as err:
        build_config(None, path)
    assert message in str(err.value)
