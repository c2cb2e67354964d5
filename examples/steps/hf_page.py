"""The grid's page and its call record: what examples/steps/hf_grid.py measured, read back from its runs.

    python examples/steps/hf_grid.py --page examples/steps/hf_grid    # the page from the runs below it
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

MANIFEST_LIMIT, CALLS_LIMIT = 16 << 20, 16 << 20       # bytes a grid reader reads of a file a user may have damaged


def finished(folders: list[Path]) -> dict[str, str]:
    """Step name -> GPU name of every finished run under any of `folders` (a grid resumes). A
    manifest that is no regular file, too big, not JSON or damaged is one UserError line naming it
    (never a read that blocks on a FIFO, never a traceback); its fields are read through the step's
    model (l2attr/manifest_model.py)."""
    from l2attr.manifest_model import typed
    from l2attr.safe_read import read_json_limited

    names = {}
    for f in folders:
        for m in f.rglob("manifest.json") if f.is_dir() else []:
            got = read_json_limited(m, MANIFEST_LIMIT, 64)
            if not isinstance(got, dict) or got.get("kind") != "step":
                continue                                   # not a step run: not the grid's
            t = typed(got, source=str(m))
            if t.status == "complete" and t.step is not None and t.step.name:
                names[t.step.name] = str((t.gpu.name if t.gpu is not None else None) or "?")
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
    from l2attr.safe_read import read_text_limited

    path = out / CALLS
    before = read_text_limited(path, CALLS_LIMIT) if path.exists() or path.is_symlink() else ""
    out.mkdir(parents=True, exist_ok=True)
    atomic.write_text(path, before + json.dumps(line) + "\n")


def call_lines(folder: Path) -> list[dict[str, Any]]:
    """Every call record under `folder`; a line cut mid-write (a killed call) is left out and said."""
    import json

    from l2attr.safe_read import read_text_limited

    out = []
    for f in sorted(folder.rglob(CALLS)):
        for x in read_text_limited(f, CALLS_LIMIT).splitlines():
            try:
                got = json.loads(x) if x.strip() else None
            except ValueError:
                print(f"hf_grid: {f}: a cut line of the call record was left out", file=sys.stderr)
                continue
            if isinstance(got, dict) and isinstance(got.get("models"), dict):
                out.append(got)
    return out


def ncu_cost(call: dict[str, Any]) -> tuple[float, int]:
    """(seconds, kernel nodes read) of one call's write-back reading: the grid-wide child's record
    (`ncu_s`, `ncu_nodes`), or an older call's per-model seconds with no node count (0)."""
    if "ncu_s" in call:
        return float(call["ncu_s"]), int(call.get("ncu_nodes", 0))
    return float(sum(m.get("ncu_s", 0.0) for m in call["models"].values())), 0


