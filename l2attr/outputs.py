"""What a command checks before any work: its output paths, and the memory and disk its sizes need.

Why one module: both refuse, up front and in one line, what would otherwise fail (or do harm)
only after the work is done.

Standard output and error closed at start (`>&-`): held on /dev/null, stdout counting what was
lost (`ClosedStdout`), so a print is no AttributeError and the CLI can say what happened.

Output paths: never one of the command's inputs, never a file of a run dir, never a new folder,
never through a link that leads nowhere.

Why before: an output that equals an input (`traces hot med.txt --out med.txt`) would replace
the data the command is reading, and a typo in a folder name would otherwise either create a
stray tree or fail only after minutes of work. Why every file of a run dir: a run is read
through more files than its plain tables (`samples.csv.gz`, `sweep_dram.csv`, `occupy_ncu.json`,
`ncu/*.ncu-rep`, `trace.json.gz`), and a report written over any of them, or through a link to
one, replaces measured data with a page; a report written beside them would be taken for part of
the run. Why a dangling link is refused: writing through it creates a file (or a tree) wherever
it points, which is never what the user named.
"""

from __future__ import annotations

import io
import os
import shutil
import sys
from collections.abc import Iterable
from pathlib import Path

from l2attr.errors import UserError

MANIFEST = "manifest.json"     # rundir.MANIFEST (not imported: rundir imports pandas)


def same_file(a: Path, b: Path) -> bool:
    """True when both paths name one existing file (through links, `..` or hard links)."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def enclosing_run_dir(path: Path) -> Path | None:
    """The run dir (a folder with a manifest.json) that holds `path`, as written or where its
    links lead; None when neither lies inside one."""
    path = Path(path)
    for where in (Path(os.path.abspath(path)), Path(os.path.realpath(path))):
        for folder in where.parents:
            if (folder / MANIFEST).is_file():
                return folder
    return None


def shown(folder: Path) -> str:
    """A folder as the user would name it from here: relative when below the current folder."""
    rel = os.path.relpath(folder)
    return str(folder) if rel.startswith("..") else rel


def run_files(run_dirs: Iterable[Path]) -> list[Path]:
    """Every file under the run dirs (what a hard link to any of them would share)."""
    out: list[Path] = []
    for d in run_dirs:
        for root, _dirs, files in os.walk(d):
            out.extend(Path(root) / f for f in files)
    return out


def refuse_dangling(path: Path, flag: str) -> None:
    """A link whose target does not exist: writing through it would create that target."""
    path = Path(path)
    if path.is_symlink() and not path.exists():
        raise UserError(f"{flag} {path} is a link to {os.readlink(path)}, which does not exist; "
                        "give the file or folder itself")


def check_output(path: Path, flag: str, inputs: Iterable[Path | None] = ()) -> Path:
    """Refuse an output that is a folder, one of `inputs`, a file of a run dir (or inside one, or a
    link into one), a dangling link, or inside a folder that does not exist."""
    path = Path(path)
    refuse_dangling(path, flag)
    if path.is_dir():
        raise UserError(f"{flag} {path} is a directory; give a file name")
    for source in inputs:
        if source is not None and same_file(path, Path(source)):
            alias = "" if str(source) == str(path) else f" (the same file as {source})"
            raise UserError(f"{flag} {path} is an input of this command{alias}; write to another file")
    run = enclosing_run_dir(path)
    if run is not None:
        raise UserError(f"{flag} {path} is inside run dir {shown(run)}: every file there is the run's data; "
                        "write outside it")
    if not Path(os.path.abspath(path)).parent.is_dir():
        raise UserError(f"{flag} {path}: folder {path.parent} does not exist (create it first)")
    return path


def check_out_folder(path: Path, flag: str = "--out") -> Path:
    """A folder that run dirs go into (made if absent): not a file, not below a file, not a
    dangling link. (Inside a run dir is allowed: a sweep's DRAM pass and a profile's child
    ladders write their runs under the parent's folder.)"""
    path = Path(path)
    refuse_dangling(path, flag)
    if path.exists() and not path.is_dir():
        raise UserError(f"{flag} {path} is a file; give the folder the run dirs go into")
    parent = next((p for p in (path, *path.parents) if p.exists() or p.is_symlink()), None)
    if parent is not None:
        refuse_dangling(parent, flag)
        if not parent.is_dir():
            raise UserError(f"{flag} {path}: {parent} is a file, not a folder")
    return path


def check_distinct(outputs: dict[str, Path | None]) -> None:
    """Refuse two outputs of one command that name one file (the second would replace the first)."""
    seen: dict[str, str] = {}
    for flag, path in outputs.items():
        if path is None:
            continue
        key = os.path.realpath(path)
        if key in seen:
            raise UserError(f"{seen[key]} and {flag} name the same file ({path}); give two files")
        seen[key] = flag


# -- sizes, before allocating or writing ---------------------------------------------------------
# One line with an estimate instead of a MemoryError. Why: numpy reports an impossible request
# (`--rows 99999999999999`) only when it allocates, as a MemoryError traceback; a disk that fills
# up leaves the user with a failed write after the work is done. An estimate up front says what to
# shrink. The estimates are rough (the peak of the arrays a step holds at once), so a check refuses
# only what clearly does not fit.

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


# -- a closed standard output ------------------------------------------------------------------

class ClosedStdout(io.TextIOBase):
    """sys.stdout of a process started with fd 1 closed (`l2attr step --show RUN >&-`): Python
    leaves sys.stdout None there, and the first print or flush was an AttributeError traceback.
    Writes are counted, not made; `_main` says at the end that the output was lost (exit 2), and a
    command that printed nothing ends as it would have (a quiet exit 0)."""

    def __init__(self) -> None:
        super().__init__()
        self.lost = 0

    def write(self, text: str) -> int:
        self.lost += len(text)
        return len(text)

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return "utf-8"


def _fd_closed(fd: int) -> bool:
    try:
        os.fstat(fd)
        return False
    except OSError:
        return True


def guard_closed_streams() -> None:
    """A stdout or stderr closed at start (`>&-`, `2>&-`): its fd is held open on /dev/null, so no
    file the command opens later takes fd 1 or 2 (a child process would write into it); stdout
    becomes a ClosedStdout, stderr /dev/null (nobody is left to read it)."""
    for fd, name in ((1, "stdout"), (2, "stderr")):
        if getattr(sys, name) is not None:
            continue
        if _fd_closed(fd):
            devnull = os.open(os.devnull, os.O_WRONLY)
            if devnull != fd:
                os.dup2(devnull, fd)
                os.close(devnull)
        setattr(sys, name, ClosedStdout() if fd == 1 else open(os.devnull, "w"))
