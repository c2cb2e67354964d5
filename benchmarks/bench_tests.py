"""Benchmark: the README's test command on this machine (target <= 45 s on 2 quiet cores).

    python benchmarks/bench_tests.py [--repeat N] [--load N] [--record examples/logs/bench_tests.json [--append]]
    python benchmarks/bench_tests.py --readme [--write]     # the README's block from the record

Runs the pytest half of the README's second set-up command (what follows `pip install -e
'.[dev]' &&`, read from README.md, so the figure is always of the command the README gives) N
times, each from a cold process, and prints per run the wall time, the CPU seconds of pytest and
its workers, the machine's cores, its load average just before, and a host probe (a fixed
single-core loop's seconds, host_probe_s): other work on the machine lengthens the wall time, not
the CPU time; a slower host lengthens both, and the probe with them. --load N starts N busy
processes (`while 1: pass`) that compete for the cores for the whole run, so a test that holds only
on a quiet machine fails here as it would on a shared CI runner. --record keeps the runs as JSON (--append adds them to the
record's runs, so quiet and loaded runs sit in one file, each with its `load`); --readme prints the
README's benchmark line made from that record (--write puts it between `<!-- bench-tests:begin
-->` and `<!-- bench-tests:end -->`); tests/test_test_command.py fails when they disagree.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import resource
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
RECORD = ROOT / "examples" / "logs" / "bench_tests.json"
TARGET_S = 45.0       # issue 39 (issue 27's was 60 s)
INSTALL = "pip install -e '.[dev]' && "
MARKER = "# tests, on any machine"
BENCHMARKING = "L2ATTR_BENCH_TESTS_RUNNING"
BEGIN, END = "<!-- bench-tests:begin -->\n", "<!-- bench-tests:end -->"


def readme_test_line(text: str) -> str:
    """The README's second set-up command: the line after its `# tests, on any machine` comment."""
    lines = text.splitlines()
    for i, line in enumerate(lines[:-1]):
        if line.startswith(MARKER):
            return lines[i + 1].strip()
    raise SystemExit(f"bench_tests: error: no '{MARKER}' line in {README}")


def test_command(text: str) -> str:
    """The pytest part of that line (the install is not timed)."""
    line = readme_test_line(text)
    if not line.startswith(INSTALL):
        raise SystemExit(f"bench_tests: error: the README's test line does not start with {INSTALL!r}: {line}")
    return line[len(INSTALL):]


def _summary(output: str) -> str:
    """pytest's last line, e.g. `1290 passed, 111 skipped in 98.1s`, without the time."""
    lines = [line.strip(" =") for line in output.splitlines()
             if re.search(r"\d+ (passed|failed|errors?|deselected)\b", line)]
    return re.sub(r" in [\d.]+s( \([\d:]+\))?$", "", lines[-1]) if lines else "no pytest summary line"


BUSY = "while 1: pass"


def start_load(n: int) -> list[subprocess.Popen[bytes]]:
    """N busy interpreters competing with the suite for the cores (ended by the caller)."""
    return [subprocess.Popen([sys.executable, "-c", BUSY]) for _ in range(n)]


def stop_load(busy: list[subprocess.Popen[bytes]]) -> None:
    for proc in busy:
        proc.kill()
    for proc in busy:
        proc.wait()


def run_once(command: str, load: int = 0) -> dict[str, Any]:
    busy = start_load(load)
    try:
        if busy:
            time.sleep(1.0)   # the busy loops running before the suite starts
        return _timed(command) | {"load": load, "tree": tree()}
    finally:
        stop_load(busy)


PROBE_ADDS = 20_000_000


def host_probe_s() -> float:
    """Seconds of a fixed single-core loop (PROBE_ADDS additions in this interpreter), just before
    a run: the host's own speed at that moment. On a shared VM it moves by tens of per cent within
    an hour, and the suite's CPU seconds with it; the record keeps it beside each run's wall."""
    t0 = time.perf_counter()
    total = 0
    for i in range(PROBE_ADDS):
        total += i
    return round(time.perf_counter() - t0, 2)


def _timed(command: str) -> dict[str, Any]:
    argv = shlex.split(command)
    probe = host_probe_s()
    if argv[:1] == ["python"]:
        argv[0] = sys.executable
    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    # BENCHMARKING tells tests/test_test_command.py that its record is the one being made
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, env={**os.environ, BENCHMARKING: "1"})
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode != 0:      # say what failed: the tail of pytest's own output
        print("\n".join((done.stdout + done.stderr).splitlines()[-40:]), file=sys.stderr)
    return {"wall_s": round(wall, 1), "cpu_s": round(cpu, 1), "load_before": round(load, 2),
            "host_probe_s": probe,
            "exit": done.returncode, "summary": _summary(done.stdout + done.stderr),
            "failed": [line for line in (done.stdout + done.stderr).splitlines() if line.startswith(("FAILED ", "ERROR "))]}


def _span(values: list[float], fmt: str) -> str:
    lo, hi = min(values), max(values)
    return format(lo, fmt) if format(lo, fmt) == format(hi, fmt) else f"{format(lo, fmt)}–{format(hi, fmt)}"


