"""Run directories: one folder per run, a manifest, and tidy tables written atomically (and read
back in today's columns, a schema-1 table upgraded on the way)."""

from __future__ import annotations

import datetime as dt
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from l2attr import atomic
from l2attr.csvfile import read_complete_csv
from l2attr.errors import STRICT, Damage, UserError
from l2attr.safe_read import parse_json_limited, read_text_limited
from l2attr.schema import CELLS, READABLE_VERSIONS, SAMPLES, SCHEMA_VERSION, TABLES, Table, check_frame
from l2attr.vocab import Command, Family, Pin, Quantity, RungId, Timer

COMPLETE = "complete"      # the manifest status a finished run writes (steps/measure/run.py, the readers check it)

MANIFEST = "manifest.json"
# the kinds l2attr wrote before kernel families (schema version 1): the ladder and its profile
V1_KINDS = (Command.LADDER.value, Command.PROFILE.value)


def utc_stamp(now: dt.datetime | None = None) -> str:
    now = now or dt.datetime.now(dt.timezone.utc)
    return now.strftime("%Y%m%dT%H%M%SZ")


def run_manifest(name: str, manifest: dict[str, Any], now: dt.datetime) -> dict[str, Any]:
    """What every manifest starts with (schema version, run name, creation time), then the run's own."""
    return {"schema_version": SCHEMA_VERSION, "name": name, "created_utc": now.isoformat(timespec="seconds"),
            **manifest}


@dataclass
class RunDir:
    path: Path

    # -- creation / opening -------------------------------------------------------------------
    @classmethod
    def create(cls, root: Path, name: str, manifest: dict[str, Any]) -> "RunDir":
        if not re.fullmatch(r"[A-Za-z0-9._-]+", name):
            raise UserError(f"run name {name!r}: use letters, digits, '.', '_' and '-' only")
        from l2attr.outputs import check_out_folder

        check_out_folder(Path(root))
        now = dt.datetime.now(dt.timezone.utc)
        path = Path(root) / f"{utc_stamp(now)}-{name}"
        path.mkdir(parents=True, exist_ok=False)
        run = cls(path)
        run.write_manifest(run_manifest(name, manifest, now))
        return run

    @classmethod
    def open(cls, path: Path) -> "RunDir":
        """The run dir at `path`, its manifest readable as a JSON object of a readable schema: the
        one opening path of every reader (report, show, --resume), so a damaged manifest is one line
        naming the file and the rule whichever command meets it."""
        path = Path(path)
        if not path.is_dir():
            raise UserError(f"run dir not found: {path}")
        if not (path / MANIFEST).is_file():
            raise UserError(f"{path} is not an l2attr run dir (no {MANIFEST})")
        run = cls(path)
        manifest = run.manifest()
        if "schema_version" not in manifest and "kind" not in manifest:
            raise UserError(f"{path / MANIFEST}: not an l2attr run (its JSON has no schema_version and no kind; "
                            "every manifest l2attr writes has both)")
        kind = manifest.get("kind")
        if kind is not None and not isinstance(kind, str):
            raise UserError(f"{path / MANIFEST}: kind must be a string (found {kind!r})")
        version = manifest.get("schema_version")
        if version not in READABLE_VERSIONS or isinstance(version, bool):
            raise UserError(f"{path / MANIFEST}: schema version {version!r}, this l2attr reads "
                            f"{', '.join(map(str, READABLE_VERSIONS))}")
        if version == 1 and kind not in V1_KINDS:
            raise UserError(f"{path / MANIFEST}: schema_version must be 2 for a {kind} run (version 1 is a "
                            f"{' or '.join(V1_KINDS)} run written before kernel families; no {kind} writer wrote it)")
        return run

    # -- manifest -----------------------------------------------------------------------------
    def manifest(self) -> dict[str, Any]:
        """manifest.json as a dict; anything else (not UTF-8, not JSON, not an object, nested past
        what a writer nests, a number too long to read) is one UserError naming the file."""
        return read_manifest(self.path / MANIFEST)

    def write_manifest(self, manifest: dict[str, Any]) -> None:
        atomic.write_json(self.path / MANIFEST, manifest)

    def update_manifest(self, **changes: Any) -> None:
        m = self.manifest()
        m.update(changes)
        self.write_manifest(m)

    # -- tables -------------------------------------------------------------------------------
    def table_file(self, table: Table) -> Path:
        """The table's file: `<name>.csv`, or `<name>.csv.gz` / `.csv.xz` where a committed run
        keeps it compressed (xz for the largest, a third smaller; writers always write the plain file)."""
        plain = self.path / table.filename
        for packed in (plain.with_name(plain.name + ".gz"), plain.with_name(plain.name + ".xz")):
            if not plain.is_file() and packed.is_file():
                return packed
        return plain

    def has(self, table: Table) -> bool:
        return self.table_file(table).is_file()

    def read(self, table: Table, damage: Damage = STRICT) -> pd.DataFrame:
        f = self.table_file(table)
        if not f.is_file():
            raise UserError(f"{self.path}: no {table.filename}")
        df = read_complete_csv(f, damage)
        manifest = self.manifest()
        if manifest.get("schema_version") == 1:
            df = upgrade_v1(df, table, manifest)
        return check_frame(df, table, str(f))

    def write(self, table: Table, df: pd.DataFrame) -> None:
        check_frame(df, table, f"writing {table.filename}")
        cols = list(table.columns) + [c for c in df.columns if c not in table.columns]
        atomic.write_csv(self.path / table.filename, df[cols])

    def append(self, table: Table, rows: pd.DataFrame) -> None:
        """Add rows at the end of a table (one write; see atomic.append_csv).

        When the rows bring columns the file's header lacks, the table is rewritten whole."""
        f = self.path / table.filename
        if self.has(table) and not f.is_file():      # only the compressed copy: rewrite it plain
            packed = self.table_file(table)
            rows = pd.concat([self.read(table), rows], ignore_index=True)
            self.write(table, rows)
            packed.unlink()
            return
        if self.has(table):
            with f.open() as fh:
                header = fh.readline().rstrip("\n").split(",")
            if set(rows.columns) <= set(header) and set(table.columns) <= set(header):
                check_frame(rows, table, f"appending to {table.filename}")
                atomic.append_csv(f, rows.reindex(columns=header))
                return
            rows = pd.concat([self.read(table), rows], ignore_index=True)
        self.write(table, rows)


