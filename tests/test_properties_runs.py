"""Property: whatever damage a committed run of any kind takes, its readers answer in one of three
ways: refuse (non-zero exit, one line naming a file of the run and the rule), answer as for the
intact run, or say what is wrong (a warning line). Never a traceback, never a replaced file.

Hypothesis draws the damage (tests/runs_mutate.py applies it to a fresh copy of the kind's
smallest committed run): a cell's value to another type, sign, magnitude or NaN; a row repeated
or a key cell changed to a dangling value; a manifest field to a JSON value of another type, or
removed; a lone surrogate escape in any string of the manifest; an arm's rows relabelled (to another
arm, an undeclared one) or deleted, or one repeat cut from every arm (issue 38's families; the
earlier draws changed one cell or one key, which never touched what the manifest declares);
and, for the kinds that resume, `--resume` of a damaged manifest. 15 examples a kind in CI's `-m slow` stage, 200 in its property run (tests/conftest.py
SLOW and profiles; out of the README's test command, as each example reports a copied run). Counterexamples found and fixed are kept in tests/test_runs_mutated.py.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import runs_mutate as rm

KINDS = sorted(k for k in rm.RUNS if k != "distributed")   # that one: test_properties_runs_distributed.py


@pytest.mark.parametrize("kind", KINDS)
@given(data=st.data())
def test_any_damage_is_refused_answered_the_same_or_said(kind: str, data: st.DataObject,
                                                         tmp_path_factory: pytest.TempPathFactory) -> None:
    rm.check(kind, tmp_path_factory.getbasetemp() / f"prop-{kind}", data)


def _gpu() -> bool:
    try:
        import torch
        return bool(torch.cuda.is_available())
    except Exception:
        return False


@pytest.mark.skipif(_gpu(), reason="--resume of an intact run would measure on this GPU")
@pytest.mark.parametrize("kind", sorted(rm.RESUMABLE))
@given(data=st.data())
def test_any_manifest_damage_resumes_as_one_line(kind: str, data: st.DataObject,
                                                 tmp_path_factory: pytest.TempPathFactory) -> None:
    """--resume of a damaged manifest (issue 38: 13 tracebacks of WorkloadConfig(**...), Family(...),
    LadderOptions(**...)) is one line naming manifest.json, or the intact run's own line."""
    rm.check_resume(kind, tmp_path_factory.getbasetemp() / f"resume-{kind}", data)
