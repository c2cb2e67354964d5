"""The property of tests/test_properties_runs.py over the distributed ladder run (units.csv, the
GPUs' facts, 35 000 samples): a file of its own so that xdist runs it beside the other kinds (its
reads take several times theirs)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import runs_mutate as rm


@given(data=st.data())
def test_any_damage_to_a_distributed_run_is_refused_answered_the_same_or_said(
        data: st.DataObject, tmp_path_factory: pytest.TempPathFactory) -> None:
    rm.check("distributed", tmp_path_factory.getbasetemp() / "prop-distributed", data)