def _runs_text(runs: list[dict[str, Any]]) -> str:
    walls = ", ".join(f"{r['wall_s']:.1f}" for r in runs)
    failed = sum(1 for r in runs if r["exit"] != 0)
    probes = [r["host_probe_s"] for r in runs if "host_probe_s" in r]
    probe = f"; host probe {_span(probes, '.2f')} s" if len(probes) == len(runs) else ""
    return (f"**{walls} s** wall (CPU {_span([r['cpu_s'] for r in runs], '.0f')} s; load average "
            f"{_span([r['load_before'] for r in runs], '.1f')} before each run{probe}), "
            f"{failed} failed run{'s' if failed != 1 else ''} of {len(runs)}, the last: {runs[-1]['summary']}")


def readme_block(record: dict[str, Any]) -> str:
    """The README's line: the quiet runs, then each --load level's runs (a record without `load`
    fields is all quiet)."""
    runs = record["runs"]
    by_load: dict[int, list[dict[str, Any]]] = {}
    for r in runs:
        by_load.setdefault(int(r.get("load", 0)), []).append(r)
    parts = []
    for load, group in sorted(by_load.items()):
        how = (f"`--repeat {len(group)}`, no added load" if load == 0 else
               f"`--repeat {len(group)} --load {load}`, {load} busy processes competing")
        parts.append(f"{how}: {_runs_text(group)}")
    trees = list(dict.fromkeys(str(r["tree"]) for r in runs if r.get("tree")))
    on = f", tree {' and '.join(f'`{t}`' for t in trees)}" if trees else ""
    return (f"- the CPU test suite (`python benchmarks/bench_tests.py`: the README's test command "
            f"`{record['command']}`, {record['cores']} cores, {record['date']}{on}; target ≤ {TARGET_S:.0f} s "
            f"quiet): {'; '.join(parts)} (`examples/logs/bench_tests.json`).\n")


def replace_block(text: str, body: str) -> str:
    a = text.index(BEGIN) + len(BEGIN)
    return text[:a] + body + text[text.index(END):]


# what the suite's result depends on: the sources, the tests and their set-up (not this record)
SUITE_FILES = ("l2attr", "kernels", "metrics", "reports", "tests", "pyproject.toml")


def tree() -> str:
    """The commit the runs were made on, `-dirty` when the suite's files differ from it
    (l2attr.source.checkout_sha over SUITE_FILES: the record this command writes is not among them)."""
    from l2attr.source import checkout_sha

    sha, why = checkout_sha(ROOT, SUITE_FILES)
    return sha or f"unknown ({why})"


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="bench_tests", description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=1, help="runs of the command (default 1)")
    ap.add_argument("--load", type=int, default=0, help="busy processes competing for the cores (default 0)")
    ap.add_argument("--record", type=Path, help="write the runs as JSON here")
    ap.add_argument("--append", action="store_true", help="with --record: add the runs to the file's runs")
    ap.add_argument("--readme", action="store_true", help="print the README's block from --record's file")
    ap.add_argument("--write", action="store_true", help="with --readme: replace the block in README.md")
    args = ap.parse_args(argv)
    text = README.read_text(encoding="utf-8")
    if args.readme:
        body = readme_block(json.loads((args.record or RECORD).read_text()))
        if args.write:        # the block lives on a docs page (tools/docgen/doc_pages.py), the command in the README
            sys.path.insert(0, str(ROOT / "tools" / "docgen"))
            from doc_pages import page_with

            page = page_with(BEGIN)
            page.write_text(replace_block(page.read_text(encoding="utf-8"), body), encoding="utf-8")
        print(body, end="")
        return 0
    if args.repeat < 1:
        ap.error("--repeat must be at least 1")
    if args.load < 0:
        ap.error("--load must be 0 or more")
    command = test_command(text)
    print(f"bench_tests: {command} ({os.cpu_count()} cores), {args.repeat} run(s), "
          f"{args.load} busy process(es) competing")
    runs = []
    for i in range(args.repeat):
        r = run_once(command, args.load)
        runs.append(r)
        verdict = "within" if r["wall_s"] <= TARGET_S else "over"
        print(f"bench_tests: run {i + 1}: wall {r['wall_s']:.1f} s ({verdict} the {TARGET_S:.0f} s target), "
              f"CPU {r['cpu_s']:.1f} s, load average {r['load_before']:.2f} before, "
              f"host probe {r['host_probe_s']:.2f} s; exit {r['exit']}; {r['summary']}",
              flush=True)
    if args.record:
        earlier = json.loads(args.record.read_text())["runs"] if args.append and args.record.exists() else []
        record = {"command": command, "cores": os.cpu_count(), "python": sys.version.split()[0],
                  "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d"), "runs": earlier + runs}
        tmp = args.record.with_name(f".{args.record.name}.tmp")
        tmp.write_text(json.dumps(record, indent=1) + "\n")
        tmp.replace(args.record)
        print(f"bench_tests: wrote {args.record}")
    return 0 if all(r["exit"] == 0 for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
