"""Fill the README's prose templates (tools/docgen/prose/<name>.md.j2) from the runs they name.

The figures come from l2attr.study.findings (named values of the analysis of the committed
runs); the filters below only format them. tools/docgen/results.py writes each filled template
between `<!-- prose:<name>:begin -->` and `<!-- prose:<name>:end -->` in README.md, and
tests/test_readme_prose.py fails when the README and a filled template disagree.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Iterable

import jinja2

TEMPLATES = Path(__file__).resolve().parent / "prose"
WORD_FORMS = {"faster": "faster", "slower": "slower", "within noise": "within noise"}


def _finite(values: Iterable[Any]) -> list[float]:
    out = []
    for x in values:
        try:
            f = float(x)
        except (TypeError, ValueError):
            continue
        if math.isfinite(f):
            out.append(f)
    return out


def num(x: Any, digits: int = 1) -> str:
    try:
        f = float(x)
    except (TypeError, ValueError):
        return "n/a"
    return "n/a" if not math.isfinite(f) else f"{f:,.{digits}f}"


def signed(x: Any, digits: int = 1) -> str:
    return "n/a" if not _finite([x]) else f"{float(x):+,.{digits}f}".replace("-", "−")


def span(values: Iterable[Any], digits: int = 1) -> str:
    """'17.0–18.1' over the finite values (one figure when they round alike); 'n/a' for none."""
    vals = _finite(values)
    if not vals:
        return "n/a"
    lo, hi = num(min(vals), digits), num(max(vals), digits)
    return lo if lo == hi else f"{lo}–{hi}"


def plist(values: Iterable[Any], digits: int = 1) -> str:
    """'−1.1, −0.7, +0.7, +1.1': each value signed, in order."""
    return ", ".join(signed(v, digits) for v in values)


def neg(x: Any) -> float:
    return -float(x)


def pct(x: Any, digits: int = 1) -> str:
    """A fraction as a percentage figure."""
    return "n/a" if not _finite([x]) else num(100 * float(x), digits)


def span_text(values: Iterable[Any]) -> str:
    """Break-even texts ('4', '9', 'never', 'within noise'): a range of the numbers, else the words."""
    vals = list(values)
    nums = sorted(int(v) for v in vals if str(v).isdigit())
    rest = sorted({str(v) for v in vals if not str(v).isdigit()})
    said = [] if not nums else [str(nums[0]) if nums[0] == nums[-1] else f"{nums[0]}–{nums[-1]}"]
    return " or ".join(said + rest) or "n/a"


def every(words: Iterable[str], word: str, what: str = "profile") -> str:
    """'on every profile' or 'on 3 of 4 profiles' (of the rule's words)."""
    ws = list(words)
    n = sum(1 for w in ws if w == word)
    return f"on every {what}" if n == len(ws) else f"on {n} of {len(ws)} {what}s"


def verdict_word(words: Iterable[str]) -> str:
    """The rule's word the most cases share ('slower', 'faster', 'within noise')."""
    ws = list(words)
    return max(WORD_FORMS, key=lambda w: ws.count(w)) if ws else "not measured"


def by_word(profiles: Iterable[dict[str, Any]], field: str) -> str:
    """'faster on reuse_high and reuse_medium, slower on reuse_low and random'."""
    groups: dict[str, list[str]] = {}
    for p in profiles:
        groups.setdefault(str(p[field]), []).append(str(p["profile"]))
    return ", ".join(f"{w} on {' and '.join(ps) if len(ps) < 3 else ', '.join(ps[:-1]) + ' and ' + ps[-1]}"
                     for w, ps in groups.items())


def thousands(x: Any) -> str:
    return f"{int(x):,}"


def zip_gt(values: Iterable[Any], others: Iterable[Any], what: str = "profile") -> str:
    """'on every profile' / 'on 3 of 4 profiles': where a value exceeds its partner."""
    pairs = list(zip(_finite(values), _finite(others)))
    n = sum(1 for a, b in pairs if a > b)
    return f"on every {what}" if pairs and n == len(pairs) else f"on {n} of {len(pairs)} {what}s"


def by_word_list(words: Iterable[str], profiles: Iterable[dict[str, Any]]) -> str:
    """The rule's words beside their profiles: 'slower on every profile' or per word."""
    ws, ps = list(words), [str(p["profile"]) for p in profiles]
    if len(set(ws)) == 1 and ws:
        return f"{ws[0]} by the rule on every profile"
    return "by the rule " + by_word([{"profile": p, "w": w} for p, w in zip(ps, ws)], "w")


def by_profile(values: Iterable[Any], profiles: Iterable[dict[str, Any]]) -> str:
    """'4 on reuse_high, 9 on random': each value with its profile."""
    return ", ".join(f"{v} on {p['profile']}" for v, p in zip(values, profiles))


def max_pct(values: Iterable[Any], digits: int = 1) -> str:
    vals = _finite(values)
    return "n/a" if not vals else num(100 * max(vals), digits)


def consumer_diff(compare: Iterable[dict[str, Any]]) -> str:
    """'consumer medians within 0.27 % (median 0.10 % over 4 cells)': the compare section's kernel-timer figure."""
    for r in compare:
        if r["quantity"] == "consumer" and r["timer"] == "kernel":
            return (f"its consumer medians lie at most {r['max_abs_diff_pct']:.2f} % from those of the run above, "
                    f"{r['median_abs_diff_pct']:.2f} % in the median over {r['cells']} cells")
    return "no consumer cell in common"


def median(values: Iterable[Any]) -> float:
    vals = sorted(_finite(values))
    if not vals:
        return float("nan")
    mid = len(vals) // 2
    return vals[mid] if len(vals) % 2 else (vals[mid - 1] + vals[mid]) / 2


def counted(words: Iterable[str]) -> str:
    """'slower by the rule in 12 of 12' or 'slower in 3, within noise in 1' (the rule's words counted)."""
    ws = list(words)
    if ws and len(set(ws)) == 1:
        return f"{ws[0]} by the rule in all {len(ws)}"
    return "by the rule " + ", ".join(f"{w} in {ws.count(w)}" for w in dict.fromkeys(ws))


def rows_of(df: Any, column: str, value: Any) -> list[dict[str, Any]]:
    """The records of a frame whose `column` equals `value` (the primary L2 state's rows)."""
    if df is None or len(df) == 0 or column not in df:
        return []
    return df[df[column] == value].to_dict("records")


def environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), undefined=jinja2.StrictUndefined,
                             keep_trailing_newline=True, autoescape=False)
    env.filters.update(num=num, signed=signed, span=span, plist=plist, neg=neg, pct=pct, span_text=span_text,
                       every=every, verdict_word=verdict_word, by_word=by_word, thousands=thousands,
                       zip_gt=zip_gt, by_word_list=by_word_list, by_profile=by_profile, max_pct=max_pct,
                       consumer_diff=consumer_diff, median=median, counted=counted, rows_of=rows_of)
    return env


def names() -> list[str]:
    return sorted(p.name[: -len(".md.j2")] for p in TEMPLATES.glob("*.md.j2"))


def render(name: str, context: dict[str, Any]) -> str:
    text = environment().get_template(f"{name}.md.j2").render(**context)
    return text if text.endswith("\n") else text + "\n"
