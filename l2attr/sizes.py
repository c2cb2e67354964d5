"""Size checks before allocating or writing: one line with an estimate instead of a MemoryError.

Why: numpy reports an impossible request (`--rows 99999999999999`) only when it allocates, as
a MemoryError traceback; a disk that fills up leaves the user with a failed write after the
work is done. An estimate up front says what to shrink. The estimates are rough (the peak of
the arrays a step holds at once), so a check refuses only what clearly does not fit.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from l2attr.errors import UserError

_UNITS = ("bytes", "kB", "MB", "GB", "TB", "PB", "EB")


def human_bytes(n: float) -> str:
    """Decimal units, three significant figures at most: 361 MB, 1.2 GB, 800 TB."""
    value, unit = float(n), 0
    while value >= 1000 and unit < len(_UNITS) - 1:
        value, unit = value / 1000, unit + 1
    if unit == 0:
        return f"{int(value)} bytes"
    return f"{value:.3g} {_UNITS[unit]}"


def available_memory() -> int | None:
    """Memory a new allocation can get (MemAvailable), or the physical total; None if unknown."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def free_disk(folder: Path) -> int | None:
    try:
        return shutil.disk_usage(folder).free
    except OSError:
        return None


def check_memory(need: int, what: str, hint: str) -> None:
    """Refuse `what` when its estimated peak memory exceeds what this machine has free."""
    have = available_memory()
    if have is not None and need > have:
        raise UserError(f"{what} needs about {human_bytes(need)} of memory, this machine has "
                        f"{human_bytes(have)} available; {hint}")


def check_disk(need: int, path: Path, hint: str) -> None:
    """Refuse writing about `need` bytes to `path` when its disk has less free space."""
    folder = Path(os.path.abspath(path)).parent
    have = free_disk(folder)
    if have is not None and need > have:
        raise UserError(f"{path} would take up to {human_bytes(need)}, the disk holding {folder} "
                        f"has {human_bytes(have)} free; {hint}")


def id_file_bytes(n: int, rows: int) -> int:
    """Largest size of a trace of n ids below `rows`: each line is at most len(str(rows - 1)) + 1."""
    return n * (len(str(max(rows - 1, 0))) + 1)
