"""Atomic file writes: a crash leaves either the old file or the new one, never half of one."""

from __future__ import annotations

import errno
import json
import os
import stat
import tempfile
from pathlib import Path
from typing import Any, BinaryIO, Callable

import pandas as pd


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_MODE = 0o666 & ~_umask()  # what open() would have given; mkstemp's 0600 would hide results
# the flush to disk every write ends with (a power cut keeps the old file or the new one); one
# name, so the test suite, which never cuts the power, can make it a no-op (tests/conftest.py)
_fsync = os.fsync


def writes_directly(path: Path) -> bool:
    """True when `path` must be opened and written, not replaced: a device node (`-o /dev/null`),
    a FIFO, or a file reached through /dev or /proc (`-o /dev/stdout` of a redirected shell).
    Renaming over them would put a regular file where the system's device was (as root), or fail.
    A directory is refused: there is nothing to write into."""
    try:
        st = os.stat(path)           # follows links: what the name leads to
    except (FileNotFoundError, NotADirectoryError):
        return False
    if stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(errno.EISDIR, "is a directory; give a file name", str(path))
    if not stat.S_ISREG(st.st_mode):
        return True
    special = ("/dev/", "/proc/")
    return os.path.abspath(path).startswith(special) or os.path.realpath(path).startswith(special)


def write_stream(path: Path, write: Callable[[BinaryIO], None]) -> None:
    """Call write(fh) on a temp file next to `path`, fsync, then rename it over `path`.

    Only regular files and new names are replaced that way (a link is followed, so the link
    stays and its target is replaced); a device, FIFO or /dev/stdout is written to directly
    (writes_directly)."""
    path = Path(path)
    if writes_directly(path):
        with open(path, "wb") as fh:
            write(fh)
            fh.flush()
        return
    if path.is_symlink():
        path = Path(os.path.realpath(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temps(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            _fsync(fh.fileno())
        os.chmod(tmp, _MODE)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def remove_stale_temps(path: Path) -> list[Path]:
    """Remove the temp files of earlier writes of `path` whose process is gone (SIGKILL, a power
    cut: nothing ran to remove them); the ones removed. A temp file is named `.NAME.PID.XXXX.tmp`
    by the process writing it, so a live writer's is left alone."""
    gone = []
    prefix = f".{path.name}."
    try:
        siblings = [p for p in path.parent.iterdir() if p.name.startswith(prefix) and p.name.endswith(".tmp")]
    except OSError:
        return gone
    for p in siblings:
        pid = p.name[len(prefix):-len(".tmp")].split(".")[0]
        if not pid.isdigit() or int(pid) == os.getpid() or _alive(int(pid)):
            continue
        try:
            p.unlink()
            gone.append(p)
        except OSError:
            pass
    return gone


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return True
    return True


def write_text(path: Path, text: str) -> None:
    write_stream(path, lambda fh: fh.write(text.encode()))


def write_bytes(path: Path, data: bytes) -> None:
    write_stream(path, lambda fh: fh.write(data))


def write_json(path: Path, obj: Any) -> None:
    write_text(path, json.dumps(obj, indent=2, sort_keys=False, default=str) + "\n")


def write_csv(path: Path, df: pd.DataFrame) -> None:
    write_text(path, df.to_csv(index=False))


def append_csv(path: Path, df: pd.DataFrame) -> None:
    """Append rows to a CSV journal in one write(), fsync'd; a new file is written atomically.

    The rows must carry the file's columns in its order (the caller checks the header). A crash
    during the write can leave a cut last line; readers detect it and `--resume` re-measures the
    repeat it belonged to. Rewriting a growing table after every repeat cost seconds per run.
    """
    path = Path(path)
    if not path.is_file():
        write_csv(path, df)
        return
    data = df.to_csv(index=False, header=False).encode()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        _fsync(fd)
    finally:
        os.close(fd)
