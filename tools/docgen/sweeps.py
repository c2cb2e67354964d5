"""Regenerate the sweep blocks (docs/sweeps.md) from the axis declarations and the committed sweep runs.

    python tools/docgen sweeps            # print both blocks
    python tools/docgen sweeps --write    # replace them in the page that holds them (tools/docgen/doc_pages.py)

`<!-- sweep-axes:begin -->`: the axes table of the "Sweeps" section, from the registry
(l2attr/sweep/axes/): a new axis appears there by its declaration.
`<!-- sweeps:begin runs=... -->`: what the committed sweeps found, per family and profile, every
word from analysis/significance.py's one rule (through l2attr.sweep.analyse.judge, the code the report
uses), the occupy sweep's recorded ncu check beside it, and the APW+OptMT ladder rung judged by
the same rule. tests/test_readme_sweeps.py fails when a block and its source disagree.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from l2attr.analysis.significance import Interval, compare  # noqa: E402
from l2attr.sweep.analyse.judge import SweepAnalysis, analyse_sweep  # noqa: E402
from l2attr.sweep.load import load_sweep  # noqa: E402
from l2attr.sweep.analyse.verdict import times, word  # noqa: E402
from l2attr.sweep import axes  # noqa: E402
from l2attr.sweep.section.text import break_even_rows, check_lines, md  # noqa: E402
from l2attr.rundir import RunDir  # noqa: E402
from l2attr.schema import CELLS  # noqa: E402
from l2attr.vocab import Arm, Quantity, SweepJudgement, Timer  # noqa: E402

AXES_BEGIN, AXES_END = "<!-- sweep-axes:begin -->\n", "<!-- sweep-axes:end -->"
BEGIN = re.compile(r"<!-- sweeps:begin runs=(?P<runs>[^ ]+) -->\n")
END = "<!-- sweeps:end -->"
ARM_NAMES = {Arm.OPTMT.value: "OptMT", Arm.PIN.value: "pin → L2P+OptMT", Arm.REMAP.value: "remap alone",
             Arm.WINDOW.value: "remap + window"}


def axes_block() -> str:
    rows = []
    for name in axes.runnable():
        s = axes.AXES[name]
        options = ", ".join(f"`{o.flag} {o.text(list(o.default))}`" for o in s.options)
        rows.append([f"`{name}`", options, "; ".join(ARM_NAMES.get(a.value, a.value) for a in s.arms),
                     s.answers, s.judgement.kind.value.replace("_", " ")])
    former = [f"`{n}` (now `{s.renamed_to}`)" for n, s in axes.AXES.items() if s.renamed_to is not None]
    text = md(["axis", "x (defaults)", "arms per point", "what it answers", "judgement"], rows)
    return text + (f"\n\nRead, not run: {', '.join(former)}: runs made under a former name load, analyse "
                   "and render as they were measured.\n" if former else "\n")


def _by_series(an: SweepAnalysis, column: str | None = None) -> list[list[str]]:
    s = an.summary
    if column is not None:
        s = s[s["column"] == column]
    return [[r["family"], r["profile"], r["text"]] for r in s.to_dict("records")]


def sweep_section(an: SweepAnalysis) -> str:
    """One committed sweep: its title, run and the judgement per family and profile."""
    spec, kind = an.spec, an.spec.judgement.kind
    name = spec.title.removeprefix("Sweep: ")
    former = f", recorded as `{an.run.manifest['sweep']['axis']}` before the rename" if spec.renamed_to else ""
    head = f"**{name[:1].upper()}{name[1:]}** (`{an.run.name}`{former}):"
    if kind == SweepJudgement.BREAK_EVEN:
        body = md(*break_even_rows(an))
    elif kind == SweepJudgement.PEAK:
        cols = (spec.judgement.on, *spec.judgement.also)
        headers = {c.name: c.header for c in spec.table.columns}
        per = {c: {(f, p): t for f, p, t in _by_series(an, c)} for c in cols}
        keys = list(dict.fromkeys(k for c in cols for k in per[c]))
        body = md(["family", "profile", *(headers[c] for c in cols)],
                  [[f, p, *(per[c].get((f, p), "n/a") for c in cols)] for f, p in keys])
    elif kind == SweepJudgement.BEST_VS_REFERENCE:
        arms = list(dict.fromkeys(an.summary["arm"]))
        per = {(r["family"], r["profile"], r["arm"]): r["text"] for r in an.summary.to_dict("records")}
        keys = list(dict.fromkeys((r["family"], r["profile"]) for r in an.summary.to_dict("records")))
        body = md(["family", "profile", *(ARM_NAMES.get(a, a) for a in arms)],
                  [[f, p, *(per.get((f, p, a), "n/a") for a in arms)] for f, p in keys])
    elif kind == SweepJudgement.PER_POINT:
        per: dict[tuple[str, str], list[str]] = {}
        for f, p, t in _by_series(an):
            per.setdefault((f, p), []).append(t)
        body = md(["family", "profile", "pin-charged speedup over OptMT (the rule's word)"],
                  [[f, p, ", ".join(ts)] for (f, p), ts in per.items()])
    else:
        body = md(["family", "profile", "judgement"], _by_series(an))
    checks = "".join(f"\n\n{line}" for line in check_lines(an))
    return f"{head}\n\n{body}{checks}\n"


def apw_section(path: Path) -> str:
    """The APW+OptMT ladder rung against OptMT (consumer kernel time), and the pin beside it."""
    cells = RunDir(path).read(CELLS)
    sel = cells[(cells["quantity"] == Quantity.CONSUMER.value) & (cells["timer"] == Timer.KERNEL.value)]
    iv = {(r.family, r.profile, r.rung): Interval(float(r.median_us), float(r.ci95_lo_us), float(r.ci95_hi_us))
          for r in sel.itertuples()}
    rows = []
    for fam, prof in dict.fromkeys((r.family, r.profile) for r in sel.itertuples()):
        said = []
        for rung in ("apw_optmt", "l2p_optmt"):
            base, new = iv.get((fam, prof, "optmt")), iv.get((fam, prof, rung))
            if base is None or new is None:
                said.append("n/a")
                continue
            j = compare(base, new)
            said.append(f"{times(j.speedup)} ({word(j)})")
        rows.append([fam, prof, *said])
    return (f"**APW+OptMT as a ladder rung** (`{path.name}`, consumer kernel time against OptMT, the rule's word):"
            f"\n\n{md(['family', 'profile', 'APW+OptMT (window, no pin)', 'L2P+OptMT (pin)'], rows)}\n")


def block(runs: list[str]) -> str:
    parts = []
    for name in runs:
        path = ROOT / "examples" / name
        if (path / CELLS.filename).is_file():
            parts.append(apw_section(path))
        else:
            parts.append(sweep_section(analyse_sweep(load_sweep(path))))
    return "\n".join(parts)


def replace(readme: str) -> str:
    a = readme.index(AXES_BEGIN) + len(AXES_BEGIN)
    readme = readme[:a] + axes_block() + readme[readme.index(AXES_END, a):]
    m = BEGIN.search(readme)
    if not m:
        raise SystemExit("the sweeps page has no sweeps:begin marker")
    end = readme.index(END, m.end())
    return readme[:m.end()] + block(m.group("runs").split(",")) + readme[end:]


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args(argv)
    from doc_pages import page_with

    path = page_with(AXES_BEGIN)
    readme = path.read_text()
    new = replace(readme)
    if args.write:
        path.write_text(new)
    else:
        print(new[new.index(AXES_BEGIN):new.index(AXES_END)])
        m = BEGIN.search(new)
        print(new[m.start():new.index(END) + len(END)])
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
