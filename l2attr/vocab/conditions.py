"""The one registry of L2 conditions: what stands in L2 before a consumer, for every engine.

One word a line, with what runs and who takes it, so a new condition is one line here:

* `before` / `between`: the device verbs (measure/cell.py's GpuVerbs: `flush_l2`,
  `reset_persisting`) a cell call runs before the whole call and between producer and consumer,
  outside every timer (measure/cell.py runs exactly these);
* `producer`: whether the call runs the producer step (`no_producer`: the consumer alone);
  `needs_producer`: the condition means nothing for a pair without one (a control after it);
* `ladder`: the ladder's pin-named word for the same condition (`--l2`, cells.csv `l2_state`):
  the ladder's pin is the producer, so `flush_after_pin` is `flush_after_producer`;
* `engines`: who takes it: experiment (exp_*.csv `condition`), step (step_kernels.csv
  `condition`, l2attr.step's arms), edge (step_edges.csv `arm`); the ladder takes the words
  named by `ladder`.

The written words never change (committed run dirs are read back): the ladder writes `flush`,
an experiment `flush_before_call`, for one condition. A step's and an edge's conditions act per
kernel or per op inside a whole step (steps/measure/run.py, steps/measure/surgery.py, steps/measure/edges.py); their
line says what runs, in words.
"""

from __future__ import annotations

from typing import Any

from l2attr.vocab.core import Vocab, values

EXPERIMENT, STEP, EDGE = "experiment", "step", "edge"     # the engines a condition's line names


def _c(word: str, doc: str, *, before: str = "", between: str = "", producer: bool = True,
       needs_producer: bool = False, ladder: str = "", engines: tuple[str, ...] = ()) -> tuple[str, dict[str, Any]]:
    return word, {"doc": doc, "before": before, "between": between, "producer": producer,
                  "needs_producer": needs_producer, "ladder": ladder, "engines": engines}


class L2Condition(Vocab):
    """What happens to L2 around one call (experiment, ladder) or one kernel, op or edge (step).

    The members' values are the written words; each carries its registry line (`before`,
    `between`, `producer`, `needs_producer`, `ladder`, `engines`, `doc`)."""

    doc: str
    before: str
    between: str
    producer: bool
    needs_producer: bool
    ladder: str
    engines: tuple[str, ...]

    def __new__(cls, word: str, spec: dict[str, Any]) -> "L2Condition":
        obj = str.__new__(cls, word)
        obj._value_ = word
        for k, v in spec.items():
            setattr(obj, k, v)
        return obj

    # word                  line
    NATURAL = _c("natural", "producer -> sync -> consumer, L2 as the program leaves it",
                 ladder="natural", engines=(EXPERIMENT, STEP, EDGE))
    NO_PRODUCER = _c("no_producer", "the consumer alone: the honest comparand of a pin (the ladder's OptMT rung)",
                     producer=False, needs_producer=True, engines=(EXPERIMENT,))
    FLUSH_BEFORE_CALL = _c("flush_before_call", "flush, then producer -> sync -> consumer",
                           before="flush_l2", ladder="flush", engines=(EXPERIMENT,))
    FLUSH_AFTER_PRODUCER = _c("flush_after_producer", "producer -> sync -> flush -> consumer: a cold consumer",
                              between="flush_l2", needs_producer=True, ladder="flush_after_pin", engines=(EXPERIMENT,))
    RESET_AFTER_PRODUCER = _c("reset_after_producer", "producer -> sync -> persisting reset -> consumer",
                              between="reset_persisting", needs_producer=True, ladder="reset_after_pin",
                              engines=(EXPERIMENT,))
    # the ladder's words for the same conditions (what the pin-named runs wrote and write)
    FLUSH = _c("flush", "the ladder's flush_before_call: flush L2 before every table call", before="flush_l2")
    FLUSH_AFTER_PIN = _c("flush_after_pin", "the ladder's flush_after_producer (a control): flush between pin "
                         "and consumer", between="flush_l2", needs_producer=True)
    RESET_AFTER_PIN = _c("reset_after_pin", "the ladder's reset_after_producer (a control): "
                         "cudaCtxResetPersistingL2Cache between pin and consumer", between="reset_persisting",
                         needs_producer=True)
    # a whole step's and an edge's
    COLD = _c("cold", "step: clean-flushed right before every kernel (graph surgery) or op (eager); edge: "
              "read-flushed before the consumer op, nothing read back: every input cold", engines=(STEP, EDGE))
    COLD_DIRTY = _c("cold_dirty", "step: flushed, then one L2 of useless dirty lines before every kernel: pays a "
                    "full L2's write-back", engines=(STEP,))
    COLD_MATCHED = _c("cold_matched", "step: clean-flushed, then as many dirty bytes as the kernel's natural run "
                      "inherits (its write-back, read by Nsight Compute) before every kernel: the answer's cold arm",
                      engines=(STEP,))
    COLD_START = _c("cold_start", "step: one flush before the step's first kernel only (matched to its write-back "
                    "when known): what the step reuses of what was resident before it began", engines=(STEP,))
    REWARMED = _c("rewarmed", "edge: read-flushed, then every input of the consumer read back into L2 (the control); "
                  "step: before every kernel the matched flush, then every block the kernel touches read back",
                  engines=(STEP, EDGE))
    WARM_INPUTS = _c("warm_inputs", "step: no flush; before every kernel every block it touches read back (as "
                     "rewarmed, without the flush): rewarmed minus this is the flush's non-data cost per kernel",
                     engines=(STEP,))
    EDGE_COLD = _c("edge_cold", "edge: read-flushed, every input read back except the bytes the producer wrote",
                   engines=(EDGE,))

    @property
    def generic(self) -> "L2Condition":
        """The engine-neutral condition a ladder word stands for (itself for every other word)."""
        return next((c for c in L2Condition if c.ladder == self.value), self)


def _taken_by(engine: str) -> tuple[L2Condition, ...]:
    return tuple(c for c in L2Condition if engine in c.engines)


def ladder_states() -> tuple[L2Condition, ...]:
    """The ladder's conditions (`--l2`, cells.csv `l2_state`), by their ladder words."""
    return tuple(L2Condition(c.ladder) for c in L2Condition if c.ladder)


CELL_CONDITIONS = _taken_by(EXPERIMENT)      # an experiment's (exp_*.csv `condition`)
STEP_CONDITIONS = _taken_by(STEP)            # a step's arms (step_kernels.csv `condition`)
EDGE_ARMS = _taken_by(EDGE)                  # an edge's arms (step_edges.csv `arm`)
LADDER_STATES = ladder_states()              # the ladder's (cells.csv `l2_state`)


def condition_words(conditions: tuple[L2Condition, ...]) -> tuple[str, ...]:
    """The written words of some conditions (a table column's known values)."""
    return values(*conditions)


def ladder_state(word: str) -> L2Condition:
    """A ladder word -> its member; anything else is a ValueError that lists the valid words."""
    if word not in condition_words(LADDER_STATES):
        raise ValueError(f"{word!r} is not a valid ladder L2 state; valid: {', '.join(condition_words(LADDER_STATES))}")
    return L2Condition(word)


def cell_condition(word: str) -> L2Condition:
    """An experiment's word -> its member; anything else is a ValueError that lists the valid words."""
    if word not in condition_words(CELL_CONDITIONS):
        raise ValueError(f"{word!r} is not a valid experiment condition; valid: {', '.join(condition_words(CELL_CONDITIONS))}")
    return L2Condition(word)
