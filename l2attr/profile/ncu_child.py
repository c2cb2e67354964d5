"""Run an ncu_report reader in a fresh interpreter and get its plain-JSON answer back.

Nsight Compute 2025.3.1's `ncu_report` crashed (SIGSEGV in `IMetric.unit()`) on the H200 image
whenever numpy had been imported before it (see `ncu_rows`), and l2attr always has numpy
loaded. A reader module therefore offers a `python -m <module> ...` entry that imports ncu_report
first, prints one JSON object (`{"error": msg}` for a user error) and exits; `run_reader` starts
it and turns a crash or an error into one `UserError` line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Sequence

from l2attr.errors import UserError


def run_reader(module: str, args: Sequence[str], what: Path | str) -> dict[str, Any]:
    """`python -m module *args` with l2attr importable; its JSON object, or a UserError about `what`."""
    import l2attr

    env = dict(os.environ)
    root = str(Path(l2attr.__file__).resolve().parents[1])
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    res = subprocess.run([sys.executable, "-m", module, *args], capture_output=True, text=True,
                         env=env, check=False)
    try:
        data = json.loads(res.stdout) if res.stdout.strip() else {}
    except json.JSONDecodeError:
        data = {}
    if isinstance(data, dict) and "error" in data:
        raise UserError(str(data["error"]))
    if res.returncode != 0 or not isinstance(data, dict) or not data:
        why = f"signal {-res.returncode}" if res.returncode < 0 else f"status {res.returncode}"
        tail = (res.stderr.strip().splitlines() or [""])[-1][:200]
        raise UserError(f"{what}: the ncu_report reader failed ({why}) {tail}".rstrip())
    return data


def answer(produce: Any) -> int:
    """Child side: print `produce()` as JSON, or `{"error": ...}` for a UserError; the exit status."""
    try:
        data = produce()
    except UserError as exc:
        print(json.dumps({"error": str(exc)}))
        return 3
    json.dump(data, sys.stdout)
    return 0


__all__ = ["run_reader", "answer"]
