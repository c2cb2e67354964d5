"""The order of table calls at one sweep point: which table, which batch, and whether a pin
comes first. Pure data, so the order can be checked by hand on a CPU.

A *group* is one pin and the k consumer calls it serves, per table. Back to back, table t's k
calls follow its pin directly; interleaved (the artifact's loop), batch after batch over all
tables, each table pinned before its first call of the group, so the other tables' pins and
calls run between two calls of one table. With k = 1 both are the artifact's loop.
"""

from __future__ import annotations

from dataclasses import dataclass

from l2attr.vocab import Order


@dataclass(frozen=True)
class Call:
    group: int        # pin group (warm-up groups are negative)
    table: int
    batch: int        # row of the uploaded index stream (cycled when k * groups exceeds it)
    position: int     # 1..k: which call after the pin
    pin_first: bool   # a pinning arm pins this table right before this call

    @property
    def warmup(self) -> bool:
        return self.group < 0


def schedule(order: Order, k: int, groups: int, tables: int, batches: int,
             warmup_groups: int = 1) -> list[Call]:
    """Calls in run order: `warmup_groups` artifact-loop batches (k = 1, not kept), then `groups`
    measured groups of k calls per table. Batches cycle through the `batches` uploaded ones,
    measured calls starting after the warm-up's."""
    if k < 1 or groups < 0 or tables < 1 or batches < 1:
        raise ValueError(f"bad schedule: k={k} groups={groups} tables={tables} batches={batches}")
    calls = [Call(g - warmup_groups, t, g % batches, 1, True)
             for g in range(warmup_groups) for t in range(tables)]
    first = warmup_groups
    for g in range(groups):
        base = first + g * k
        if order == Order.BACK_TO_BACK:
            calls += [Call(g, t, (base + j) % batches, j + 1, j == 0)
                      for t in range(tables) for j in range(k)]
        else:
            calls += [Call(g, t, (base + j) % batches, j + 1, j == 0)
                      for j in range(k) for t in range(tables)]
    return calls
