"""A device call by named plan: install what was carried, run the plan's steps each within its
budget, pack what comes back.

    python3 tools/device.py PLAN [-- ARG ...]   on the device, from the repository root; ARGs go to
                                                the plan's main step (the grid's hf_grid.py flags)
    python3 tools/device.py --list              the plans and what each is for
    python3 tools/device.py --pack-wheels [PY]  here, before a call: .whl/*-min.tar.xz to carry

Why one runner: each campaign of past issues was a shell script that repeated the install, its
step banners, its timeouts and its `tar czf`; a plan is now data (tools/device_plans.py's PLANS),
and tools/device_run.py holds the rest once: the install, the banner, the budgets, the archives. Everything goes under $OUT (default out/): each step's log
under $OUT/logs, and at the end what a call brings back is held to its limits (at most 8 files,
16 MiB each, no deeper than $OUT/a/b/file): what does not fit is packed into archives. A step that
runs past its budget is stopped (its process group killed) and said; the steps after it still run
where time is left, and the packing steps always run.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from device_run import (MAX_BYTES, MAX_DEPTH, MAX_FILES, ROOT, Ctx, Plan, Step, argv_of, fit_limits,  # noqa: E402,F401
                        gpu_name, pack, prepare, run_plan)


def main(argv: list[str]) -> int:
    from device_plans import PLANS, pack_wheels

    if argv[:1] == ["--list"]:
        for name, plan in PLANS.items():
            print(f"{name}: {plan.doc}")
        return 0
    if argv[:1] == ["--pack-wheels"]:
        return pack_wheels(ROOT, argv[1] if len(argv) > 1 else sys.executable)
    if not argv or argv[0] not in PLANS:
        print(f"device: no plan {argv[0]!r}; plans: {', '.join(PLANS)}" if argv else
              f"device: name a plan: {', '.join(PLANS)}", file=sys.stderr)
        return 2
    name, rest = argv[0], argv[1:]
    rest = rest[1:] if rest[:1] == ["--"] else rest
    out = Path(os.environ.get("OUT", "out")).resolve()
    (out / "logs").mkdir(parents=True, exist_ok=True)
    ctx = Ctx(out=out, args=rest, gpu=gpu_name(), env=prepare(ROOT, dict(os.environ)))
    print(f"device: plan {name} on {ctx.gpu or 'no GPU'}, commit {ctx.env.get('COMMIT', '?')}", flush=True)
    return run_plan(PLANS[name], ctx)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
