"""The report's one-line answer: does the L2 pin pay once its kernel is charged, per family?

Why a module of its own: the page must open with a yes/no a reader takes in at a glance, and
that judgement belongs to the analysis, not to a template. It reads the verdict's
`pin_speedup_charged` (T_unpinned consumer / (T_pin + T_pinned consumer), kernel timer, the same
family and pin granularity) and its `pin_judgement_charged`, the word of the one significance
rule (analysis/significance.py, with the cross-process spread as noise where the two cells come
from two runs), for every profile and series of a family. "yes": faster beyond noise on every
case; "no": slower beyond noise on every one; "within noise": no case beyond noise; "partly"
otherwise, with the counts. A case without a judgement is within noise: never a "pays" by a ratio.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from l2attr.analysis.common import ordered_profiles
from l2attr.dlrm.declare import FAMILY_ORDER
from l2attr.vocab import Judgement

CHARGED = "pin_speedup_charged"
JUDGED = "pin_judgement_charged"
FREE = "pin_speedup_consumer"
WITHIN_NOISE = Judgement.WITHIN_NOISE.value
QUESTION = "Does the L2 pin pay once its kernel is charged?"


@dataclass(frozen=True)
class FamilyAnswer:
    """One family's judgement over all its measured (profile, pin) cases."""

    family: str
    pays: str                   # "yes" | "no" | "partly" | "within noise"
    lo: float                   # the lowest and highest pin-charged speedup
    hi: float
    cases: int                  # (profile, pin) cases with a charged number
    paying: int                 # of them, where the pin pays (faster beyond noise)
    best_profile: str
    best_pin: str
    pins: tuple[str, ...]
    losing: int = 0             # cases where it costs (slower beyond noise); the rest are within noise

    @property
    def within_noise(self) -> int:
        return self.cases - self.paying - self.losing

    @property
    def css(self) -> str:
        """The word as a class name ('within-noise')."""
        return self.pays.replace(" ", "-")

    @property
    def number(self) -> str:
        """'0.88×' or '0.88–0.92×': the charged speedup, as the answer line prints it."""
        return f"{self.lo:.2f}×" if f"{self.lo:.2f}" == f"{self.hi:.2f}" else f"{self.lo:.2f}–{self.hi:.2f}×"

    @property
    def text(self) -> str:
        """'artifact: no, 0.88–0.92×' (a partial yes names its best case)."""
        head = f"{self.family}: {self.pays}, {self.number}"
        if self.pays == "partly":
            said = [f"pays in {self.paying} of {self.cases}"]
            if self.within_noise:
                said.append(f"within noise in {self.within_noise}")
            head += f" ({'; '.join(said)}; best {self.best_profile}, {self.best_pin} pin)"
        return head


def _family_rank(family: str) -> int:
    order = [f.value for f in FAMILY_ORDER]
    return order.index(family) if family in order else len(order)


def pin_answer(verdict: pd.DataFrame) -> list[FamilyAnswer]:
    """Per family (ladder order), whether the pin pays with its kernel charged; families
    without one charged number are left out (nothing was measured to judge)."""
    if verdict is None or verdict.empty or CHARGED not in verdict:
        return []
    rows = verdict.dropna(subset=[CHARGED])
    out = []
    for family in sorted(set(rows["family"]), key=lambda f: (_family_rank(f), f)):
        mine = rows[rows["family"] == family]
        charged = mine[CHARGED].astype(float)
        words = mine[JUDGED] if JUDGED in mine else pd.Series(WITHIN_NOISE, index=mine.index)
        paying = int((words == Judgement.FASTER.value).sum())
        losing = int((words == Judgement.SLOWER.value).sum())
        n = len(mine)
        pays = ("yes" if paying == n else "no" if losing == n else WITHIN_NOISE if paying + losing == 0
                else "partly")
        best = mine.loc[charged.idxmax()]
        out.append(FamilyAnswer(
            family=family, pays=pays, lo=float(charged.min()), hi=float(charged.max()), cases=n, paying=paying,
            best_profile=str(best["profile"]), best_pin=str(best["pin"]),
            pins=tuple(dict.fromkeys(str(p) for p in mine["pin"])), losing=losing))
    return out


def overall(answers: list[FamilyAnswer]) -> str:
    """'No', 'Yes' or 'Partly': the word the line starts with."""
    said = {a.pays for a in answers}
    return ("Yes" if said == {"yes"} else "No" if said == {"no"} else "Within noise" if said == {WITHIN_NOISE}
            else "Partly")


def answer_line(answers: list[FamilyAnswer]) -> str:
    """The line at the top of the report: the question, the overall word, each family's word
    and its pin-charged speedup range ('' when no family has a charged number)."""
    if not answers:
        return ""
    return f"{QUESTION} {overall(answers)} — " + "; ".join(a.text for a in answers) + "."


def scope(answers: list[FamilyAnswer], verdict: pd.DataFrame) -> str:
    """What the numbers are taken over: the profiles and pin granularities judged."""
    if not answers:
        return ""
    rows = verdict.dropna(subset=[CHARGED])
    profiles = ordered_profiles(rows["profile"])
    pins = list(dict.fromkeys(p for a in answers for p in a.pins))
    return (f"{len(profiles)} reuse profile{'s' if len(profiles) != 1 else ''} × "
            f"{' and '.join(pins)} pin{'s' if len(pins) != 1 else ''}")


# What the charged number compares, said beside it wherever the answer is printed.
COMPARAND = ("pin charged: each pin rung's consumer without the pin (L2P+OptMT: OptMT) against pin + pinned "
             "consumer, kernel timer, same family and pin granularity")


def comparand(answers: list[FamilyAnswer], verdict: pd.DataFrame) -> str:
    """The comparand and what the numbers are taken over: the parenthesis of the headline."""
    return f"{COMPARAND}; {scope(answers, verdict)}" if answers else ""


def headline(answers: list[FamilyAnswer], verdict: pd.DataFrame) -> str:
    """The study's answer in one sentence with its comparand named: the one string the README,
    the report's banner and the console print ('' when no family has a charged number)."""
    line = answer_line(answers)
    return f"{line} ({comparand(answers, verdict)})" if line else ""
