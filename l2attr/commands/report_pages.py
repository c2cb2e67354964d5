"""`l2attr report`: which run dirs it reads (the walk below the folders named), and the page of
the run kinds with a page of their own (experiment, step runs), found in the registry (kinds.py).

The walk: a walk that skips quietly makes a page of 2 of 3 runs that looks whole. So every folder
it passes over is named on stderr with the reason (no manifest.json; one that is a folder, a FIFO,
a dangling link; a link to a folder already walked), and links are followed once: a real path
already seen is not entered again (two links from a folder to itself ended the walk only after a
minute and more). Hidden folders (.git) are not walked, as a shell glob skips them.

The pages, one rule for both kinds: such runs are reported on their own (mixing them with ladder runs is one
clear line), as one HTML page, a Markdown page or text for the terminal; after a page is written
the console says its answer (a step's headline, or the index of several steps; each experiment's
headline).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Callable

from l2attr.errors import Damage, UserError
from l2attr.kinds import KINDS, pages
from l2attr.manifest_model import typed
from l2attr.outputs import check_output
from l2attr.rundir import MANIFEST, RunDir
from l2attr.safe_read import not_a_file


# -- the walk ---------------------------------------------------------------------------------------

Say = Callable[[str], None]


def _stderr(line: str) -> None:
    print(f"l2attr report: {line}", file=sys.stderr)


def _real(path: Path) -> str:
    return os.path.realpath(path)


def why_not_a_run(folder: Path) -> str | None:
    """None for a run dir (a regular manifest.json); else why not, as words for one line."""
    what = not_a_file(folder / MANIFEST)
    if what is None:
        return None
    if what == "missing":
        return f"not a run dir (no {MANIFEST})"
    return f"its {MANIFEST} is {what}, not a file"


def expand_run_dirs(paths: list[Path], say: Say = _stderr) -> list[Path]:
    """The run dirs the arguments name: a run dir itself, or a folder holding run dirs at any depth
    (`examples/`, `examples/steps/` whose runs sit in runs/ and surgery/): the run dirs nearest
    below it, those of the shallowest level that holds any (so `examples/` is its own runs, not
    the experiments and steps in its subfolders); every other folder of that level is named with
    the reason it was skipped. Among several arguments, an existing file or folder that holds none
    (a shell glob's report.html, logs/) is skipped with a line saying so; a path that does not
    exist is an error (a typo must not shrink the report quietly). A run dir reached twice (two
    arguments, or links to one folder) is read once."""
    out: dict[str, Path] = {}
    for p in paths:
        if not os.path.lexists(p):
            raise UserError(f"run dir not found: {p}")
        if not p.exists():
            raise UserError(f"run dir not found: {p} (a dangling link to {os.readlink(p)})")
        why = why_not_a_run(p) if p.is_dir() else f"not a run dir (no {MANIFEST})"
        inner = [p] if why is None else runs_below(p, say) if p.is_dir() and why.startswith("not a") else []
        for run in inner:
            out.setdefault(_real(run), run)
        if inner:
            continue
        if len(paths) > 1:
            say(f"skipped {p}: {why}")
        elif why.startswith("not a"):
            raise UserError(f"{p} is not an l2attr run dir (no {MANIFEST}) and holds none")
        else:
            raise UserError(f"{p} is no readable run dir: {why}")
    if not out:
        raise UserError(f"none of the arguments is a run dir (a folder with {MANIFEST})")
    return list(out.values())


def _subfolders(folder: Path, say: Say) -> list[Path]:
    """The folders in `folder` (links to folders included), in name order; a dangling link is named."""
    try:
        entries = sorted(folder.iterdir())
    except OSError as exc:
        say(f"skipped {folder}: cannot be read ({exc.strerror or exc})")
        return []
    subs = []
    for d in entries:
        if d.name.startswith("."):
            continue
        if d.is_dir():
            subs.append(d)
        elif d.is_symlink() and not d.exists():
            say(f"skipped {d}: a dangling link to {os.readlink(d)}")
    return subs


def runs_below(folder: Path, say: Say = _stderr) -> list[Path]:
    """The run dirs of the shallowest level below `folder` that holds any, in name order; every
    other folder of that level is named (`say`) with its reason. A run dir's own folders are never
    searched, nor hidden ones, nor a folder whose real path was walked already (a link loop)."""
    seen = {_real(folder): folder}
    level = [folder]
    while level:
        subs = []
        for f in level:
            for d in _subfolders(f, say):
                real = _real(d)
                if real in seen:
                    how = "a link to" if d.is_symlink() else "the same folder as"
                    say(f"skipped {d}: {how} {seen[real]}, a folder already walked")
                    continue
                seen[real] = d
                subs.append(d)
        why = {d: why_not_a_run(d) for d in subs}
        found = [d for d in subs if why[d] is None]
        if found or any(not w.startswith("not a") for w in why.values() if w):
            for d in subs:
                if why[d] is not None:
                    say(f"skipped {d}: {why[d]}")
            return found
        level = subs
    return []


# -- the pages --------------------------------------------------------------------------------------

def page_kind(run_dirs: list[Path]) -> str | None:
    """The one page kind among the run dirs, or None; mixing it with any other run is refused, and
    a run whose manifest cannot be read is named with its damage (not as a run of another kind)."""
    kinds: dict[Path, str | None] = {}
    damaged: list[UserError] = []
    for d in run_dirs:
        try:
            kinds[d] = typed(RunDir.open(d).manifest()).kind
        except UserError as exc:
            damaged.append(exc)
    paged = {k for k in kinds.values() if k in pages()}
    if not paged:
        return None
    if damaged:
        raise damaged[0]
    kind = sorted(paged)[0]
    others = [d for d, k in kinds.items() if k != kind]
    if others:
        raise UserError(f"{others[0]} is not a {kind} run: report {kind} runs on their own")
    return kind


def report_page(kind: str, run_dirs: list[Path], fmt: str, output: Path | None,
                emit: Callable[[Path | None, str], int], write: Callable[[Path, str], None],
                allow_partial: bool = False) -> int:
    """The kind's page; with `allow_partial` a run short of what its manifest declares is read,
    and each shortfall said on the console and on the page (the answer's first line)."""
    title, read = KINDS[kind].page
    damage = Damage(allow_partial)
    page = read(run_dirs, damage)
    for message in damage.messages:
        print(f"l2attr report: warning: partial data: {message}", file=sys.stderr)
    if fmt in ("md", "text"):
        code = emit(output, page.markdown(title) if fmt == "md" else page.text())
        if output is not None and page.console:       # on stdout the page itself carries it
            print(page.console)
        return code
    if output is None:
        output = check_output(Path("report.html"), "the default output")
    html = page.html()
    write(output, html)
    print(f"wrote {output} ({len(html.encode()) / 1e6:.1f} MB)")
    if page.console:
        print(page.console)
    return 0


__all__ = ["report_page", "page_kind", "expand_run_dirs", "runs_below"]
