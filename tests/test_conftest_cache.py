"""tests/conftest.py's one read per committed run dir: installed in the process that runs the
tests (an xdist worker, or pytest alone), never shared between callers, and never across an
edit. Without it every test file re-reads the same committed runs; with a wrong one, tests would
see each other's changes."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from conftest import EXAMPLES
from l2attr.analysis import load_runs

LOAD = sys.modules[load_runs.__module__]
RUN = EXAMPLES / "20261130T232557Z-fast-pin-element"      # a small committed ladder run

pytestmark = pytest.mark.skipif(os.environ.get("L2ATTR_TEST_READ_CACHE", "1") == "0",
                                reason="L2ATTR_TEST_READ_CACHE=0 turns the cache off")


def test_the_cache_is_installed_where_the_tests_run() -> None:
    assert getattr(LOAD.read_run, "__wrapped_by_tests__", False), os.environ.get("PYTEST_XDIST_WORKER")


def test_each_caller_gets_its_own_copy() -> None:
    first, second = LOAD.read_run(RUN), LOAD.read_run(RUN)
    assert first is not second and first.manifest == second.manifest
    first.manifest["kind"] = "edited by a test"
    assert LOAD.read_run(RUN).manifest["kind"] == second.manifest["kind"] != "edited by a test"


def test_a_dir_outside_examples_is_read_each_time(tmp_path: Path) -> None:
    copy = Path(shutil.copytree(RUN, tmp_path / RUN.name))
    before = LOAD.read_run(copy).manifest["created_utc"]
    manifest = copy / "manifest.json"
    manifest.write_text(manifest.read_text().replace(before, "2026-11-30T23:59:59Z"))
    assert LOAD.read_run(copy).manifest["created_utc"] == "2026-11-30T23:59:59Z"


def test_a_committed_experiment_is_read_once_and_each_caller_gets_its_own_copy() -> None:
    from l2attr.experiment import table as experiment_table

    run = EXAMPLES / "experiments" / "20261201T163314Z-my-pair"
    assert getattr(experiment_table.load_experiment, "__wrapped_by_tests__", False)
    first, second = experiment_table.load_experiment(run), experiment_table.load_experiment(run)
    assert first is not second and first.samples is not second.samples and first.samples.equals(second.samples)
    first.samples.loc[0, "condition"] = "edited by a test"
    assert experiment_table.load_experiment(run).samples.loc[0, "condition"] == second.samples.loc[0, "condition"]
