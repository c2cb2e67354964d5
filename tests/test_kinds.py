"""The registry of run kinds (l2attr/kinds.py, issue 51): each row names a command module with the
CLI's two functions, an integrity module, a loader that reads a committed run, and the options
model where the kind has one; the CLI and the report's pages are read from it."""

from __future__ import annotations

from pathlib import Path

import pytest

from l2attr.kinds import KINDS, options_models, pages

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("name", sorted(KINDS))
def test_each_row_names_what_is_there(name: str) -> None:
    kind = KINDS[name]
    mod = kind.command_module()
    assert callable(mod.add_arguments) and callable(mod.run)
    assert kind.rules().__name__ == kind.checks


def test_the_cli_and_the_report_read_the_registry() -> None:
    from l2attr.cli import SUBCOMMANDS

    assert {n: SUBCOMMANDS[n][0] for n in KINDS} == {n: k.command for n, k in KINDS.items()}
    assert sorted(pages()) == ["experiment", "step"]


def test_the_options_models_are_the_kinds() -> None:
    from l2attr.dlrm.measure.options import LadderOptions
    from l2attr.steps.declare import StepOptions

    assert options_models() == {"ladder": LadderOptions, "step": StepOptions}


def test_a_loader_reads_its_kinds_run_and_refuses_another() -> None:
    from l2attr.errors import STRICT, UserError

    run = ROOT / "examples" / "experiments" / "20261201T163314Z-my-pair"
    assert not KINDS["experiment"].load(run, STRICT).samples.empty
    with pytest.raises(UserError, match="not a step run"):
        KINDS["step"].load(run, STRICT)
