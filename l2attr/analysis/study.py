"""Run every analysis on a loaded study once; the report renders the result, it computes nothing."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import pandas as pd

from l2attr.analysis import attribution, calls
from l2attr.analysis.amortisation import amortisation_curve, amortisation_table
from l2attr.analysis.charges import host_charges, with_charges
from l2attr.analysis.caveats import (
    Caveat, analysis_caveats, charge_caveats, ncu_setting_caveats, run_warning_caveats, sort_caveats,
    validity_caveats,
)
from l2attr.analysis.compare import compare_cells, compare_settings, compare_summary, pair_identity
from l2attr.analysis.control import study_controls
from l2attr.analysis.families import family_table
from l2attr.analysis.gpus import consumer_gpus, gpu_spread
from l2attr.analysis.ladder import latency_ladder
from l2attr.analysis.load import Study
from l2attr.analysis.noise import CrossProcess, cross_process
from l2attr.analysis.roofline import measured_roofline, roofline_fractions
from l2attr.analysis.share import l2_share_of_step
from l2attr.analysis.spread import spread_summary
from l2attr.analysis.series import Series, find_series, series_frame, tag
from l2attr.analysis.verdict import verdict_table
from l2attr.errors import UserError
from l2attr.vocab import L2State, RunKind


@dataclass
class Analysis:
    """Every judgement of a study, per series (family x pin granularity), concatenated.

    Each frame below holds the rows of every series, prefixed by `series`, `family` and `pin`
    columns; `series` lists them in reading order (the artifact family first: the headline)."""

    study: Study
    state: str                          # the l2_state the verdict and charts use
    series: list[Series]
    ladder: pd.DataFrame                # layer A, every state
    amortisation: pd.DataFrame
    curve: pd.DataFrame
    share: pd.DataFrame
    roofline: pd.DataFrame             # logical bytes / CUDA-event time vs copy bandwidth (layer A)
    hbm_copy_GBps: float | None
    measured_roofline: pd.DataFrame    # ncu DRAM bytes and L2 sectors / ncu duration vs read ceilings
    dram: pd.DataFrame                 # DRAM bytes per call: pin, consumer, total vs unpinned
    l2: pd.DataFrame                    # layer B cells (condition x role x rung x profile)
    pin_effect: pd.DataFrame
    rpf_vs_l2p: pd.DataFrame
    gradient: pd.DataFrame
    pin_traffic: pd.DataFrame
    validity: pd.DataFrame
    verdict: pd.DataFrame
    spread: pd.DataFrame                # run-to-run spread of medians per timer (samples.csv)
    caveats: list[Caveat] = field(default_factory=list)
    # each profile run's validity control, judged from its metrics.csv (None: run without one)
    controls: dict[str, dict[str, Any] | None] = field(default_factory=dict)
    # cells measured by several runs, side by side (analysis.compare); empty when none overlap
    compare: pd.DataFrame = field(default_factory=pd.DataFrame)
    compare_summary: pd.DataFrame = field(default_factory=pd.DataFrame)
    compare_settings: pd.DataFrame = field(default_factory=pd.DataFrame)
    compare_identity: pd.DataFrame = field(default_factory=pd.DataFrame)
    # the kernel families side by side per profile (analysis.families); empty without a ladder
    families: pd.DataFrame = field(default_factory=pd.DataFrame)
    # cells that several GPUs measured, each GPU's median and their spread (analysis.gpus)
    gpu_spread: pd.DataFrame = field(default_factory=pd.DataFrame)
    # host costs per charged rung (analysis.charges): the pin step's launch + sync, the window's call
    charges: pd.DataFrame = field(default_factory=pd.DataFrame)
    # the noise of a comparison across two runs (analysis.noise), from the compare section's cells
    cross_process: CrossProcess = field(default_factory=lambda: CrossProcess({}))

    def state_rows(self, df: pd.DataFrame) -> pd.DataFrame:
        """The rows of a layer-A table for the primary l2_state."""
        return df if df.empty else df[df["l2_state"] == self.state].reset_index(drop=True)

    def of(self, df: pd.DataFrame, s: Series) -> pd.DataFrame:
        """The rows of one series of a concatenated frame."""
        if df.empty or "series" not in df:
            return df
        return df[df["series"] == s.name].reset_index(drop=True)

    @property
    def headline(self) -> Series | None:
        return self.series[0] if self.series else None


def primary_state(ladder: pd.DataFrame, requested: str | None = None) -> str:
    """'natural' (the regime the artifact timed) when measured, else the first state present."""
    states = [] if ladder.empty else sorted(set(ladder["l2_state"]))
    if requested:
        if states and requested not in states:
            raise UserError(f"--l2-state {requested!r} was not measured; measured: {', '.join(states)}")
        return requested
    if L2State.NATURAL in states or not states:
        return L2State.NATURAL.value
    return states[0]


def _concat(frames: list[pd.DataFrame]) -> pd.DataFrame:
    frames = [f for f in frames if f is not None and not f.empty]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def measured_break_even(sweeps: list[Any] | None) -> pd.DataFrame:
    """The amortisation sweeps' break-even rows (analysis/sweep_amortisation), with their run."""
    frames = [sw.break_even.assign(run=sw.run.name) for sw in sweeps or []
              if getattr(sw, "break_even", None) is not None and not sw.break_even.empty]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def _measured_of(measured: pd.DataFrame, s: Series) -> pd.DataFrame:
    if measured.empty:
        return measured
    return measured[(measured["family"] == s.family) & (measured["pin"] == s.pin)]


