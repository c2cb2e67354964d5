"""The matched saving split by what was reused, every part an interval of paired per-repeat values.

Per repeat i of a graph-surgery run, over the kernels that met a flush (steps/analyse/reading.py
per_repeat gives the sums S_i(arm) = sum_k (arm_k,i - natural_k,i)):

  before the step  S_i(cold_start): one flush before the first kernel takes away what the last step
                   left (weights, caches, code) and nothing the step makes itself;
  within the step  S_i(matched) - S_i(cold_start): what the step's own kernels left for later ones,
                   with the flushes' non-data cost still in;
  non-data cost    with the rewarmed arms (steps/measure/flushes.py): S_i(rewarmed) - S_i(warm_inputs), the
                   flush's cost to every kernel whose inputs were read back, less the first kernel's
                   (the start arm pays that flush too), plus the control kernel's cost for each
                   kernel that could not be read back; without them: (K - 1) x the control;
  activations      within minus non-data, repeat by repeat: one interval of a paired difference, not
                   the ends of two intervals added;
  headroom         -S_i(warm_inputs): natural minus every kernel's inputs resident (no flush), what
                   perfect residency would add to what reuse is worth today.

The stopping rule `decided` reads the same quantities from the node-keyed kernels a run is still
tracing, so the producer can add repeats until the study's bound is decided (steps/measure/surgery_run.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np
import pandas as pd

from l2attr.analysis.significance import Interval
from l2attr.manifest_model import StepManifest, Surgery, typed
from l2attr.vocab import L2Condition

MATCHED, START = L2Condition.COLD_MATCHED.value, L2Condition.COLD_START.value
WARM, REWARMED = L2Condition.WARM_INPUTS.value, L2Condition.REWARMED.value
REWARM_METHOD = ("per kernel node: rewarmed minus warm_inputs (the same inputs read back, with and without the "
                 "matched flush), paired by repeat")
CONTROL_METHOD = "the control kernel's cost times the kernels that met a flush, less one (no rewarmed arms)"
DECIDE_HALF_WIDTH = 0.0015       # an interval this narrow (± 0.15 pp) is an answer even where it holds the bound

STUDY_CLAIM = 0.0065   # the study's bound: reuse of activations in eager LLM inference, under 0.65 % of step time
STUDY = ("the study \"Worth the Bytes?\" claims that transient inter-kernel L2 reuse of activations in eager-mode "
         "LLM inference is worth less than 0.65 % of step time")


def versus_claim(lo: float, hi: float, claim: float = STUDY_CLAIM, half_width: float | None = None) -> str:
    """Where an interval of a share stands against the study's bound (the one rule: intervals). With
    `half_width`, an interval that holds the bound but is no wider than ± that is an answer too:
    "at the study's bound"."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return "not measured"
    if hi < claim:
        return f"below the study's {100 * claim:.2f} %"
    if lo > claim:
        return f"above the study's {100 * claim:.2f} %"
    if half_width is not None and (hi - lo) / 2 <= half_width:
        return f"at the study's {100 * claim:.2f} % (within ± {100 * half_width:.2f} pp)"
    return f"not distinguishable from the study's {100 * claim:.2f} % (the interval holds it)"


@dataclass(frozen=True)
class Split:
    """The matched saving split by what was reused, each in µs with its interval."""

    before: Interval          # what was resident before the step began
    within: Interval          # what the step's own kernels left for later ones (non-data cost in)
    nondata: Interval         # the flushes' non-data cost
    activations: Interval     # within minus the non-data cost, paired by repeat
    headroom: Interval | None = None     # natural minus every input resident (None: no warm_inputs arm)
    method: str = CONTROL_METHOD         # how the non-data cost was measured
    unread: int = 0                      # kernels without a read-back, charged the control
    samples: tuple[float, ...] = ()      # the activations per repeat (µs): what the interval is of


