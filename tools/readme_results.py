"""Regenerate the README's measured-results block from the committed run dirs.

    python tools/readme_results.py            # print the block
    python tools/readme_results.py --write    # replace it in README.md

The block sits between `<!-- results:begin ... -->` and `<!-- results:end -->`; the begin marker
names the run dirs (under examples/) it was made from. Tables come from l2attr.analysis and
l2attr.report.markdown, the code the report uses; the fidelity table from
examples/fidelity/fidelity.json (tools/artifact_fidelity.py). tests/test_readme_results.py fails
when the block and the committed runs disagree.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from l2attr.analysis import analyse, load_runs  # noqa: E402
from l2attr.report.markdown import md_table, results_markdown  # noqa: E402

BEGIN = re.compile(r"<!-- results:begin runs=(?P<runs>[^ ]+) -->\n")
END = "<!-- results:end -->"


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


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args(argv)
    readme = (ROOT / "README.md").read_text()
    m = BEGIN.search(readme)
    if not m:
        raise SystemExit("README.md has no results:begin marker")
    runs = m["runs"].split(",")
    text = block(runs)
    fid = ROOT / "examples" / "fidelity" / "fidelity.json"
    if "<!-- fidelity:begin -->" in readme and fid.is_file():
        f_text = fidelity_markdown(fid)
        a = readme.index("<!-- fidelity:begin -->\n") + len("<!-- fidelity:begin -->\n")
        readme = readme[:a] + f_text + readme[readme.index("<!-- fidelity:end -->"):]
    if args.write:
        m = BEGIN.search(readme)
        readme = readme[:m.end()] + text + readme[readme.index(END):]
        (ROOT / "README.md").write_text(readme)
    else:
        print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
