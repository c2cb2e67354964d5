"""The grid's page and its call record: what examples/steps/hf_grid.py measured, read back from its runs.

    python examples/steps/hf_grid.py --page examples/steps/hf_grid    # the page from the runs below it
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

def finished(folders: list[Path]) -> dict[str, str]:
    """Step name -> GPU name of every finished run under any of `folders` (a grid resumes)."""
    import json

    names = {}
    for f in folders:
        for m in f.rglob("manifest.json") if f.is_dir() else []:
            got = json.loads(m.read_text())
            if got.get("status") == "complete" and got.get("kind") == "step":
                names[(got.get("step") or {}).get("name")] = (got.get("gpu") or {}).get("name") or "?"
    return names


def one_gpu(runs: dict[str, str], here: str) -> str:
    """'' when every finished run was measured on this GPU; else the one line that refuses to add
    rows from another (a grid's page is one comparison: one GPU identity)."""
    others = sorted({g for g in runs.values() if g != here})
    if not others:
        return ""
    return (f"the finished runs were measured on {', '.join(others)}, this GPU is {here}: a grid's rows come "
            "from one GPU; measure into an empty --out with no --done, or on that GPU")


CALLS = "grid_calls.jsonl"    # one line per call of the grid that measured something: its wall time


def record_call(out: Path, spent: dict[str, Any], wall_s: float, argv: list[str]) -> None:
    """Add this call's line to <out>/CALLS (rewritten whole, atomically): the grid's wall time is
    a record beside its runs, not a number copied from a log."""
    import datetime as dt
    import json

    from l2attr import atomic

    if not spent["models"]:
        return
    line = {"finished_utc": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            "command": " ".join(["hf_grid.py", *argv]), "wall_s": round(wall_s, 1), **spent}
    path = out / CALLS
    before = path.read_text() if path.is_file() else ""
    out.mkdir(parents=True, exist_ok=True)
    atomic.write_text(path, before + json.dumps(line) + "\n")


def wall_sentence(folder: Path, rows: int) -> str:
    """What the grid's calls under `folder` took, from their CALLS lines; the `rows` no line covers
    (a call cut off before its end writes none) are counted, not hidden."""
    import json

    lines = [json.loads(x) for f in sorted(folder.rglob(CALLS)) for x in f.read_text().splitlines() if x.strip()]
    if not lines:
        return f"No wall-time record under this folder ({CALLS}): these runs were measured before the grid kept one."
    parts = []
    for c in lines:
        ms = c["models"].values()
        n = sum(len(m["steps"]) for m in ms)
        parts.append(f"{c['wall_s']:.1f} s on {c['gpu']} for {n} step(s) (ncu reading "
                     f"{sum(m['ncu_s'] for m in ms):.1f} s, steps {sum(m.get('steps_s', 0.0) for m in ms):.1f} s)")
    n_all = sum(len(m["steps"]) for c in lines for m in c["models"].values())
    head = (f"Wall time ({CALLS}): one call of the grid measured these {n_all} steps: " if len(lines) == 1
            else f"Wall time ({CALLS}): {len(lines)} calls of the grid measured these {n_all} steps, "
                 f"{sum(c['wall_s'] for c in lines):.1f} s in all: ")
    left = f" {rows - n_all} of the page's {rows} rows were measured by calls with no record." if rows > n_all else ""
    return head + "; ".join(parts) + "." + left


PAGE = "README.md"
# kernel names of scaled-dot-product attention (cuDNN, flash, memory-efficient)
ATTENTION = r"sdpa|attention|fmha|flash"


def checks(a: Any) -> dict[str, str]:
    """Two cells per step for issue 36's must-show, from the run: whether the matched reading (share
    of kernel time) lies inside its clean/dirty bracket within intervals (the kernels' own rule,
    analysis/step_reading.py out_of_bracket, on the step's shares), and the attention kernels the
    clean arm calls slower by reuse, then how many of those the matched arm still calls slower, and
    any other attention kernel only the matched arm calls slower."""
    import pandas as pd

    from l2attr.analysis.step_reading import MATCHED, out_of_bracket

    k = a.kernels
    m = a.matched.share if a.matched is not None else None
    (clo, _), (_, dhi) = a.share_ci, a.share_dirty_ci
    step = pd.DataFrame({f"{MATCHED}_lo": [m.lo if m else 0.0], f"{MATCHED}_hi": [m.hi if m else 0.0],
                         "cold_lo": [clo], "dirty_hi": [dhi]})
    inside = "n/a" if m is None else ("no" if bool(out_of_bracket(step).iloc[0]) else "yes")
    if "judgement" not in k or "clean_judgement" not in k or m is None:
        return {"inside": inside, "attention": "n/a"}
    att = k[k["kernel"].astype(str).str.contains(ATTENTION, case=False, regex=True)]
    clean_slow = att[att["clean_judgement"] == "slower"]
    still = int((clean_slow["judgement"] == "slower").sum())
    other = int(((att["judgement"] == "slower") & (att["clean_judgement"] != "slower")).sum())
    return {"inside": inside, "attention": f"{len(clean_slow)} of {len(att)} clean -> {still} matched"
                                            + (f" (+{other} slower only when matched)" if other else "")}


def write_page(folder: Path) -> str:
    """The grid's page (Markdown) from every grid run below `folder`: one row per configuration."""
    from l2attr.analysis.step import StepAnswer
    from l2attr.analysis.step_reading import STUDY, grid_rows, grid_sentence

    runs = sorted(p.parent for p in folder.rglob("manifest.json") if "hf-grid" in p.read_text())
    answers = [StepAnswer.from_run(r) for r in runs]
    rows = grid_rows(answers)
    extra = [checks(a) for a in answers]
    rows["inside"], rows["attention"] = [e["inside"] for e in extra], [e["attention"] for e in extra]
    cols = ["step", "eager_us", "eager_share", "activations_share", "versus_study", "replay_share",
            "kernel_share", "clean_share", "dirty_share", "inside", "out_of_bracket", "attention"]
    head = ["step", "eager step (µs)", "matched share of the eager step", "activations' share of the eager step",
            "activations against the study", "matched share of the replay", "matched share of kernel time",
            "clean (kernel time)", "dirty (kernel time)", "matched inside its bracket (intervals)",
            "kernels outside their bracket", "attention kernels slower by reuse"]
    gpus = sorted({(a.manifest.get("gpu") or {}).get("name") or "an unnamed GPU" for a in answers})
    lines = [f"# The study's question on HuggingFace LLM steps ({', '.join(gpus) or 'no runs yet'})", "",
             f"The study: {STUDY}. Each row is one step measured by `l2attr.step` with the write-back-matched "
             "cold arm (docs/step-method.md); shares are medians with 95 % bootstrap intervals; the judgement "
             "against 0.65 % uses the activations' interval of the eager step's share. The last column counts the "
             "attention kernels (names matching `" + ATTENTION + "`) the clean cold arm calls slower by reuse, "
             "then how many of those the write-back-matched arm still calls slower.", "",
             grid_sentence(answers), "", wall_sentence(folder, len(runs)), "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(str(r[c]) for c in cols) + " |" for r in rows.to_dict("records")]
    lines += ["", f"Made by `python examples/steps/hf_grid.py --page {folder}` from the runs below this folder "
              f"({len(runs)} runs; the command that measured them is in each manifest).", ""]
    text = "\n".join(lines)
    (folder / PAGE).write_text(text)
    return text