def _control(control_us: list[float], n: int) -> np.ndarray:
    """The control per repeat, paired by index where it has one value per repeat, else its median."""
    c = np.asarray([x for x in control_us if math.isfinite(x)], dtype=float)
    if len(c) == n:
        return c
    return np.full(n, float(np.median(c)) if len(c) else 0.0)


def nondata_per_repeat(pairs: pd.DataFrame, control_us: list[float], flushed: int,
                       first: np.ndarray | None = None, unread: int | None = None) -> tuple[np.ndarray, str, int]:
    """(non-data cost per repeat, how, kernels charged the control). `first`: the first kernel's
    rewarmed - warm_inputs per repeat (the start arm pays its flush too); `unread`: kernels without
    a read-back (None: no rewarmed arms)."""
    n = len(pairs)
    c = _control(control_us, n)
    r, w = f"saving_{REWARMED}_us", f"saving_{WARM}_us"
    if unread is not None and r in pairs and w in pairs:
        nd = pairs[r].to_numpy(float) - pairs[w].to_numpy(float)
        if first is not None and len(first) == n:
            nd = nd - first
        return nd + unread * c, REWARM_METHOD, int(unread)
    return c * max(flushed - 1, 0), CONTROL_METHOD, max(flushed - 1, 0)


def split(pairs: pd.DataFrame, control_us: list[float], flushed: int, first: np.ndarray | None = None,
          unread: int | None = None) -> Split | None:
    """The split from the per-repeat sums (None without a start or matched arm)."""
    m, s = f"saving_{MATCHED}_us", f"saving_{START}_us"
    if m not in pairs or s not in pairs or not len(pairs):
        return None
    before = pairs[s].to_numpy(float)
    within = pairs[m].to_numpy(float) - before
    nd, how, charged = nondata_per_repeat(pairs, control_us, flushed, first, unread)
    w = f"saving_{WARM}_us"
    head = Interval.of(-pairs[w].to_numpy(float)) if w in pairs else None
    act = within - nd
    return Split(Interval.of(before), Interval.of(within), Interval.of(nd), Interval.of(act), head, how,
                 charged if how == REWARM_METHOD else 0, tuple(float(x) for x in act))


def first_node(k: pd.DataFrame) -> np.ndarray | None:
    """Per repeat, node 0's rewarmed minus warm_inputs duration (None without both arms or nodes)."""
    if "node" not in k.columns:
        return None
    z = k[k["node"] == 0]
    by = z.groupby(["step", "condition"])["duration_us"].first().unstack()
    if REWARMED not in by or WARM not in by:
        return None
    return (by[REWARMED] - by[WARM]).sort_index().to_numpy(float)


def node_sums(k: pd.DataFrame) -> pd.DataFrame:
    """Per repeat of node-keyed kernels (condition, step, node, duration_us): saving_<arm>_us, the sum
    over nodes of arm minus natural (nodes both have). What the stopping rule reads."""
    t = k.pivot_table(index=["step", "node"], columns="condition", values="duration_us", aggfunc="first")
    nat = L2Condition.NATURAL.value
    if nat not in t:
        return pd.DataFrame()
    out = {f"saving_{arm}_us": (t[arm] - t[nat]).groupby(level=0).sum() for arm in t.columns if arm != nat}
    return pd.DataFrame(out).reset_index()


def decided(k: pd.DataFrame, ctx: Mapping[str, Any], claim: float, half_width: float = DECIDE_HALF_WIDTH) -> bool:
    """The stopping rule: is the activations' share of the eager step (of the replay where no eager
    loop was timed) above or below `claim`, or known to ± `half_width`? True also when it cannot be
    decided by more repeats (no matched or start arm, no denominator)."""
    pairs = node_sums(k)
    if f"saving_{MATCHED}_us" not in pairs or f"saving_{START}_us" not in pairs:
        return True
    flushed = int(k["node"].nunique()) if "node" in k else 0
    sp = split(pairs, list(ctx.get("control_us") or []), flushed, first_node(k), ctx.get("unread"))
    denom = [float(x) for x in (ctx.get("eager_us") or ctx.get("replay_us") or []) if math.isfinite(x) and x > 0]
    if sp is None or not denom:
        return True
    d = float(np.median(denom))
    lo, hi = sp.activations.lo / d, sp.activations.hi / d
    return not versus_claim(lo, hi, claim).startswith("not distinguishable") or (hi - lo) / 2 <= half_width


