"""`l2attr.annotate(label, role=...)`: mark a user's own producer and consumer for Nsight Compute.

For users who keep their own loop and run `l2attr experiment profile -- python my_script.py`:
the range lands in l2attr's NVTX domain under the experiment grammar (names.experiment_range_name),
so the import, the DRAM attribution and the validity control read it like the engine's own calls.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator

from l2attr.vocab import Role
from l2attr.names import NVTX_DOMAIN, experiment_range_name


@contextmanager
def annotate(label: str, role: str = Role.CONSUMER.value, condition: str | None = None,
             call: int | None = None) -> Iterator[None]:
    """An NVTX push/pop range around the launches of one role of the user's pair."""
    name = experiment_range_name(role, label, condition, call)
    try:
        import nvtx
    except ImportError:      # no nvtx: nothing to mark, the code still runs
        yield
        return
    with nvtx.annotate(name, domain=NVTX_DOMAIN):
        yield


def range_context(experiment: str, condition: str) -> Any:
    """(role, call) -> the engine's range for one call of a declared experiment."""
    def ranges(role: Role, call: int) -> Any:
        return annotate(experiment, role.value, condition, call)
    return ranges
