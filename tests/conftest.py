"""Shared test fixtures: paths to recorded data (all inside the repository, so a clone runs every
CPU test), and the `gpu` mark that skips without a GPU."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures"
EXAMPLES = REPO / "examples"
# The first lines of the artifact's traces and hot file: tests/fixtures/traces/README.md
TRACES = FIXTURES / "traces"
MEDIUM_CUT = TRACES / "reuse_medium_head4000.txt"
LOW_CUT = TRACES / "reuse_low_head4000.txt"
HOT_MEDIUM_CUT = TRACES / "hot60k_medium_head2000.txt"
KERNEL_REPLAY_REPORT = FIXTURES / "ncu" / "pin_consume_kernel_replay_h200.ncu-rep"

# Property tests: few examples (the suite stays under 3 minutes on 2 cores), no per-example
# deadline (CSV round trips on a busy CI machine). HYPOTHESIS_PROFILE=thorough for a deep run.
settings.register_profile("l2attr", max_examples=40, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", max_examples=2000, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "l2attr"))


def _gpu_available() -> bool:
    try:
        import cupy  # noqa: F401
        import torch

        return bool(torch.cuda.is_available())
    except Exception:
        return False


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if any(item.get_closest_marker("gpu") for item in items) and not _gpu_available():
        skip = pytest.mark.skip(reason="needs a CUDA GPU with torch and cupy")
        for item in items:
            if item.get_closest_marker("gpu"):
                item.add_marker(skip)
