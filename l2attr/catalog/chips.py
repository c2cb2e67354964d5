"""The chips l2attr has metric names for, and how a GPU's compute capability maps to one."""

from __future__ import annotations

from l2attr.errors import UserError

# compute capability (major, minor) -> the chip name ncu uses (`--chips`, `--query-metrics`)
CHIP_BY_CC: dict[tuple[int, int], str] = {(8, 0): "ga100", (9, 0): "gh100"}
KNOWN_CHIPS: tuple[str, ...] = tuple(CHIP_BY_CC.values())
CHIP_GPUS = {"ga100": "A100 (sm_80)", "gh100": "H100 / H200 (sm_90)"}


def chip_for_compute_capability(major: int, minor: int) -> str:
    """Map a compute capability to a chip we have metric tables for.

    An unknown chip is an error, not a silent fallback: metric names differ between chips and a
    wrong guess would fail inside ncu much later with a less clear message. `--chip` overrides.
    """
    try:
        return CHIP_BY_CC[(int(major), int(minor))]
    except KeyError:
        known = ", ".join(f"{c} = {CHIP_GPUS[c]}" for c in KNOWN_CHIPS)
        raise UserError(f"no metric tables for compute capability {major}.{minor}; known chips: "
                        f"{known}. Pass --chip to use one of them anyway") from None


def check_chip(chip: str) -> str:
    chip = chip.strip().lower()
    if chip not in KNOWN_CHIPS:
        raise UserError(f"unknown chip {chip!r}; known: {', '.join(KNOWN_CHIPS)}")
    return chip
