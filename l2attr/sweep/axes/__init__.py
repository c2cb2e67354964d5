"""The sweep axes, one declaration module each, and their registry.

A new axis: a module here that builds an `AxisSpec` (declare.py) as `SPEC`, one line in SHIPPED
below (and, for a shipped one, its name in vocab.SweepAxis). The CLI, the run loop, the
integrity checks, the analysis and the report find it through `AXES`; a test may `register` one
of its own (tests/test_sweep_new_axis.py).
"""

from __future__ import annotations

from typing import Iterator

from l2attr.errors import UserError
from l2attr.sweep.axes import amortisation, capacity, hotset, occupy, pollution, window
from l2attr.sweep.axes.declare import AxisSpec, Option

AXES: dict[str, AxisSpec] = {}      # keyed by the plain axis name (str(SweepAxis.X))


def register(spec: AxisSpec) -> AxisSpec:
    AXES[str(spec.axis)] = spec
    return spec


SHIPPED = (amortisation.SPEC, hotset.SPEC, window.SPEC, occupy.SPEC, pollution.SPEC, capacity.SPEC)
for _spec in SHIPPED:
    register(_spec)


def runnable() -> list[str]:
    """Axis names `l2attr sweep` runs (former names are read, not run)."""
    return [name for name, s in AXES.items() if s.renamed_to is None]


def axis_spec(name: object) -> AxisSpec:
    """The declaration of a registered axis; an unknown name is one line."""
    spec = AXES.get(str(name))
    if spec is None:
        raise UserError(f"unknown sweep axis {str(name)!r}; valid: {', '.join(runnable())}")
    return spec


def options() -> list[Option]:
    """Every registered axis' options, each key once (the first declaration wins)."""
    out: dict[str, Option] = {}
    for spec in AXES.values():
        for o in spec.options:
            out.setdefault(o.key, o)
    return list(out.values())


class _Names:
    """The registered axis names, read when iterated (the integrity contract of sweep_points.csv)."""

    def __iter__(self) -> Iterator[str]:
        return iter(list(AXES))

    def __contains__(self, name: object) -> bool:
        return str(name) in AXES


REGISTERED = _Names()

__all__ = ["AXES", "AxisSpec", "REGISTERED", "axis_spec", "options", "register", "runnable"]
