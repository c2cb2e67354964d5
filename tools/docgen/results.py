"""Regenerate the study's measured-results block, its prose and the README's headline from the committed run dirs.

    python tools/docgen results            # print the block
    python tools/docgen results --write    # replace it, the fidelity table, the prose and the headline

The blocks live in README.md and docs/*.md, each in the one page that holds it (tools/docgen/doc_pages.py).

The block sits between `<!-- results:begin ... -->` and `<!-- results:end -->`; the begin marker
names the run dirs (under examples/) it was made from. Tables come from l2attr.analysis and
l2attr.report.markdown, the code the report uses; the fidelity table from
examples/fidelity/fidelity.json (tools/probes/artifact_fidelity.py). The prose around them sits between
`<!-- prose:<name>:begin -->` and `<!-- prose:<name>:end -->`, filled from tools/docgen/prose/<name>.md.j2
with l2attr.study.findings of the runs named below (tools/docgen/prose_render.py).
The README's headline (`<!-- headline:begin -->`) is l2attr.ladders.analyse.answer's one line over the
runs the committed report page reads (`l2attr report examples/`: the same selection, so the README
and the page's banner say one string), with its comparand named. tests/test_readme_results.py and
tests/test_readme_prose.py fail when a page and the runs disagree.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from doc_pages import all_text, page_with, pages, replace, write_block  # noqa: E402
from l2attr.study import analyse, load_runs  # noqa: E402
from l2attr.report.markdown import md_table, results_markdown  # noqa: E402

BEGIN = re.compile(r"<!-- results:begin runs=(?P<runs>[^ ]+) -->\n")
END = "<!-- results:end -->"
FID_BEGIN, FID_END = "<!-- fidelity:begin -->\n", "<!-- fidelity:end -->"
HEAD_BEGIN, HEAD_END = "<!-- headline:begin -->\n", "<!-- headline:end -->"
PROSE = re.compile(r"<!-- prose:(?P<name>[\w-]+):begin -->\n")
EX = ROOT / "examples"
# the runs the prose names beyond the results block's (each template says which it reads)
FLUSH, FAST_ELEMENT = "20261130T201808Z-flush", "20261130T232557Z-fast-pin-element"
TIMELINE, CEILING = "20261130T231829Z-timeline", EX / "ceiling" / "gather_ceiling.csv"


def fidelity_markdown(path: Path) -> str:
    rep = json.loads(path.read_text())
    rows = []
    for rung, r in rep["rungs"].items():
        rows.append([rung, "yes" if r["outputs_identical"] else "NO", f"{r['ours_consumer_us']:.2f} µs",
                     f"{r['theirs_consumer_us']:.2f} µs", f"{(r['consumer_ratio'] - 1) * 100:+.2f} %",
                     f"{r['ours_pin_us']:.2f} / {r['theirs_pin_us']:.2f} µs" if r.get("ours_pin_us") else "—"])
    table = md_table(["rung", "outputs bit-identical", "l2attr artifact family", "artifact's own kernels",
                      "difference", "pin, ours / theirs"], rows, [False, False, True, True, True, True])
    sass = rep.get("sass", {})
    notes = "; ".join(f"{k}: {v['ours_instructions']} vs {v['theirs_instructions']} SASS instructions, "
                      f"memory-op sequence {'identical' if v['identical_memory_ops'] else 'DIFFERENT'}"
                      for k, v in sass.items())
    return (f"{table}\n\n{rep['arch']}, trace {rep['trace']} with {rep['hot']}; consumer medians over "
            f"{next(iter(rep['rungs'].values()))['n_calls']} calls per build. {notes}.\n")


def block(runs: list[str]) -> str:
    an = analyse(load_runs([ROOT / "examples" / r for r in runs]))
    return results_markdown(an)


def results_runs(readme: str) -> list[str]:
    m = BEGIN.search(readme)
    if not m:
        raise SystemExit("no page has a results:begin marker")
    return m["runs"].split(",")


def report_runs() -> list[Path]:
    """The ladder, profile and timeline runs `l2attr report examples/` reads (its own selection code),
    the runs behind the committed page's banner."""
    from l2attr.commands.report import expand_run_dirs, split_sweeps

    return split_sweeps(expand_run_dirs([EX]))[1]


