"""The Nsight Compute child contract: how a re-entered script knows it is being profiled.

Application replay re-runs the whole process once per pass, so the profiled process is the
user's own script (or `python -m l2attr experiment child MODULE:ATTR`). The parent sets one
environment variable; in the child, `Experiment.time()` measures nothing and
`Experiment.profile()` runs the profiled calls of the named experiment and exits.
"""

from __future__ import annotations

import json
import os
from contextlib import contextmanager
from typing import Any, Iterator

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
