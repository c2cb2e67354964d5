"""A script under Nsight Compute: `l2attr.annotate(label, role=...)` marks a user's own producer and
consumer, and the child contract tells a re-entered script that it is being profiled.

Why one module: both are how the profiled process and l2attr understand each other, with nothing
but the standard library and the range grammar (names.py).

`annotate` is for users who keep their own loop and run `l2attr experiment profile -- python
my_script.py`: the range lands in l2attr's NVTX domain under the experiment grammar
(names.experiment_range_name), so the import, the DRAM attribution and the validity control read it
like the engine's own calls.
"""

from __future__ import annotations

import json
import os
from contextlib import contextmanager
from typing import Any, Iterator

from l2attr.names import NVTX_DOMAIN, experiment_range_name
from l2attr.vocab import Role


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


# -- the child contract --------------------------------------------------------------------------
# Application replay re-runs the whole process once per pass, so the profiled process is the
# user's own script (or `python -m l2attr experiment child MODULE:ATTR`). The parent sets one
# environment variable; in the child, `Experiment.time()` measures nothing and
# `Experiment.profile()` runs the profiled calls of the named experiment and exits.

ENV = "L2ATTR_EXPERIMENT_CHILD"


def child_env(experiment: str, calls: int, warmup: int) -> dict[str, str]:
    """The variable the parent sets for the child."""
    return {ENV: json.dumps({"experiment": experiment, "calls": int(calls), "warmup": int(warmup)})}


def child_spec() -> dict[str, Any] | None:
    """What the parent asked of this process, or None when it is not a profiling child."""
    raw = os.environ.get(ENV)
    if not raw:
        return None
    try:
        spec = json.loads(raw)
    except json.JSONDecodeError:
        return None
    return spec if isinstance(spec, dict) and "experiment" in spec else None


@contextmanager
def environment(env: dict[str, str]) -> Iterator[None]:
    """`env` set for the child processes started inside (ncu passes its environment on), then
    the process's own values back."""
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
