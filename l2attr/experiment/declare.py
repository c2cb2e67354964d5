"""An experiment is a declaration: producer, consumer, reference, inputs and L2 conditions.

The user's callables enqueue work on the current torch stream (a CuPy/NVRTC kernel, a torch op,
a Triton kernel) and return; the engine owns the rest (measure/cell.py, experiment/measure.py,
experiment/profile.py). With `setup`, each callable receives what setup returned (the inputs,
made once on the GPU before anything is timed); without it they take no argument.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from l2attr.errors import UserError
from l2attr.measure.cell import CallOps
from l2attr.vocab import L2Condition, TimerKind, CELL_CONDITIONS, cell_condition, condition_words
from l2attr.names import check_label

Step = Callable[..., Any]


def default_conditions(has_producer: bool) -> tuple[L2Condition, ...]:
    """With a producer: the pair, the consumer alone (what the producer must beat once charged)
    and the cold-consumer control; without one: natural against a flush before each call."""
    if has_producer:
        return (L2Condition.NATURAL, L2Condition.NO_PRODUCER, L2Condition.FLUSH_AFTER_PRODUCER)
    return (L2Condition.NATURAL, L2Condition.FLUSH_BEFORE_CALL)


def default_baseline(conditions: Sequence[L2Condition]) -> L2Condition:
    """The condition `natural` is judged against: the consumer alone where declared (a pin must
    pay for itself), else the cold consumer (an activation's reuse), else a flushed call."""
    for c in (L2Condition.NO_PRODUCER, L2Condition.FLUSH_AFTER_PRODUCER, L2Condition.FLUSH_BEFORE_CALL):
        if c in conditions:
            return c
    raise UserError("an experiment needs a condition to compare 'natural' with "
                    "(no_producer, flush_after_producer or flush_before_call)")


def _settle(obj: object, **values: Any) -> None:
    """Set fields of a frozen instance: the normalised declaration and its inputs' cache only."""
    for key, value in values.items():
        object.__setattr__(obj, key, value)


@dataclass(frozen=True)
class Declaration:
    """One producer -> consumer pair and the conditions to run it under (l2attr.Experiment adds
    the verbs: l2attr/api.py). Frozen: a run's state (run dir, repeats) lives in its result.

    `reference` (optional) returns what the consumer must return, checked once before timing
    (`rtol`/`atol`); `calls` measured calls per repeat after `warmup`; `baseline` the condition
    `natural` is judged against (default: default_baseline)."""

    name: str
    consumer: Step
    producer: Step | None = None
    reference: Step | None = None
    setup: Callable[[], Any] | None = None
    # given as words or members; held as L2Condition members once declared (the registry's words)
    conditions: Sequence[L2Condition | str] = ()
    baseline: L2Condition | str | None = None
    calls: int = 20
    warmup: int = 5
    repeats: int = 3
    rtol: float = 1e-3
    atol: float = 1e-3
    timer: str = TimerKind.BLOCKING.value
    # adaptive repeats (measure/adaptive.py): each condition stops once the 95 % interval of its
    # kernel-timed medians has a half-width <= until_rel_ci x the median; `repeats` the minimum
    until_rel_ci: float | None = None
    max_repeats: int = 20                   # the stopping rule's limits: repeats and seconds per condition
    max_seconds: float = 60.0
    out: Path | str = "runs"
    labels: dict[str, str] = field(default_factory=dict)   # e.g. {"producer": "pin", "consumer": "sdpa"}
    _state: Any = field(default=None, init=False, repr=False)
    _ready: bool = field(default=False, init=False, repr=False)

    def __post_init__(self) -> None:
        check_label(self.name, "experiment name")
        if not callable(self.consumer):
            raise UserError(f"experiment {self.name}: consumer must be callable")
        for what in ("producer", "reference", "setup"):     # the declaration's attribute names
            value = getattr(self, what)
            if value is not None and not callable(value):
                raise UserError(f"experiment {self.name}: {what} must be callable or None")
        try:
            conds = tuple(cell_condition(c) for c in self.conditions) or default_conditions(self.producer is not None)
        except ValueError:
            bad = next(c for c in self.conditions if c not in condition_words(CELL_CONDITIONS))
            raise UserError(f"experiment {self.name}: unknown condition {bad!r}; "
                            f"valid: {', '.join(condition_words(CELL_CONDITIONS))}") from None
        if len(set(conds)) != len(conds):
            raise UserError(f"experiment {self.name}: a condition is listed twice")
        needs_producer = {c for c in CELL_CONDITIONS if c.needs_producer}
        if self.producer is None and needs_producer & set(conds):
            raise UserError(f"experiment {self.name}: conditions "
                            f"{', '.join(sorted(c.value for c in needs_producer & set(conds)))} need a producer")
        if L2Condition.NATURAL not in conds:
            raise UserError(f"experiment {self.name}: the conditions must include 'natural'")
        _settle(self, conditions=conds)   # normalised once, at declaration
        try:
            _settle(self, baseline=cell_condition(self.baseline) if self.baseline else default_baseline(conds))
        except ValueError:
            raise UserError(f"experiment {self.name}: unknown baseline {self.baseline!r}; valid: "
                            f"{', '.join(c.value for c in conds if c != L2Condition.NATURAL)} "
                            "(the declared conditions other than natural)") from None
        if self.baseline not in conds or self.baseline == L2Condition.NATURAL:
            raise UserError(f"experiment {self.name}: baseline {self.baseline.value!r} must be one of "
                            "the other declared conditions")
        for what, n, low in (("calls", self.calls, 2), ("warmup", self.warmup, 0), ("repeats", self.repeats, 1)):
            if not isinstance(n, int) or n < low:
                raise UserError(f"experiment {self.name}: {what} must be a whole number >= {low}")
        if self.until_rel_ci is not None:
            from l2attr.measure.adaptive import AdaptiveRule

            try:
                AdaptiveRule(float(self.until_rel_ci), self.repeats, self.max_repeats, float(self.max_seconds))
            except (TypeError, ValueError) as exc:
                raise UserError(f"experiment {self.name}: adaptive repeats: {exc} (until_rel_ci, "
                                f"repeats as the minimum, max_repeats, max_seconds)") from None
        try:
            _settle(self, timer=TimerKind(self.timer).value)
        except ValueError:
            raise UserError(f"experiment {self.name}: unknown timer {self.timer!r}; "
                            f"valid: {', '.join(TimerKind.values())}") from None

    # -- the callables, bound to the inputs ----------------------------------------------------
    def prepare(self) -> None:
        """Make the inputs once (setup); idempotent."""
        if not self._ready:
            _settle(self, _state=self.setup() if self.setup is not None else None)
            _settle(self, _ready=True)   # the inputs' cache, not the declaration

    def _bind(self, fn: Step | None) -> Callable[[], Any] | None:
        if fn is None:
            return None
        if self.setup is None:
            return fn
        state = self._state
        return lambda: fn(state)

    def ops(self) -> CallOps:
        self.prepare()
        consumer = self._bind(self.consumer)
        assert consumer is not None
        return CallOps(consumer=consumer, producer=self._bind(self.producer))

    def reference_output(self) -> Any:
        self.prepare()
        ref = self._bind(self.reference)
        return ref() if ref is not None else None

    def declaration(self) -> dict[str, Any]:
        """What the manifest records of the declaration (inputs, not results)."""
        def where(fn: Any) -> str | None:
            if fn is None:
                return None
            mod, name = getattr(fn, "__module__", "?"), getattr(fn, "__qualname__", repr(fn))
            return f"{mod}:{name}"

        return {"name": self.name, "producer": where(self.producer), "consumer": where(self.consumer),
                "reference": where(self.reference), "setup": where(self.setup),
                "conditions": [c.value for c in self.conditions], "baseline": self.baseline.value,
                "calls": self.calls, "warmup": self.warmup, "repeats": self.repeats,
                "rtol": self.rtol, "atol": self.atol, "timer": self.timer, "labels": dict(self.labels),
                "until_rel_ci": self.until_rel_ci, "max_repeats": self.max_repeats,
                "max_seconds": self.max_seconds}
