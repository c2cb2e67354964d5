"""The paper's pipeline claim, answered from step runs: each rung's whole DLRM step (its consumer
of the artifact family in place of torch's EmbeddingBag, the L2P pin inside the step) against the
baseline rung's, on the untraced natural step time (same process and GPU: in-run intervals, the one
significance rule)."""

from __future__ import annotations

from typing import Any

from l2attr.analysis.significance import compare
from l2attr.analysis.step_load import step_name
from l2attr.vocab import Judgement

SERIES = "dlrm-rungs"          # the facts' series of the shipped rung steps (examples/steps/dlrm_rungs.py)
BASE_RUNG = "baseline"


def rung_speedups(answers: list[Any]) -> list[tuple[str, str, Any]]:
    """(rung, label, Judged speedup over the baseline rung) for every rung step of one command."""
    rungs = [a for a in answers if ((a.manifest.get("step") or {}).get("facts") or {}).get("series") == SERIES]
    facts = {id(a): (a.manifest["step"]["facts"]) for a in rungs}
    base = [a for a in rungs if facts[id(a)].get("rung") == BASE_RUNG]
    if not base:
        return []
    ref = base[0]
    return [(facts[id(a)]["rung"], str(facts[id(a)].get("label", facts[id(a)]["rung"])), compare(ref.step_time, a.step_time))
            for a in rungs if a is not ref and a.manifest.get("command") == ref.manifest.get("command")
            and facts[id(a)].get("rung") not in (BASE_RUNG, "torch")]


def pipeline_sentence(answers: list[Any], claim: str = "up to 1.77x on A100") -> str:
    """One line: the best rung's step-level speedup, pin charged, beside the paper's figure."""
    got = rung_speedups(answers)
    if not got:
        return "The DLRM rung steps are not measured."
    gpu = ((answers[0].manifest.get("gpu") or {}).get("name")) or "this GPU"
    parts = []
    for rung, label, j in got:
        word = "within noise" if j.judgement == Judgement.WITHIN_NOISE else j.judgement.value
        parts.append(f"{label} {j.speedup:.3f}x [{j.lo:.3f}, {j.hi:.3f}] ({word})")
    best = max(got, key=lambda x: x[2].speedup)
    return (f"Whole DLRM inference step on {gpu}, each rung's artifact consumer in place of EmbeddingBag, pins "
            f"charged, against the baseline rung: {'; '.join(parts)}. The best, {best[1]}, is "
            f"{best[2].speedup:.2f}x where the paper reports {claim}.")


__all__ = [rung_speedups.__name__, pipeline_sentence.__name__, step_name.__name__]