def wall_sentence(folder: Path, rows: int) -> str:
    """What the grid's calls under `folder` took, from their CALLS lines; the `rows` no line covers
    (a call cut off before its end writes none) are counted, not hidden."""
    import json

    lines = call_lines(folder)
    if not lines:
        return f"No wall-time record under this folder ({CALLS}): these runs were measured before the grid kept one."
    parts = []
    for c in lines:
        ms = c["models"].values()
        n = sum(len(m["steps"]) for m in ms)
        s, nodes = ncu_cost(c)
        per = f", {100 * s / nodes:.1f} s per 100 kernel nodes read" if nodes else ""
        parts.append(f"{c['wall_s']:.1f} s on {c['gpu']} for {n} step(s) (ncu reading "
                     f"{s:.1f} s{per}, steps {sum(m.get('steps_s', 0.0) for m in ms):.1f} s)")
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
    steps/analyse/reading.py out_of_bracket, on the step's shares), and the attention kernels the
    clean arm calls slower by reuse, then how many of those the matched arm still calls slower, and
    any other attention kernel only the matched arm calls slower."""
    import pandas as pd

    from l2attr.steps.analyse.reading import MATCHED, out_of_bracket

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


def _pct(sh: Any) -> str:
    return "n/a" if sh is None else f"{100 * sh.share.median:+.2f} [{100 * sh.share.lo:+.2f}, {100 * sh.share.hi:+.2f}]"


def _verdict(sh: Any) -> str:
    """A share's place against 0.65 % (the one rule, with the stopping rule's width)."""
    return "not measured" if sh is None else _against(sh.share)


def _against(iv: Any) -> str:
    from l2attr.steps.analyse.split import DECIDE_HALF_WIDTH, versus_claim

    return versus_claim(iv.lo, iv.hi, half_width=DECIDE_HALF_WIDTH).replace("the study's ", "")


def _facts(a: Any) -> dict[str, Any]:
    from l2attr.manifest_model import recorded

    return dict(recorded(a.manifest, "step.facts", {}) or {})


def _shape(f: dict[str, Any]) -> str:
    if "hidden_size" not in f:
        return "n/a (a run before the grid recorded shapes)"
    moe = f", {f['experts']} experts ({f['active_experts']} active)" if f.get("experts") else ""
    return (f"h{f['hidden_size']}, ffn {f['intermediate_size']}, {f['heads']}/{f['kv_heads']} heads{moe}; "
            f"{f['layers']} of {f['full_layers']} layers")


def _program(a: Any) -> str:
    """The program check: the graph's kernels against the call's, and the natural replay against the eager
    call's kernel time (the answer's first line says when they differ)."""
    from l2attr.manifest_model import recorded

    diff = recorded(a.manifest, "surgery.call_kernel_difference", {}) or {}
    n = len(diff.get("only_in_graph") or []) + len(diff.get("only_in_call") or [])
    return ("same kernels" if not n else f"{n} kernel(s) differ") + (f"; {a.note.strip()}" if a.note else "")


def _eager_of(a: Any) -> list[float]:
    from l2attr.manifest_model import recorded

    return [float(x) for x in recorded(a.manifest, "surgery.eager_us", []) or []]


def depth_rows(answers: list[Any]) -> list[dict[str, str]]:
    """Per (model, configuration) measured at two depths or more: the activations' share of the eager step
    at full depth from the per-layer model (steps/analyse/split.per_layer, the two shallowest depths), and
    the full-depth measurement where one was made, with whether it lies inside the model's interval."""
    import numpy as np

    from l2attr.steps.analyse.split import per_layer

    groups: dict[tuple, dict[int, Any]] = {}
    for a in answers:
        f = _facts(a)
        if "layers" in f and a.parts is not None and not f.get("compile"):     # a compiled row is another program
            groups.setdefault((f["model"], f["phase"], f["batch"], f["tokens"]), {})[int(f["layers"])] = a
    out = []
    for (model, phase, b, n), by in sorted(groups.items()):
        full = int(_facts(next(iter(by.values())))["full_layers"])
        cut = sorted(d for d in by if d < full)
        if len(cut) < 2:
            continue
        lo, hi = by[cut[0]], by[cut[1]]
        model_iv = per_layer((cut[0], np.array(lo.parts.samples), np.array(_eager_of(lo))),
                             (cut[1], np.array(hi.parts.samples), np.array(_eager_of(hi))), full)
        got = by.get(full)
        meas = got.activations.share if got is not None and got.activations is not None else None
        held = ("n/a" if meas is None else
                ("yes" if meas.lo <= model_iv.hi and model_iv.lo <= meas.hi else "no"))
        out.append({"config": f"{model} {phase} b{b} {n}", "depths": f"{cut[0]}, {cut[1]} -> {full}",
                    "model": f"{100 * model_iv.median:+.2f} [{100 * model_iv.lo:+.2f}, {100 * model_iv.hi:+.2f}]",
                    "verdict": _against(model_iv),
                    "measured": "not measured" if meas is None else
                    f"{100 * meas.median:+.2f} [{100 * meas.lo:+.2f}, {100 * meas.hi:+.2f}]", "held": held})
    return out


def counts(answers: list[Any], which: str) -> str:
    """How many rows fall below, above, at (± 0.15 pp) and undecided against 0.65 %, for one denominator
    (steps/analyse/split.study_counts: the report's first screen counts the same way)."""
    from l2attr.steps.analyse.split import study_counts

    c = study_counts(answers, which)
    left = c["undecided"] + c["not measured"]
    return (f"{c['below']} below 0.65 %, {c['above']} above 0.65 %, {c['at']} at 0.65 %, {left} undecided, "
            f"of {len(answers)}")


