"""Output paths, checked before any work: never one of the command's inputs, never a file of a
run dir, never a new folder, never through a link that leads nowhere.

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

import os
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
