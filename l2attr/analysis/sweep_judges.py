"""The sweep judgements, one module per kind (vocab.SweepJudgement), and what each returns.

An axis names its kind in its declaration (JudgementSpec); a new axis that uses an existing kind
needs nothing here. Every word a judgement writes ("pays", "peaks", "below half", "faster") comes
from analysis/significance.py's one rule on the intervals behind the table's speedups, and
"within noise" where the rule says so. Both arms of a sweep are measured in one process, their
repeats interleaved, so the rule's cross-process spread is 0 here.
"""

from __future__ import annotations

from l2attr.analysis import sweep_break_even, sweep_peak, sweep_per_point, sweep_share_left, sweep_vs_reference
from l2attr.analysis.sweep_verdict import Judge
from l2attr.vocab import SweepJudgement

JUDGES: dict[SweepJudgement, Judge] = {
    SweepJudgement.BREAK_EVEN: sweep_break_even.judge,
    SweepJudgement.PEAK: sweep_peak.judge,
    SweepJudgement.SHARE_LEFT: sweep_share_left.judge,
    SweepJudgement.BEST_VS_REFERENCE: sweep_vs_reference.judge,
    SweepJudgement.PER_POINT: sweep_per_point.judge,
}