# l2attr's writers nest a manifest a few levels deep; deeper is damage, and Python's parser
# would meet its recursion limit (a traceback) long before it reached anything meaningful.
MAX_MANIFEST_DEPTH = 64
# the largest committed manifest (a distributed run's) is some 35 kB; 16 MiB is damage (/dev/zero)
MAX_MANIFEST_BYTES = 16 << 20


def upgrade_v1(df: pd.DataFrame, table: Table, manifest: dict) -> pd.DataFrame:
    """Read a schema-1 table (written before kernel families) in today's columns.

    Every schema-1 run used today's `tuned` kernels; its pin granularity is the run's
    `measure.pin_granularity` (default line); `call_wall` became quantity `call` with timer `wall`.
    """
    if "rung" not in df:               # a table of a kind that has no rungs: nothing to upgrade
        return df
    df = df.copy()
    measure = manifest.get("measure") if isinstance(manifest.get("measure"), dict) else {}
    pin = str(measure.get("pin_granularity") or Pin.LINE.value)
    if "family" not in df:
        df["family"] = [(Family.REFERENCE if r == RungId.TORCH else Family.TUNED).value for r in df["rung"]]
    if "pin" not in df and "rung" in df:
        df["pin"] = [pin if r in (RungId.L2P_OPTMT, RungId.COMBINED) else Pin.NONE.value for r in df["rung"]]
    if table.name == CELLS.name and "timer" not in df:
        df["timer"] = [(Timer.WALL if q == "call_wall" else Timer.KERNEL).value for q in df["quantity"]]
        df["quantity"] = [Quantity.CALL.value if q == "call_wall" else q for q in df["quantity"]]
    if table.name == SAMPLES.name and "consumer_artifact_time_us" not in df:
        df["consumer_artifact_time_us"] = float("nan")
    return df


