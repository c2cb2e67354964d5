"""The study page's speed lines (issue 39's targets), made from the committed records.

    python tools/docgen speed_record            print the block
    python tools/docgen speed_record --write    put it between `<!-- speed:begin -->` and
                                            `<!-- speed:end -->` on the page that holds them

Reads: examples/logs/speed/h200/ (`bash tools/device_closing.sh` on an H200: the ladder's three cold
processes and their two-process compare, then a profile-job record), h100/ (that script on an H100:
the newest profile-job record; its ladder step among the earlier ladders), trials/ and final/ (earlier
ladder calls on H100s; final/ also for its exit probe), pm1/, profile_cost/, first/ and bytecode/
(the profile job's earlier records), the LLM grid's call record
(examples/steps/hf_grid/grid_calls.jsonl) and the step attribution's scale record
(examples/logs/answer/bench_steps_scale_h100_2.json). tests/test_speed_record.py holds the page to it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SPEED = ROOT / "examples" / "logs" / "speed"
GRID = ROOT / "examples" / "steps" / "hf_grid" / "grid_calls.jsonl"
SCALE = ROOT / "examples" / "logs" / "answer" / "bench_steps_scale_h100_2.json"
BEGIN, END = "<!-- speed:begin -->\n", "<!-- speed:end -->"
# The newest profile-job record and the script that made it (the page's profile line; the test of
# today's default command lines rebuilds its two ncu command lines)
PROFILE_RECORD, PROFILE_SCRIPT = SPEED / "h100_c2b1", "tools/device_closing.sh"
# The ladder's and the profile's targets come from their records (`target_s`, written by
# benchmarks/bench_ladder.py and bench_profile.py); these have no record of their own.
TARGETS = {"compare": 1.0, "grid": 600.0, "steps": 60.0}


def verdict(value: float, target: float) -> str:
    """The one rule for a target: at or under it is within, above it is over."""
    return "within" if value <= target else "OVER"


def _load(path: Path) -> Any:
    return json.loads(path.read_text())


def _machine(folder: Path) -> tuple[str, str]:
    """(GPU name, GPU UUID) from device_speed.sh's machine.log (nvidia-smi's name, uuid, ... line)."""
    name, uuid = (folder / "machine.log").read_text().splitlines()[0].split(",")[:2]
    return name.strip(), uuid.strip()


def _commit(folder: Path) -> str:
    """The tree a device call ran: machine.log's `commit X, date` line (from COMMIT=...), or a
    `tree X: why` line added after the call where that label was wrong (the why says how it is known)."""
    lines = (folder / "machine.log").read_text().splitlines()
    fixed = [line for line in lines if line.startswith("tree ")]
    if fixed:
        return fixed[-1].removeprefix("tree ").split(":")[0].strip()
    return lines[1].split(",")[0].removeprefix("commit ").strip()


def _gpu_uuid(folder: Path) -> str:
    return _machine(folder)[1]


def _ladder_wall(path: Path) -> float:
    """A ladder process's wall: bench_ladder's JSON (`wall_s`) or device_speed.sh's summary's record."""
    d = _load(path)
    return d["ladder"]["wall_s"] if "ladder" in d else d["wall_s"]


def ladder_line(folder: Path, script: str, earlier: list[tuple[list[Path], str]]) -> str:
    """`folder`'s three processes and compare, then each earlier record's ladder with what differed,
    so no record stands alone."""
    s = _load(folder / "speed.json")
    gpu = _machine(folder)[0]
    b, c, a = s["ladder"], s["ladder_second"], s["ladder_cold_caches"]
    t = b["timings"]
    cmp_ = s["compare"]["consumer_kernel_median_abs_diff_pct"]
    rel = folder.relative_to(ROOT)
    gpus = [gpu] + [_machine(files[0].parent)[0] for files, _ in earlier]
    h200 = "" if any("H200" in g for g in gpus) else ". None of these ran on an H200"
    said = "; ".join(f"{' and '.join(f'{_ladder_wall(x):.1f} s' for x in files)} {why} "
                     f"(`{'`, `'.join(str(x.relative_to(ROOT)) for x in files)}`)" for files, why in earlier)
    return (f"- the default ladder from a cold process (`{script}`, {gpu}, tree {_commit(folder)}, "
            f"`{rel}/`): **{b['wall_s']:.1f} s** ({verdict(b['wall_s'], b['target_s'])} the target of "
            f"{b['target_s']:.0f} s), a second process {c['wall_s']:.1f} s, and {a['wall_s']:.1f} s with "
            f"the workload and kernel caches empty. Of the first: process start {b['startup_s']:.1f} s "
            f"(`import torch` {t['torch_import_s']:.1f} s of it), the run {b['run_s']:.1f} s (timed repeats "
            f"{t['repeats_s']:.1f} s, bandwidths {t['bandwidth_s']:.1f} s, uploads {t['upload_s']:.1f} s, "
            f"warm-ups {t['warmup_s']:.1f} s, summaries {t['summaries_s']:.1f} s), after it {b['after_s']:.1f} s. "
            f"Two-process compare: the consumer's kernel medians differ by **{cmp_:.2f} %** (median over "
            f"{s['compare']['rows'][0]['cells']} cells; {verdict(cmp_, TARGETS['compare'])} the target of "
            f"{TARGETS['compare']:.0f} %). Earlier records: {said}{h200};\n")


def exit_line(folder: Path, earlier: Path) -> str:
    """The exit probe of `folder`, and the first `import torch` of `earlier` (an earlier call on the
    same GPU, checked): the one that wrote torch's bytecode there, which `folder`'s processes read."""
    e, first = _load(folder / "exit_probe.json"), _load(earlier / "exit_probe.json")
    if _gpu_uuid(folder) != _gpu_uuid(earlier):
        raise ValueError(f"{folder} and {earlier} were made on different GPUs: no bytecode of one reached the other")

    def span(xs: list[float]) -> str:
        return f"{min(xs):.2f}–{max(xs):.2f} s"
    return (f"- a GPU process's two ends (`python tools/probes/process_ends.py`, on the {_machine(folder)[0]} of "
            f"`{folder.relative_to(ROOT)}/`, 3 processes each): "
            f"{span(e['exit_with_teardown_s'])} from its last line to its end with the interpreter's "
            f"teardown, {span(e['exit_without_teardown_s'])} without it; `import torch` in a fresh process "
            f"{span(e['import_torch_no_cache_s'])}. The first `import torch` allowed to write its bytecode "
            f"on that machine, in an earlier call, took {first['import_torch_no_cache_s'][0]:.2f} s and the "
            f"next two {span(first['import_torch_no_cache_s'][1:])} (`{earlier.relative_to(ROOT)}/`): the "
            f"ladder of `{folder.relative_to(ROOT)}/` read bytecode that probe had written, as on an ordinary machine "
            f"(docs/facts.md#process-exit);\n")


def profile_line(latest: Path, script: str, earlier: list[tuple[Path, str]]) -> str:
    """The newest profile-job record (`latest`/profile.json, its GPU from machine.log), then each
    earlier one with what differed, so no record stands alone."""
    p = _load(latest / "profile.json")
    sweep = p["passes"]["sweep.ncu-rep"]
    said = "; ".join(f"{_load(f / 'profile.json')['total_s']:.1f} s {why} (`{f.relative_to(ROOT)}/profile.json`)"
                     for f, why in earlier)
    return (f"- `l2attr profile --metrics l2` then `--timeline` (`benchmarks/bench_profile.py` in "
            f"`bash {script}`, {_machine(latest)[0]}, tree {_commit(latest)}, whose ncu command "
            f"lines are today's defaults; `{latest.relative_to(ROOT)}/profile.json`): {p['profile_s']:.1f} s + "
            f"{p['timeline_s']:.1f} s = **{p['total_s']:.1f} s** ({verdict(p['total_s'], p['target_s'])} "
            f"the target of {p['target_s']:.0f} s), validity control {p['control']}, {sweep['min']} passes "
            f"over {sweep['kernels']} kernels in the sweep's report and {p['calls_per_cell']} calls per cell; "
            f"earlier records: {said};\n")


def spread_line(folders: list[Path], which: str = "today's ncu command lines") -> str:
    """The profile job over every machine that ran the same ncu command lines (`which`): how many
    records met the target, the range, and the most one machine run twice moved, so a record within
    the target on one fast machine is never the whole story."""
    records = [(_load(f / "profile.json"), _gpu_uuid(f)) for f in folders]
    totals = [p["total_s"] for p, _ in records]
    target = records[0][0]["target_s"]
    by: dict[str, list[float]] = {}
    for p, uuid in records:
        by.setdefault(uuid, []).append(p["total_s"])
    twice = [max(v) - min(v) for v in by.values() if len(v) > 1]
    met = sum(verdict(t, target) == "within" for t in totals)
    again = (f"a machine run twice differed by at most {max(twice):.1f} s" if twice
             else "no machine ran it twice")
    return (f"- the profile job across machines: {met} of {len(totals)} records of {which} "
            f"within the target of {target:.0f} s, on {len(by)} GPUs, {min(totals):.1f}–{max(totals):.1f} s; "
            f"{again}. Its seconds are the host's: ncu's work per profiled kernel and each pass's process "
            f"start;\n")


def ab_line(folder: Path, timeline: Path) -> str:
    """The two changes of the profile job's command lines, each measured on one machine: the check
    memo (tools/device_checks_ab.sh: old and new trees alternating) and the one-replay timeline."""
    def total(arm: str) -> str:
        return ", ".join(f"{_load(f)['total_s']:.1f}" for f in sorted(folder.glob(f"{arm}_*.json")))

    import tarfile

    walls: dict[str, list[float]] = {}
    with tarfile.open(timeline / "runs.tar.gz") as tar:
        for m in sorted(tar.getmembers(), key=lambda m: m.name):
            name = m.name.removeprefix("./")
            if name.endswith("/manifest.json") and name.count("/") == 1:     # <time>-<arm><n>/manifest.json
                arm = name.split("/")[0].split("-", 1)[1].rstrip("0123456789")
                walls.setdefault(arm, []).append(json.load(tar.extractfile(m))["wall_s"]["timeline"])
    return (f"- what each change of those command lines saves, on one machine each: the later replay "
            f"passes taking the first pass's check verdicts (`tools/device_checks_ab.sh`, the trees before and "
            f"after alternating, {_machine(folder)[0]} {_gpu_uuid(folder)[:12]}…, `{folder.relative_to(ROOT)}/`): "
            f"the job took {total('new')} s against {total('old')} s; the timeline without ncu's range "
            f"duration ({_machine(timeline)[0]} {_gpu_uuid(timeline)[:12]}…, "
            f"`{timeline.relative_to(ROOT)}/`): its ncu job {', '.join(f'{w:.1f}' for w in walls['nodur'])} s "
            f"against {', '.join(f'{w:.1f}' for w in walls['dur'])} s (docs/facts.md#pm-sampling);\n")


def family_line(default: Path, one: Path) -> str:
    """The job with the headline family alone beside the default on the same GPU (checked): what
    profiling fewer cells buys, measured, not projected."""
    if _gpu_uuid(default) != _gpu_uuid(one):
        raise ValueError(f"{default} and {one} ran on different GPUs: no comparison")
    d, o = _load(default / "profile.json"), _load(one / "profile.json")
    kd, ko = d["passes"]["sweep.ncu-rep"]["kernels"], o["passes"]["sweep.ncu-rep"]["kernels"]
    return (f"- with the headline family alone (`bench_profile.py --family artifact`, {ko} profiled kernels "
            f"against {kd}, the control included), on the {_machine(one)[0]} of `{default.relative_to(ROOT)}/` "
            f"right after its default run: **{o['total_s']:.1f} s** ({verdict(o['total_s'], o['target_s'])} the "
            f"target of {o['target_s']:.0f} s) against {d['total_s']:.1f} s for the default "
            f"({verdict(d['total_s'], d['target_s'])}), validity control {o['control']} "
            f"(`{one.relative_to(ROOT)}/profile.json`);\n")


def probe_passes(folder: Path) -> dict[str, int]:
    """Passes per metric list in tools/device_pass_probe.sh's summary (`NAME: exit .., passes N, ..`)."""
    return {line.split(":", 1)[0]: int(line.split(", passes ", 1)[1].split(",", 1)[0])
            for line in (folder / "summary.log").read_text().splitlines() if ": exit " in line and ", passes " in line}


