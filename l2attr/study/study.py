"""Run every analysis on a loaded study once; the report renders the result, it computes nothing.

Every analysis has one name, the way a trace-analysis facade names its analyses, and a report
section asks for what it shows by those names (report/registry.py, `reads=`), so a renamed or
missing analysis is refused when the section is declared, not when a page is drawn. The names come
in three kinds: the per-series analyzers (SERIES_ANALYZERS: a new one is one entry, computed for
every series, concatenated and cut per series by series_view with the others), the analyses made
once for the whole study (STUDY_ANALYSES, fields of Analysis) and the facts of the runs themselves
(RUN_FACTS, read from the loaded Study). `Analysis.read(name)` reads any of them;
`analysis_names()` lists them all.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable

import pandas as pd

from l2attr.analysis import attribution, calls
from l2attr.ladders.analyse.amortisation import amortisation_curve, amortisation_table
from l2attr.ladders.analyse.charges import host_charges, with_charges
from l2attr.analysis.caveats import (
    Caveat, analysis_caveats, charge_caveats, ncu_setting_caveats, run_warning_caveats, sort_caveats,
    validity_caveats,
)
from l2attr.analysis.compare import (
    compare_cells, compare_settings, compare_summary, one_sided_settings, pair_identity,
)
from l2attr.analysis.control import study_controls
from l2attr.study.families import family_table
from l2attr.analysis.gpus import consumer_gpus, gpu_spread
from l2attr.ladders.analyse.ladder import latency_ladder
from l2attr.analysis.load import Study
from l2attr.analysis.noise import CrossProcess, cross_process
from l2attr.ladders.analyse.roofline import measured_roofline, roofline_fractions
from l2attr.ladders.analyse.share import l2_share_of_step
from l2attr.analysis.spread import spread_summary
from l2attr.analysis.series import Series, find_series, series_frame, tag
from l2attr.ladders.analyse.verdict import verdict_table
from l2attr.errors import UserError
from l2attr.vocab import L2Condition, Command


@dataclass(frozen=True)
class SeriesInput:
    """What a per-series analyzer reads: one series' ladder (charges in), cells, metrics and host
    charges, and the study-wide facts every series shares."""

    study: Study
    series: Series
    ladder: pd.DataFrame
    cells: pd.DataFrame
    metrics: pd.DataFrame
    charges: pd.DataFrame
    state: str
    xp: CrossProcess
    hbm: tuple[float | None, str]                            # copy bandwidth and its source
    reads: tuple[float | None, float | None, str]            # HBM and L2 read ceilings, their sources
    measured: pd.DataFrame                                   # the sweeps' measured break-even


# An analyzer: (its series' input, the frames of the analyzers before it, by name) -> its frame.
Analyzer = Callable[[SeriesInput, dict[str, pd.DataFrame]], pd.DataFrame]

SERIES_ANALYZERS: dict[str, Analyzer] = {
    "ladder": lambda i, got: i.ladder,                                       # layer A, every state
    "charges": lambda i, got: i.charges,                                     # host costs per charged rung
    "amortisation": lambda i, got: amortisation_table(i.ladder, xp=i.xp, family=i.series.family),
    "curve": lambda i, got: amortisation_curve(got["amortisation"]),
    "share": lambda i, got: l2_share_of_step(i.ladder),
    # logical bytes / CUDA-event time vs copy bandwidth (layer A)
    "roofline": lambda i, got: roofline_fractions(i.cells, *i.hbm),
    "l2": lambda i, got: calls.l2_cells(i.metrics),                          # layer B cells
    "pin_effect": lambda i, got: attribution.pin_effect(got["l2"]),
    "rpf_vs_l2p": lambda i, got: attribution.rpf_vs_l2p(got["l2"]),
    "dram": lambda i, got: attribution.dram_attribution(got["l2"]),          # DRAM bytes per call vs unpinned
    # ncu DRAM bytes and L2 sectors / ncu duration vs read ceilings
    "measured_roofline": lambda i, got: measured_roofline(got["l2"], *i.reads),
    "gradient": lambda i, got: attribution.hotness_gradient(got["l2"]),
    "pin_traffic": lambda i, got: attribution.pin_traffic(got["l2"], i.study.config),
    "validity": lambda i, got: attribution.validity_from_metrics(got["l2"]),
    "verdict": lambda i, got: verdict_table(i.ladder, got["amortisation"], got["share"], got["pin_effect"], i.state,
                                            i.series.title, measured=_measured_of(i.measured, i.series), xp=i.xp,
                                            family=i.series.family),
    # run-to-run spread of medians per timer (samples.csv)
    "spread": lambda i, got: spread_summary(series_frame(i.study.samples, i.series)),
}
SERIES_FRAMES = tuple(SERIES_ANALYZERS)

# The analyses made once for the whole study: name (a field of Analysis) -> what it holds.
STUDY_ANALYSES: dict[str, str] = {
    "state": "the l2_state the verdict and the charts use (primary_state)",
    "series": "the series shown, in reading order (one in a series view)",
    "hbm_copy_GBps": "the measured HBM copy bandwidth the layer-A roofline divides by",
    "caveats": "every caveat of the study, sorted (analysis.caveats)",
    "controls": "each profile run's validity control, judged from its metrics.csv",
    "compare": "cells measured by several runs, side by side (analysis.compare)",
    "compare_summary": "per pair of runs and timer, how far their medians differ",
    "compare_settings": "per pair of runs, the settings in which they differ",
    "compare_identity": "per pair of runs, whether one GPU measured both",
    "compare_one_sided": "per pair of runs, how many settings only one of them records",
    "families": "the kernel families side by side per profile (study.families)",
    "gpu_spread": "cells several GPUs measured, each GPU's median and their spread",
    "cross_process": "the noise of a comparison across two runs (analysis.noise)",
}
# The facts of the runs themselves: name (an attribute of the loaded Study) -> what it holds.
RUN_FACTS: dict[str, str] = {
    "runs": "the runs read, each with its name, kind and manifest (provenance)",
    "config": "the workload config the runs share",
    "timeline": "the PM samples of the timeline runs",
    "phases": "the phases of the timeline runs",
}


def analysis_names() -> tuple[str, ...]:
    """Every name a report section may read, in registry order: series, study, run facts."""
    return (*SERIES_ANALYZERS, *STUDY_ANALYSES, *RUN_FACTS)


def run_analyzers(inp: SeriesInput) -> dict[str, pd.DataFrame]:
    """Every registered analyzer on one series, in registry order."""
    got: dict[str, pd.DataFrame] = {}
    for name, analyzer in SERIES_ANALYZERS.items():
        got[name] = analyzer(inp, got)
    return got


@dataclass
class Analysis:
    """Every judgement of a study, per series (family x pin granularity), concatenated.

    `frames` holds one frame per registered analyzer (SERIES_ANALYZERS), each with the rows of
    every series prefixed by `series`, `family` and `pin` columns, read as `an.frame(name)` or
    `an.<name>`; `series` lists them in reading order (the artifact family first: the headline).
    The other fields are the study-wide analyses (STUDY_ANALYSES). No field takes a series
    analyzer's name (it would hide the frame from `an.<name>`)."""

    study: Study
    state: str                          # the l2_state the verdict and charts use
    series: list[Series]
    hbm_copy_GBps: float | None
    frames: dict[str, pd.DataFrame] = field(default_factory=dict)
    caveats: list[Caveat] = field(default_factory=list)
    # each profile run's validity control, judged from its metrics.csv (None: run without one)
    controls: dict[str, dict[str, Any] | None] = field(default_factory=dict)
    # cells measured by several runs, side by side (analysis.compare); empty when none overlap
    compare: pd.DataFrame = field(default_factory=pd.DataFrame)
    compare_summary: pd.DataFrame = field(default_factory=pd.DataFrame)
    compare_settings: pd.DataFrame = field(default_factory=pd.DataFrame)
    compare_identity: pd.DataFrame = field(default_factory=pd.DataFrame)
    # the kernel families side by side per profile (study.families); empty without a ladder
    families: pd.DataFrame = field(default_factory=pd.DataFrame)
    # cells that several GPUs measured, each GPU's median and their spread (analysis.gpus)
    gpu_spread: pd.DataFrame = field(default_factory=pd.DataFrame)
    # the noise of a comparison across two runs (analysis.noise), from the compare section's cells
    cross_process: CrossProcess = field(default_factory=lambda: CrossProcess({}))
    # (used run, other run) -> how many settings only one of the two records (analysis.compare)
    compare_one_sided: dict[tuple[str, str], int] = field(default_factory=dict)

    def frame(self, name: str) -> pd.DataFrame:
        """A registered analyzer's frame by name (empty where the study gave it nothing)."""
        if name not in SERIES_ANALYZERS:
            raise KeyError(f"no analyzer {name!r}; registered: {', '.join(SERIES_ANALYZERS)}")
        return self.frames.get(name, pd.DataFrame())

    def read(self, name: str) -> Any:
        """Any registered analysis by name: a series frame, a study analysis or a run fact."""
        if name in SERIES_ANALYZERS:
            return self.frame(name)
        if name in STUDY_ANALYSES:
            return getattr(self, name)
        if name in RUN_FACTS:
            return getattr(self.study, name)
        raise KeyError(f"no analysis {name!r}; registered: {', '.join(analysis_names())}")

    def __getattr__(self, name: str) -> Any:
        if name in SERIES_ANALYZERS:               # only called for names that are no field
            return self.frame(name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

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
    if L2Condition.NATURAL in states or not states:
        return L2Condition.NATURAL.value
    return states[0]


def _concat(frames: list[pd.DataFrame]) -> pd.DataFrame:
    frames = [f for f in frames if f is not None and not f.empty]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def measured_break_even(sweeps: list[Any] | None) -> pd.DataFrame:
    """The amortisation sweeps' break-even rows (sweep/analyse/break_even.py), with their run."""
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
    near = study.newest_time(Command.PROFILE)
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
        frames = run_analyzers(SeriesInput(study, s, ladder, cells, metrics, charges, state, xp, (hbm, hbm_source),
                                           (hbm_read, l2_read, ceilings), measured))
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
                    compare_identity=pair_identity(study, compare),
                    compare_one_sided=one_sided_settings(study, compare), families=families,
                    gpu_spread=gpu_spread(study), cross_process=xp, frames=out)


def series_view(an: Analysis, s: Series) -> Analysis:
    """The analysis of one series alone: the same object with every frame cut to its rows, so a
    renderer written for one ladder draws each family's in turn."""
    return replace(an, series=[s], frames={name: an.of(an.frame(name), s) for name in SERIES_FRAMES})
