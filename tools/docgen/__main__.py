"""Regenerate the docs' generated blocks from the committed runs, one entry for all of them.

    python tools/docgen                          # print every block
    python tools/docgen --write                  # write every block into the page that holds it
    python tools/docgen results sweeps --write   # only those generators

Why one entry: each generator is its own module (results, experiments, sweeps, speed_record,
reproduction) and stays runnable as `python tools/docgen/NAME.py`, but a maintainer who changed a
run or a template wants them all; each page's test says which one is stale.
"""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
GENERATORS = ("results", "experiments", "sweeps", "speed_record", "reproduction")


def main(argv: list[str]) -> int:
    names = [a for a in argv if not a.startswith("-")] or list(GENERATORS)
    flags = [a for a in argv if a.startswith("-")]
    unknown = [n for n in names if n not in GENERATORS]
    if unknown or any(f not in ("--write",) for f in flags):
        print(f"docgen: unknown {' '.join(unknown + flags)}; generators: {', '.join(GENERATORS)}; flag: --write",
              file=sys.stderr)
        return 2
    sys.path.insert(0, str(HERE))
    for name in names:
        sys.argv = [str(HERE / f"{name}.py"), *flags]
        try:
            runpy.run_path(sys.argv[0], run_name="__main__")
        except SystemExit as exc:       # a generator's own exit status: stop at the first failure
            if exc.code not in (None, 0):
                return exc.code if isinstance(exc.code, int) else 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
