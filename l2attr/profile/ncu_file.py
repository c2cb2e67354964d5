"""An `.ncu-rep` on disk, read without ncu_report: is it a report, is it whole, how was it recorded.

ncu_report reads a cut report without complaint and returns the kernels before the cut, and it
does not say how the report was recorded; both are answered here from the file's bytes, so a
cut file or a report that cannot show cross-kernel L2 state reads the same from every command.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from l2attr.errors import UserError
from l2attr.vocab import Ncu

if TYPE_CHECKING:
    import pandas as pd

REPORT_MAGIC = b"NVR\x00"


def check_report_file(path: Path) -> Path:
    """One-line errors for the usual mistakes, before any reader is started."""
    path = Path(path)
    if not path.exists():
        raise UserError(f"report not found: {path}")
    if not path.is_file():
        raise UserError(f"{path} is not a file")
    try:
        with open(path, "rb") as fh:
            head = fh.read(4)
    except OSError as exc:
        raise UserError(f"{path}: cannot read ({exc.strerror})") from None
    if head != REPORT_MAGIC:
        raise UserError(f"{path} is not an Nsight Compute report (.ncu-rep)")
    check_complete_report(path)
    return path


# -- truncation and declared results --------------------------------------------------------------
# The file is the magic, then size-prefixed protobuf messages: a file header (uint32 size + message),
# then blocks of [uint32 header size][block header][payload]. Block header fields (varints, seen in
# every report of ncu 2025.3.1 we hold): 5 the payload size, 2 the kernel results and 7 the range
# results the payload holds (1: source records). A whole report's blocks end exactly at the end of
# the file, and its results are those the block headers declare.

_PAYLOAD_SIZE_FIELD = 5
_KERNEL_RESULTS_FIELD = 2
_RANGE_RESULTS_FIELD = 7


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(data):
            raise ValueError("varint runs past its message")
        byte = data[pos]
        value |= (byte & 0x7F) << shift
        pos, shift = pos + 1, shift + 7
        if byte < 0x80:
            return value, pos


def _header_varints(header: bytes) -> dict[int, int]:
    """The varint fields of a block header (field number -> value); others skipped by wire type."""
    pos, out = 0, {}
    while pos < len(header):
        key, pos = _varint(header, pos)
        field_no, wire = key >> 3, key & 7
        if wire == 0:
            out[field_no], pos = _varint(header, pos)
        elif wire == 2:
            length, pos = _varint(header, pos)
            pos += length
        elif wire in (1, 5):
            pos += 8 if wire == 1 else 4
        else:
            raise ValueError(f"wire type {wire}")
    if pos != len(header):
        raise ValueError("a field runs past its header")
    return out


def _payload_size(header: bytes) -> int:
    """Field 5 (varint) of a block header; 0 when absent."""
    return _header_varints(header).get(_PAYLOAD_SIZE_FIELD, 0)


def _walk(path: Path) -> int | None:
    """The results the report's block headers declare; None when a header cannot be parsed (a
    layout this reader does not know: ncu_report then judges the file alone). Raises when the
    report's own sizes run past the end of the file (it was cut short)."""
    data = Path(path).read_bytes()
    pos, end, first, results = len(REPORT_MAGIC), len(data), True, 0
    while pos < end:
        need = pos + 4
        if need <= end:
            size = int.from_bytes(data[pos:pos + 4], "little")
            need += size
        if need <= end and not first:
            try:
                fields = _header_varints(data[pos + 4:need])
            except ValueError:
                return None
            need += fields.get(_PAYLOAD_SIZE_FIELD, 0)
            results += fields.get(_KERNEL_RESULTS_FIELD, 0) + fields.get(_RANGE_RESULTS_FIELD, 0)
        if need > end:
            raise UserError(f"{path}: the report is cut short (a block ends at byte {need:,}, the "
                            f"file has {end:,} bytes); copy it again or re-run ncu")
        pos, first = need, False
    return results


def check_complete_report(path: Path) -> None:
    """Raise when the report's own sizes run past the end of the file (it was cut short).

    A block header this reader cannot parse is let through (ncu_report then judges the file);
    only sizes that provably exceed the file are refused.
    """
    _walk(path)


def declared_results(path: Path) -> int | None:
    """How many results (kernels, or ranges under range replay) the report's block headers say it
    holds: ncu_report drops or empties a result whose bytes are damaged without a word, so the
    reader compares what it got with this. None when the layout is not one this reader knows."""
    return _walk(path)


# -- how the report was recorded ----------------------------------------------------------------
# An .ncu-rep stores the ncu command line that made it (seen in every report of ncu 2025.3.1 we
# hold). Options absent from it took ncu's defaults: kernel replay, cache control all, clocks base.
NCU_DEFAULTS = {"--replay-mode": Ncu.KERNEL.value, "--cache-control": Ncu.ALL.value,
                "--clock-control": Ncu.BASE.value}
_NCU_COMMAND = re.compile(rb"[^\x00-\x1f]*?\bncu(?: [^\x00-\x1f]*)")


def recorded_settings(path: Path | str) -> dict[str, Any]:
    """The replay mode, cache and clock control a report was recorded with, from the command line
    stored in it; `command` is None when none was found (the settings are then unknown)."""
    data = Path(path).read_bytes()
    m = _NCU_COMMAND.search(data)
    if not m:
        return {"command": None}
    command = m.group(0).decode("utf-8", "replace")
    tokens = command.split()
    out: dict[str, Any] = {"command": command}
    for option, default in NCU_DEFAULTS.items():
        value = default
        for i, tok in enumerate(tokens):
            if tok == option and i + 1 < len(tokens):
                value = tokens[i + 1]
            elif tok.startswith(option + "="):
                value = tok.split("=", 1)[1]
        out[option.lstrip("-").replace("-", "_")] = value
    return out


def recorded_warnings(settings: dict[str, Any], df: "pd.DataFrame") -> list[str]:
    """Say so when the report cannot show cross-kernel L2 state (kernel or range replay restore
    memory between passes; cache control `all` flushes caches before every profiled kernel)."""
    out = []
    replay, cache = settings.get("replay_mode"), settings.get("cache_control")
    backed_up = (not df.empty and (df["metric"] == "profiler__replayer_bytes_mem_backed_up.sum").any()
                 and (df.loc[df["metric"] == "profiler__replayer_bytes_mem_backed_up.sum", "value"] > 0).any())
    if replay in (Ncu.KERNEL, Ncu.RANGE) or backed_up:
        out.append(f"recorded with --replay-mode {replay or 'kernel (device memory was backed up between passes)'}: "
                   "memory is saved and restored between replay passes, so this report cannot show L2 state "
                   "left by an earlier kernel")
    if cache == Ncu.ALL:
        out.append("recorded with --cache-control all (ncu's default): caches are flushed before every "
                   "profiled kernel, so this report cannot show L2 state left by an earlier kernel")
    if settings.get("command") is None:
        out.append("the report holds no ncu command line: how it was recorded (replay mode, cache control) "
                   "is unknown")
    return out