def headline_block(runs: list[Path] | None = None) -> str:
    """The study's answer in one line: ladders.analyse.answer.headline over the committed report's runs
    (the string that page's banner and `l2attr report` print), then the GPU and the runs."""
    from l2attr.ladders.analyse.answer import headline, pin_answer

    runs = report_runs() if runs is None else runs
    an = analyse(load_runs(runs))
    gpus = sorted({str((r.manifest.get("gpu") or {}).get("name", "?")) for r in an.study.runs})
    names = ", ".join(f"`{r.name}`" for r in runs)
    return (f"{headline(pin_answer(an.verdict), an.verdict)} — {' and '.join(gpus)}, the runs of "
            f"`examples/report.md` (`l2attr report examples/`): {names}\n")


def prose_context(runs: list[str]) -> dict:
    """Every figure the prose templates use: l2attr.study.findings of the named runs."""
    import pandas as pd

    from l2attr.study import findings
    from l2attr.dlrm.ptxas import committed

    main_an = analyse(load_runs([EX / r for r in runs]))
    ladders = [r for r in runs if r.endswith("-bench")]          # the processes that measured the natural cells
    flush_an = analyse(load_runs([EX / r for r in [*ladders, FLUSH]]))
    fast_an = analyse(load_runs([EX / ladders[0], EX / FAST_ELEMENT]))
    timeline = load_runs([EX / TIMELINE])
    return {
        "runs": runs, "an": main_an, "series": findings.series_facts(main_an),
        "tuned_vs_artifact": findings.tuned_vs_artifact(main_an),
        "cross": findings.cross_process_facts(main_an), "lag": findings.launch_lag_facts(main_an),
        "xp": main_an.cross_process, "flush": findings.flush_facts(flush_an),
        "fast_element": findings.series_facts(fast_an), "fast_compare": findings.cross_process_facts(fast_an),
        "phases": findings.phase_facts(timeline.phases), "ceiling": findings.ceiling_facts(pd.read_csv(CEILING)),
        "ptxas": findings.ptxas_facts(committed()), "gpu": main_an.study.runs[0].manifest.get("gpu", {}),
        "names": {"flush": FLUSH, "fast_element": FAST_ELEMENT, "timeline": TIMELINE},
        "ptxas_nvcc": committed().get("nvcc", "unknown"),
        "ptxas_fast_function": committed()["variants"]["fast/optmt/none"]["consumer"]["function"],
    }


def prose_blocks(readme: str, context: dict | None = None) -> dict[str, str]:
    """name -> the filled template, for every prose block the README has."""
    from prose_render import render

    wanted = [m["name"] for m in PROSE.finditer(readme)]
    if not wanted:
        return {}
    context = context or prose_context(results_runs(readme))
    return {name: render(name, context) for name in wanted}


def replace_prose(readme: str, blocks: dict[str, str]) -> str:
    """The page's text with every prose block it holds replaced (blocks it does not hold are left)."""
    for name, text in blocks.items():
        begin, end = f"<!-- prose:{name}:begin -->\n", f"<!-- prose:{name}:end -->"
        if begin in readme:
            readme = replace(readme, begin, end, text)
    return readme


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args(argv)
    text = all_text()
    runs = results_runs(text)
    body = block(runs)
    headline = headline_block()
    prose = prose_blocks(text)
    fid = ROOT / "examples" / "fidelity" / "fidelity.json"
    if args.write:
        page = page_with(BEGIN)
        page_text = page.read_text()
        m = BEGIN.search(page_text)
        page.write_text(page_text[:m.end()] + body + page_text[page_text.index(END):])
        if FID_BEGIN in text and fid.is_file():
            write_block(FID_BEGIN, FID_END, fidelity_markdown(fid))
        write_block(HEAD_BEGIN, HEAD_END, headline)
        for p in pages():
            old = p.read_text()
            new = replace_prose(old, prose)
            if new != old:
                p.write_text(new)
    else:
        print(headline)
        print(body)
        for name, text_ in prose.items():
            print(f"<!-- prose:{name} -->\n{text_}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