def passes_line(folder: Path) -> str:
    """What each group of the l2 set costs ncu in passes (tools/device_pass_probe.sh's summary)."""
    passes = probe_passes(folder)
    alone = ", ".join(f"{k.removeprefix('only_')} {v}" for k, v in passes.items() if k.startswith("only_"))
    less = sorted({v for k, v in passes.items() if k.startswith("no_")})
    return (f"- ncu's passes for the `l2` set (`bash tools/device_pass_probe.sh`, {_machine(folder)[0]}, "
            f"`{folder.relative_to(ROOT)}/summary.log`): the whole set {passes['l2']}; each group alone: {alone}; "
            f"the set less any one group: {', '.join(map(str, less))}. The lookup counters hold the passes "
            f"(docs/facts.md#ncu-replay);\n")


def grid_line() -> str:
    calls = [json.loads(x) for x in GRID.read_text().splitlines() if x.strip()]
    (call,) = calls                   # the grid measured in one process: its wall is the grid's
    steps = sum(len(m["steps"]) for m in call["models"].values())
    ncu = sum(m["ncu_s"] for m in call["models"].values())
    measured = sum(m["steps_s"] for m in call["models"].values())
    return (f"- the LLM grid (`FRESH=1 bash tools/device_grid.sh`: {steps} steps, each with its "
            f"write-back-matched arm and Nsight Compute reading, one process, {call['gpu']}): "
            f"**{call['wall_s']:.1f} s** ({verdict(call['wall_s'], TARGETS['grid'])} the target of "
            f"{TARGETS['grid']:.0f} s; ncu readings {ncu:.1f} s, steps {measured:.1f} s; "
            f"`{GRID.relative_to(ROOT)}`);\n")