def analyse(study: Study, l2_state: str | None = None, sweeps: list[Any] | None = None) -> Analysis:
    """Every judgement of the study; `sweeps` (analysed sweep runs read with it) lend their
    measured break-even to the verdict."""
    series = find_series(study.cells, study.metrics)
    measured = measured_break_even(sweeps)
    hbm, hbm_source = study.hbm_copy_GBps()
    # The read bandwidths divide the profile's bytes: take them from the ladder run made nearest it.
    near = study.newest_time(RunKind.PROFILE)
    hbm_read, read_src = study.measured("hbm_read_GBps", near=near)
    l2_read, l2_src = study.measured("l2_read_GBps", near=near)
    ceilings = " + ".join(src for v, src in ((hbm_read, read_src), (l2_read, l2_src)) if v is not None)
    parts: dict[str, list[pd.DataFrame]] = {}
    ladders = []
    compare = compare_cells(study)
    summary = compare_summary(compare)
    xp = cross_process(summary)
    for s in series:
        cells, metrics = series_frame(study.cells, s), series_frame(study.metrics, s)
        bare = latency_ladder(cells)
        charges = host_charges(series_frame(study.samples, s), bare)
        ladder = with_charges(bare, charges)
        ladders.append((s, ladder, cells, metrics, charges))
    all_ladder = _concat([tag(lad, s) for s, lad, _, _, _ in ladders])
    state = primary_state(all_ladder, l2_state)
    gradient_all: list[pd.DataFrame] = []
    mixed: list[Caveat] = []
    for s, ladder, cells, metrics, charges in ladders:
        own = cells[cells["family"] == s.family] if not cells.empty else cells
        runs = sorted(set(own["run"])) if "run" in own else []
        if len(runs) > 1:
            mixed.append(Caveat("info", f"{s.title}: its cells come from {len(runs)} runs "
                                        f"({', '.join(runs)}). Kernel-timer figures compare across "
                                        "processes; the artifact's timer and the wall clock carry each "
                                        "process's own host noise (see the spread tables).", "cells.csv"))
        amort = amortisation_table(ladder, xp=xp, family=s.family)
        share = l2_share_of_step(ladder)
        l2 = calls.l2_cells(metrics)
        pin_effect = attribution.pin_effect(l2)
        frames = {
            "ladder": ladder, "amortisation": amort, "curve": amortisation_curve(amort),
            "share": share, "roofline": roofline_fractions(cells, hbm, hbm_source), "l2": l2,
            "pin_effect": pin_effect, "rpf_vs_l2p": attribution.rpf_vs_l2p(l2),
            "dram": attribution.dram_attribution(l2),
            "measured_roofline": measured_roofline(l2, hbm_read, l2_read, ceilings),
            "gradient": attribution.hotness_gradient(l2),
            "pin_traffic": attribution.pin_traffic(l2, study.config),
            "validity": attribution.validity_from_metrics(l2),
            "verdict": verdict_table(ladder, amort, share, pin_effect, state, s.title,
                                     measured=_measured_of(measured, s), xp=xp, family=s.family),
            "charges": charges,
            "spread": spread_summary(series_frame(study.samples, s)),
        }
        for name, df in frames.items():
            parts.setdefault(name, []).append(tag(df, s))
        gradient_all.append(frames["gradient"])
    out = {name: _concat(dfs) for name, dfs in parts.items()}
    for name in SERIES_FRAMES:
        out.setdefault(name, pd.DataFrame())
    warnings = calls.metric_warnings(study.metrics)
    controls = study_controls(study)
    caveats = (validity_caveats(study, controls) + ncu_setting_caveats(study) + run_warning_caveats(study) + mixed
               + analysis_caveats(study, out["ladder"], out["roofline"], _concat(gradient_all),
                                  warnings, state) + charge_caveats(out["ladder"]))
    caveats += [Caveat("error", f"Partial data (read with --allow-partial): {m}; the figures use the rows "
                                f"that were intact", "load") for m in study.damage]
    caveats += [Caveat("info", f"run {run} measured {n} cells that run {used} measured too; the analysis uses "
                               f"{used}'s (ladder runs first, then the newest) and the compare section sets "
                               "both side by side", f"{run}/cells.csv + {used}/cells.csv")
                for (used, run), n in compare.groupby(["used_run", "run"], sort=False).size().items()]
    families = family_table(out["ladder"], out["verdict"], out["measured_roofline"], state,
                            gpu=consumer_gpus(study), allow_mixed=study.allow_mixed)
    return Analysis(study=study, state=state, series=series, hbm_copy_GBps=hbm,
                    caveats=sort_caveats(caveats), controls=controls, compare=compare, compare_summary=summary,
                    compare_settings=compare_settings(study, compare),
                    compare_identity=pair_identity(study, compare), families=families,
                    gpu_spread=gpu_spread(study), cross_process=xp, **out)


SERIES_FRAMES = ("ladder", "amortisation", "curve", "share", "roofline", "l2", "pin_effect", "rpf_vs_l2p",
                 "gradient", "pin_traffic", "validity", "verdict", "spread", "dram", "measured_roofline", "charges")


def series_view(an: Analysis, s: Series) -> Analysis:
    """The analysis of one series alone: the same object with every frame cut to its rows, so a
    renderer written for one ladder draws each family's in turn."""
    return replace(an, series=[s], **{name: an.of(getattr(an, name), s) for name in SERIES_FRAMES})
