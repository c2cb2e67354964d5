"""Run every analysis on a loaded study once; the report renders the result, it computes nothing."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from l2attr.analysis import attribution
from l2attr.analysis.amortisation import amortisation_curve, amortisation_table
from l2attr.analysis.caveats import (
    Caveat, analysis_caveats, ncu_setting_caveats, run_warning_caveats, sort_caveats, validity_caveats,
)
from l2attr.analysis.ladder import latency_ladder
from l2attr.analysis.load import Study
from l2attr.analysis.roofline import roofline_fractions
from l2attr.analysis.share import l2_share_of_step
from l2attr.analysis.verdict import verdict_table
from l2attr.errors import UserError


@dataclass
class Analysis:
    study: Study
    state: str                          # the l2_state the verdict and charts use
    ladder: pd.DataFrame                # layer A, every state
    amortisation: pd.DataFrame
    curve: pd.DataFrame
    share: pd.DataFrame
    roofline: pd.DataFrame
    hbm_copy_GBps: float | None
    l2: pd.DataFrame                    # layer B cells (condition x role x rung x profile)
    pin_effect: pd.DataFrame
    rpf_vs_l2p: pd.DataFrame
    gradient: pd.DataFrame
    pin_traffic: pd.DataFrame
    validity: pd.DataFrame
    verdict: pd.DataFrame
    caveats: list[Caveat] = field(default_factory=list)

    def state_rows(self, df: pd.DataFrame) -> pd.DataFrame:
        """The rows of a layer-A table for the primary l2_state."""
        return df if df.empty else df[df["l2_state"] == self.state].reset_index(drop=True)


def primary_state(ladder: pd.DataFrame, requested: str | None = None) -> str:
    """'natural' (the regime the artifact timed) when measured, else the first state present."""
    states = [] if ladder.empty else sorted(set(ladder["l2_state"]))
    if requested:
        if states and requested not in states:
            raise UserError(f"--l2-state {requested!r} was not measured; measured: {', '.join(states)}")
        return requested
    if "natural" in states or not states:
        return "natural"
    return states[0]


def analyse(study: Study, l2_state: str | None = None) -> Analysis:
    ladder = latency_ladder(study.cells)
    state = primary_state(ladder, l2_state)
    amort = amortisation_table(ladder)
    hbm, hbm_source = study.hbm_copy_GBps()
    roof = roofline_fractions(study.cells, hbm, hbm_source)
    share = l2_share_of_step(ladder)
    l2 = attribution.l2_cells(study.metrics)
    pin_effect = attribution.pin_effect(l2)
    gradient = attribution.hotness_gradient(l2)
    verdict = verdict_table(ladder, amort, share, pin_effect, state)
    caveats = (validity_caveats(study) + ncu_setting_caveats(study) + run_warning_caveats(study)
               + analysis_caveats(study, ladder, roof, gradient, attribution.metric_warnings(study.metrics), state))
    return Analysis(
        study=study, state=state, ladder=ladder, amortisation=amort, curve=amortisation_curve(amort),
        share=share, roofline=roof, hbm_copy_GBps=hbm, l2=l2, pin_effect=pin_effect,
        rpf_vs_l2p=attribution.rpf_vs_l2p(l2), gradient=gradient,
        pin_traffic=attribution.pin_traffic(l2, study.config), validity=attribution.validity_from_metrics(l2),
        verdict=verdict, caveats=sort_caveats(caveats),
    )