def steps_line() -> str:
    r = _load(SCALE)
    runs = sorted(r["runs"], key=lambda x: x["kernels"])
    said = ", ".join(f"{x['kernels']:,} kernels {x['wall_s']:.1f} s" for x in runs)
    last = runs[-1]
    return (f"- step attribution at scale (`python benchmarks/bench_steps.py --kernels 250 500 1000`, "
            f"{last['gpu']}): {said} of wall time; the largest {verdict(last['wall_s'], TARGETS['steps'])} "
            f"the target of {TARGETS['steps']:.0f} s (`{SCALE.relative_to(ROOT)}`).\n")


def block() -> str:
    final = SPEED / "final"
    pm1, trials = SPEED / "pm1", SPEED / "trials"
    h200, h100 = SPEED / "h200", SPEED / "h100"
    today = [SPEED / "h100_a2a1"]
    same = [SPEED / n for n in ("h100", "h100_b92b_1", "h100_b92b_2", "h100_32f1", "h100_0acb_1", "h100_0acb_2",
                                "h100_7be8")]
    earlier = [(f, f"on an {_machine(f)[0]} ({_gpu_uuid(f)[:12]}…), tree {_commit(f)}, the same command lines "
                "(`bash tools/device_profile_record.sh`)") for f in today]
    earlier += [(f, f"on an {_machine(f)[0]} ({_gpu_uuid(f)[:12]}…), tree {_commit(f)}, before the check memo "
                 "and the one-replay timeline") for f in same]
    earlier += [(h200, f"on an {_machine(h200)[0]}, tree {_commit(h200)}, before them too: the one "
                "record of this job on an H200"),
               (pm1, f"on an {_machine(pm1)[0]}, tree {_commit(pm1)}, before them too "
                "(`bash tools/device_profile_record.sh`)"),
               (SPEED / "profile_cost", "with ncu deciding the timeline's sampling replays and the teardown at "
                "each child's end, on another H100"),
               (SPEED / "first", "before the device scripts let Python write bytecode, with ncu's stock "
                "PM-sampling section, another H100"),
               (SPEED / "bytecode", "on an H100 whose processes started slower (a bytecode folder of their own, "
                "since removed)")]
    ka, kb = (_load(h100 / f"ladder_{x}.json")["kernel_cache"] for x in "ab")
    ladders = [([h100 / "speed.json"], f"on an {_machine(h100)[0]}, tree {_commit(h100)}, whose first process compiled "
                f"{ka['misses']} of its {ka['modules']} modules into l2attr's own folder and the next found "
                f"{kb['hits']} there"),
               ([trials / "speed.json"], f"on an {_machine(trials)[0]}, tree {_commit(trials)}"),
               ([final / "speed.json"], "on another H100"),
               (sorted((SPEED / "bytecode").glob("noprefix_*.json")), "on that H100 in the call before, the same code: "
                "the host's share moves between calls")]
    return (ladder_line(h200, "bash tools/device_closing.sh`, whose first step is `tools/device_speed.sh", ladders) + exit_line(final, SPEED / "bytecode")
            + profile_line(PROFILE_RECORD, PROFILE_SCRIPT, earlier)
            + spread_line([PROFILE_RECORD, *today]) + ab_line(SPEED / "checks_ab", SPEED / "timeline_nodur")
            + spread_line([*same, h200, pm1], "the command lines before those two changes")
            + family_line(SPEED / "h100_7be8", SPEED / "h100_7be8_artifact") + passes_line(SPEED / "pass_probe")
            + grid_line() + steps_line())


def main(argv: list[str]) -> int:
    body = block()
    if "--write" in argv:        # the page that holds the block (tools/docgen/doc_pages.py)
        from doc_pages import write_block

        write_block(BEGIN, END, body)
    else:
        print(body, end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