def read_manifest(file: Path) -> dict[str, Any]:
    """A manifest file's JSON object, or one UserError naming the file and the rule it breaks."""
    text = read_text_limited(Path(file), MAX_MANIFEST_BYTES)     # a FIFO or /dev/zero: one line, no wait
    value = parse_json_limited(text, file, MAX_MANIFEST_DEPTH)
    if not isinstance(value, dict):
        raise UserError(f"{file}: expected a JSON object, found {type(value).__name__}")
    where = _surrogate(value) if _SURROGATE_ESCAPE.search(text) else None
    if where is not None:
        raise UserError(f"{file}: {where or 'a key'} must be text (it holds a lone surrogate escape such as "
                        "\\ud800, which no writer writes and no page or terminal can print)")
    return value


# A lone surrogate reaches a parsed string only through a `\uD800`-`\uDFFF` escape: the text was
# decoded as strict UTF-8, which holds none. Without such an escape (almost every manifest) the walk
# over every key and string is skipped: tens of thousands of them in a distributed run's manifest,
# read several times by each reader.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _surrogate(value: Any, at: str = "") -> str | None:
    """The dotted field whose key or string holds a lone UTF-16 surrogate (JSON `\\udXXX` not in a
    pair), or None: Python keeps it in a str that cannot be encoded, so a page or a print of it
    ended in a UnicodeEncodeError traceback."""
    if isinstance(value, str):
        return at if any(0xD800 <= ord(c) <= 0xDFFF for c in value) else None
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for k, v in items:
        name = f"{at}.{k}" if at and isinstance(k, str) else f"{at}[{k}]" if not isinstance(k, str) else k
        if isinstance(k, str) and _surrogate(k) is not None:
            return name
        found = _surrogate(v, name)
        if found is not None:
            return found
    return None


def command_line() -> str:
    """The command as the user typed it (`python -m l2attr` shows as `l2attr`)."""
    prog = Path(sys.argv[0]).name
    if prog in ("__main__.py", "cli.py"):
        prog = "l2attr"
    return " ".join([prog, *sys.argv[1:]])


__all__ = ["RunDir", "MANIFEST", "TABLES", "utc_stamp", "command_line"]


def open_for_resume(path: Path, kind: str, check: Any = None) -> tuple["RunDir", dict[str, Any]]:
    """A run dir of `kind` written by this schema, and its manifest: what `--resume` may continue.

    Why one place: a run of another kind or an older schema can be reported, never extended.
    `check(manifest, path)`: the typed contract (integrity/manifest.py check_manifest, which stands
    above this module; the commands pass it in). An experiment's resume needs none: its
    declaration must equal the one it resumes, field for field."""
    from l2attr.errors import UserError
    from l2attr.schema import SCHEMA_VERSION

    run = RunDir.open(path)
    m = run.manifest()
    if m.get("kind") != kind:
        raise UserError(f"{path} is a {m.get('kind')!r} run, not a {kind} run ({run.path / MANIFEST}: kind)")
    if m.get("schema_version") != SCHEMA_VERSION:
        raise UserError(f"{path} was written by an older l2attr (schema "
                        f"{m.get('schema_version')}); it can be reported but not resumed")
    if check is not None:   # the kind's typed fields (integrity/manifest.py), before anything is built from them
        check(m, run.path)
    return run, m


def resumed(run: "RunDir", section: str, build: Any, allowed: Any = None) -> Any:
    """`build()` of the settings a resumed run's manifest `section` records; a key `allowed` does not
    name, or settings the builder refuses, is one line naming the file and the field (the typed
    fields are checked already: this is what no type can say, e.g. a rung list it cannot parse)."""
    from l2attr.errors import UserError

    where = run.path / MANIFEST
    saved = run.manifest().get(section)
    if allowed is not None and isinstance(saved, dict):
        stray = sorted(set(map(str, saved)) - set(allowed))
        if stray:
            raise UserError(f"{where}: {section}.{stray[0]} is no setting a {section} section records "
                            f"({', '.join(sorted(allowed))}); it cannot be resumed")
    try:
        return build()
    except UserError as exc:
        raise UserError(f"{where}: {section}: {exc}") from None
    except (TypeError, KeyError, ValueError, AttributeError) as exc:
        raise UserError(f"{where}: {section} cannot be resumed ({type(exc).__name__}: {exc})") from None