def per_layer(shallow: tuple[int, np.ndarray, np.ndarray], deep: tuple[int, np.ndarray, np.ndarray], layers: int,
              draws: int = 2000, seed: int = 0) -> Interval:
    """A share at `layers` from two depths' per-repeat values (depth, saving µs, denominator µs):
    saving and denominator each a + b x depth, their ratio at `layers`; the interval by resampling
    each depth's repeats (a bootstrap of the medians, 95 %)."""
    (d1, s1, e1), (d2, s2, e2) = shallow, deep
    if d2 == d1 or min(len(s1), len(s2), len(e1), len(e2)) < 2:
        return Interval(math.nan, math.nan, math.nan)

    def at(ms1: float, ms2: float, me1: float, me2: float) -> float:
        k = (layers - d1) / (d2 - d1)
        return (ms1 + k * (ms2 - ms1)) / (me1 + k * (me2 - me1))
    rng = np.random.default_rng(seed)
    pick = (lambda x: np.median(rng.choice(x, (draws, len(x))), axis=1))       # noqa: E731
    got = at(pick(s1), pick(s2), pick(e1), pick(e2))
    med = at(*(float(np.median(x)) for x in (s1, s2, e1, e2)))
    return Interval(med, float(np.percentile(got, 2.5)), float(np.percentile(got, 97.5)))



def losses(manifest: Mapping[str, Any], eager: bool, replay: bool, split_made: bool) -> str:
    """What a surgery run's answer lacks, as the words its headline opens with (issue 52: the eager
    loop, the control or the rewarmed arms gone changed the denominator or the activations without
    a word). `eager` / `replay`: that denominator was timed; `split_made`: the activations were split."""
    sf = typed(manifest, model=StepManifest).surgery or Surgery()
    said = []
    if not eager:
        own = "" if sf.call_us else " (a graph of the user's own has no function to loop)"
        said.append(f"no eager loop recorded{own}: the share is of "
                    + ("the graph replay" if replay else "the step's kernel time (no replay timed either)"))
    if split_made and (not sf.control_us or sf.control_missing):
        why = sf.control_missing
        said.append("no control kernel recorded" + (f" ({why})" if isinstance(why, str) and why else "")
                    + ": no non-data cost is taken off the activations")
    if split_made and sf.rewarm_missing:
        why = sf.rewarm_missing
        said.append(f"no rewarmed arms recorded ({why if isinstance(why, str) else 'rewarm_missing'}): "
                    "the non-data cost is the control kernel's")
    return "; ".join(said) + "." if said else ""


SIDES = ("below", "above", "at")     # versus_claim's decided words, in the order the pages count them


def study_counts(answers: list[Any], denominator: str) -> dict[str, int]:
    """How many steps' activations (against the write-back-matched cold arm) fall below, above or at
    the study's bound as a share of `denominator`, by versus_claim with the stopping rule's width; the
    rest are `undecided` and steps without the split `not measured`. One rule for every page."""
    got = {w: 0 for w in (*SIDES, "undecided", "not measured")}
    for a in answers:
        sh = a.share_of("activations", denominator)
        said = "not measured" if sh is None else versus_claim(sh.share.lo, sh.share.hi, half_width=DECIDE_HALF_WIDTH)
        got[next((w for w in SIDES if said.startswith(w)), "not measured" if said == "not measured" else "undecided")] += 1
    return got
