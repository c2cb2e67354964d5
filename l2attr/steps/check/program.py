"""Is the captured graph the program the user runs? The natural replay's kernel time held to the
step function's own kernels, called on its own.

Why: graph surgery measures the graph a capture recorded. A compiled function called directly
runs the same kernels, but between them the GPU waits for each launch (a stream launch costs the
GPU about a microsecond or two even when every launch is queued; a graph replay far less), so its
wall time is not the replay's; its kernels' summed time must be. A capture that froze another
branch, or recorded an eager twin of a compiled function, shows here as a kernel time or a kernel
count that differs. The tolerance is the bar the step issue set for a compiled step's natural arm
against the program on its own (2 %); a difference within it is within noise of the check, a
larger one a caveat on the answer's first lines.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any

import pandas as pd

from l2attr.manifest_model import StepManifest, Surgery, typed

PROGRAM_TOLERANCE = 0.02


@dataclass(frozen=True)
class ProgramCheck:
    natural_kernel_us: float      # the natural replay's kernels, per-kernel medians summed
    call_kernel_us: float         # the function called on its own: median over calls of its kernels' sum
    graph_kernels: int
    call_kernels: int             # median kernel count of a call

    @property
    def ratio(self) -> float:
        return self.natural_kernel_us / self.call_kernel_us - 1.0

    @property
    def holds(self) -> bool:
        return abs(self.ratio) <= PROGRAM_TOLERANCE and self.graph_kernels == self.call_kernels


def program_check(manifest: dict[str, Any], kern: pd.DataFrame) -> ProgramCheck | None:
    """The check where the run traced the function's own calls (a surgery run of a function, not of
    the user's own graph, made since the call's kernels were recorded) and no kernel ran beside
    another (overlapping durations sum to more than the time they took); None otherwise."""
    sf = typed(manifest, model=StepManifest).surgery or Surgery()
    sums, counts = sf.call_kernel_us or [], sf.call_kernels or []
    if not sums or not counts or not len(kern) or "natural_us" not in kern:
        return None
    if "overlapped" in kern.columns and kern["overlapped"].astype(bool).any():
        return None          # kernels beside each other: a sum of durations is no program's time
    return ProgramCheck(float(kern["natural_us"].sum()), float(statistics.median(sums)),
                        int(len(kern) if sf.graph_kernels is None else sf.graph_kernels), int(statistics.median(counts)))


def program_line(c: ProgramCheck) -> str:
    """The comparison, said on the surgery section of every page."""
    same = "yes" if c.holds else "no"
    return (f"The function called on its own: its {c.call_kernels} kernels take {c.call_kernel_us:.1f} µs a call; "
            f"the natural replay's {c.graph_kernels} kernels {c.natural_kernel_us:.1f} µs ({100 * c.ratio:+.2f} %; "
            f"the same program within {100 * PROGRAM_TOLERANCE:.0f} % and the same kernel count: {same}).")


def program_caveat(c: ProgramCheck | None, difference: dict[str, Any] | None = None) -> str:
    """A first line when the graph may not be the program the user runs (with the kernels only one
    side launched, where the run recorded them)."""
    if c is None or c.holds:
        return ""
    d = difference if isinstance(difference, dict) else {}
    extra = "".join(f"; only {side.replace('only_in_', 'in the ')}: {', '.join(map(str, d[side][:3]))}"
                    f"{' ...' if len(d[side]) > 3 else ''}" for side in ("only_in_graph", "only_in_call")
                    if isinstance(d.get(side), list) and d[side])
    return (f"Caveat: the natural arm is not the program as it runs by itself within "
            f"{100 * PROGRAM_TOLERANCE:.0f} %: its {c.graph_kernels} kernels take {c.natural_kernel_us:.1f} µs, "
            f"the function called on its own launches {c.call_kernels} taking {c.call_kernel_us:.1f} µs "
            f"({100 * c.ratio:+.2f} %){extra}; every saving below carries that difference.")


INDUCTOR_MARK = "triton"     # Inductor's GPU kernels are Triton kernels named triton_*


def compiled_caveat(manifest: dict[str, Any], kern: pd.DataFrame) -> str:
    """A torch.compile'd function whose graph holds no Inductor kernel may have run as its eager
    version (Dynamo runs a frame eagerly for good past its recompile limit): said, never silent.
    A compiled program can hold library kernels only (a lone GEMM), hence "may"."""
    sf = typed(manifest, model=StepManifest).surgery
    if sf is None or sf.compiled is not True or not len(kern):
        return ""
    if kern["kernel"].astype(str).str.contains(INDUCTOR_MARK, regex=False).any():
        return ""
    return ("Caveat: the step function is torch.compile'd, but none of its graph's "
            f"{len(kern)} kernels is Inductor's (Triton): it may have run as its eager version (Dynamo "
            "falls back to eager past its recompile limit; torch._dynamo.utils.counters says).")