def write_page(folder: Path) -> str:
    """The grid's page (Markdown) from every grid run below `folder`: the first screen (GPU, models,
    counts on each side of the bound for both denominators), a row per run, the depth model, the
    kernels behind the largest row. Written atomically."""
    from l2attr import atomic
    from l2attr.steps.analyse.answer import StepAnswer
    from l2attr.steps.analyse.reading import EAGER, REPLAY, STUDY
    from l2attr.manifest_model import recorded

    runs = sorted(p.parent for p in folder.rglob("manifest.json") if "hf-grid" in p.read_text(errors="replace"))
    answers = [StepAnswer.from_run(r) for r in runs]
    gpus = sorted({recorded(a.manifest, "gpu.name") or "an unnamed GPU" for a in answers})
    models = sorted({f"{_facts(a).get('model', '?')} ({_shape(_facts(a)).split(';')[0]})" for a in answers})
    first = answers[0].manifest if answers else {}
    torch_v, driver = recorded(first, "software.torch", "?"), recorded(first, "gpu.driver", "?")
    head = ["step", "model shape; layers measured of full", "write-back", "repeats", "non-data cost",
            "activations (matched cold arm), % of the eager step", "vs 0.65 % (eager step)",
            "activations (matched cold arm), % of the graph replay",
            "vs 0.65 % (graph replay)", "matched-cold-arm saving, % of the eager step", "headroom (natural - warm inputs), % of the eager step",
            "eager step (µs)", "program check"]
    lines = [f"# Worth the Bytes? on HuggingFace LLM steps ({', '.join(gpus) or 'no runs yet'})", "",
             f"{STUDY[0].upper()}{STUDY[1:]}. GPU: {', '.join(gpus) or 'none'} (driver {driver}, torch "
             f"{torch_v}, transformers {_facts(answers[0]).get('transformers', '?') if answers else '?'}, "
             f"host CPU {_facts(answers[0]).get('host_cpu', '?') if answers else '?'}). Models: {'; '.join(models) or 'none'}.", "",
             f"**Activations' share of the eager step** (the study's denominator): {counts(answers, EAGER)}. "
             f"**Of the graph replay** (how CUDA-graph servers run decode): {counts(answers, REPLAY)}. "
             "A share is judged by its 95 % interval against 0.65 %; an interval within ± 0.15 pp that holds "
             "0.65 % reads \"at 0.65 %\".", "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for a in answers:
        f, sp = _facts(a), a.parts
        cells = [a.name, _shape(f), f.get("write_back_how", "n/a"), str(recorded(a.manifest, "step.repeats")),
                 ("n/a" if sp is None else sp.method.split(":")[0] + (f" ({sp.unread} charged the control)" if sp.unread else "")),
                 _pct(a.share_of("activations", EAGER)), _verdict(a.share_of("activations", EAGER)),
                 _pct(a.share_of("activations", REPLAY)), _verdict(a.share_of("activations", REPLAY)),
                 _pct(a.share_of("matched", EAGER)), _pct(a.share_of("headroom", EAGER)),
                 f"{a.eager.denominator_us.median:.1f}" if a.eager else "n/a", _program(a)]
        lines.append("| " + " | ".join(c.replace("|", "/") for c in cells) + " |")
    skipped = sorted({w for c in call_lines(folder) for w in c.get("skipped", [])})
    if skipped:
        lines += ["", "Not measured, and why: " + "; ".join(skipped) + "."]
    deep = depth_rows(answers)
    if deep:
        lines += ["", "## Full depth from the per-layer model (activations against the matched cold arm, % of the eager step)", "",
                  "| configuration | depths measured -> full | model at full depth, activations (matched cold arm), % of the eager step | "
                  "vs 0.65 % (eager step) | measured at full depth, activations (matched cold arm), % of the eager step | measured inside the model's interval |",
                  "|---|---|---|---|---|---|"]
        lines += [f"| {r['config']} | {r['depths']} | {r['model']} | {r['verdict']} | {r['measured']} | {r['held']} |" for r in deep]
    top = max((a for a in answers if a.activations is not None), key=lambda a: a.activations.share.median, default=None)
    if top is not None:
        k = top.kernels[top.kernels["met_flush"]].copy()
        k["m"] = k.get("saving_cold_matched_us", k["saving_us"])
        k = k.reindex(k["m"].abs().sort_values(ascending=False).index).head(8)
        lines += ["", f"## The kernels behind the largest row ({top.name}; µs per kernel, medians)", "",
                  "| kernel | natural µs | matched cold arm µs | saving against the matched cold arm µs | rewarmed µs | warm inputs µs |", "|---|---|---|---|---|---|"]
        for r in k.to_dict("records"):
            lines.append(f"| {str(r['kernel'])[:70].replace('|', '/')} | {r['natural_us']:.2f} | "
                         f"{r.get('cold_matched_us', float('nan')):.2f} | {r['m']:+.2f} | "
                         f"{r.get('rewarmed_us', float('nan')):.2f} | {r.get('warm_inputs_us', float('nan')):.2f} |")
    lines += ["", wall_sentence(folder, len(runs)), "",
              f"Made by `python examples/steps/hf_grid.py --page {folder}` from the runs below this folder "
              f"({len(runs)} runs; the command that measured them is in each manifest).", ""]
    text = "\n".join(lines)
    atomic.write_text(folder / PAGE, text)
    return text
