"""Shared test fixtures: paths to recorded data, and the `gpu` mark that skips without a GPU."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
ARTIFACT_TRACES = SHARED / "traces" / "artifact"
SHARED_NCU = SHARED / "fixtures" / "ncu"
FIXTURES = REPO / "tests" / "fixtures"
EXAMPLES = REPO / "examples"


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


@pytest.fixture
def artifact_traces() -> Path:
    if not ARTIFACT_TRACES.is_dir():
        pytest.skip(f"artifact traces not present at {ARTIFACT_TRACES}")
    return ARTIFACT_TRACES


@pytest.fixture
def shared_ncu_report() -> Path:
    f = SHARED_NCU / "pin_consume_kernel_replay_h200.ncu-rep"
    if not f.is_file():
        pytest.skip(f"shared ncu fixture not present at {f}")
    return f
