"""Provenance for people: each run's manifest as one table of figures with units, rounded.

Every run gets the same groups (run, code, software, GPU, measured bandwidth, measure options,
Nsight Compute, run time) with the facts its manifest records; a few facts every reader needs
(command line, git sha, source digest, GPU, ...) show "unknown" when missing instead of being left
out. The compiled variants become a table, and the manifest itself stays on the page, collapsed.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from typing import Any, Callable

from l2attr.analysis.load import Run
from l2attr.integrity.manifest import undeclared
from l2attr.manifest_model import recorded
from l2attr.report import fmt
from l2attr.report.columns import Table, key, number, plain, table
from l2attr.vocab import Role

ABSENT = object()


@dataclass(frozen=True)
class Fact:
    label: str
    value: str | None           # None: not recorded in the manifest
    mono: bool = False
    title: str = ""             # the exact figure behind a rounded one, or the list behind a count


@dataclass(frozen=True)
class Spec:
    label: str
    places: tuple[str, ...]                      # dotted manifest paths, the first recorded wins
    show: Callable[[Any], Any] = str             # value -> text, or (text, tooltip)
    always: bool = False                         # shown as "unknown" when not recorded
    mono: bool = False
    null: str | None = None                      # what a recorded null means, where it means something
    dir_stamp: bool = False                      # not recorded: the time in the run dir's name stands in
    judged: str | None = None                    # not a manifest fact: this judgement of the run (analysis)


# -- formatting ---------------------------------------------------------------------------------

def plain_text(v: Any) -> str:
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):
        return f"{v:,.4g}"
    if isinstance(v, (list, tuple)):
        return ", ".join(plain_text(x) for x in v)
    if isinstance(v, dict):
        return ", ".join(f"{k}: {plain_text(x)}" for k, x in v.items())
    return str(v)


def unit(scale: float, name: str, digits: int = 1) -> Callable[[Any], tuple[str, str]]:
    """value / scale with `digits` decimals and the unit; the recorded figure as the tooltip."""
    def show(v: Any) -> tuple[str, str]:
        return f"{float(v) / scale:,.{digits}f} {name}", f"recorded: {plain_text(v)}"
    return show


MIB, GIB, MHZ, WATTS = unit(2 ** 20, "MiB"), unit(2 ** 30, "GiB"), unit(1, "MHz", 0), unit(1, "W", 0)
SECONDS, MICROSECONDS = unit(1, "s"), unit(1, "µs")


def gbps(v: Any) -> tuple[str, str]:
    return fmt.gbps(v), f"recorded: {v} GB/s"


def when(v: Any) -> str:
    """'2026-11-30T20:17:58+00:00' -> '2026-11-30 20:17:58' (UTC)."""
    try:
        return dt.datetime.fromisoformat(str(v).replace("Z", "+00:00")).strftime("%Y-%m-%d %H:%M:%S")
    except ValueError:
        return str(v)


def cuda_version(v: Any) -> str:
    """13020 (cudaDriverGetVersion's 1000 * major + 10 * minor) -> '13.2'."""
    v = int(v)
    return f"{v // 1000}.{v % 1000 // 10}"


def count_of(what: str) -> Callable[[Any], tuple[str, str]]:
    def show(v: Any) -> tuple[str, str]:
        return f"{len(v)} {what}", plain_text(v)
    return show


def replay_passes(v: Any) -> str:
    """{'sweep.ncu-rep': {'kernels': 672, 'min': 5, 'max': 5}} -> 'sweep.ncu-rep: 672 kernels, 5 passes each'."""
    if not isinstance(v, dict):
        return f"{plain_text(v)} passes per kernel"
    parts = []
    for report, p in v.items():
        if not isinstance(p, dict):
            parts.append(f"{report}: {plain_text(p)}")
            continue
        lo, hi = p.get("min"), p.get("max")
        passes = f"{lo} passes each" if lo == hi else f"{lo}–{hi} passes"
        parts.append(f"{report}: {plain_text(p.get('kernels', '?'))} kernels, {passes}")
    return "; ".join(parts)


def validity(v: Any) -> str | tuple[str, str]:
    if isinstance(v, dict):
        rule = v.get("rule")
        return str(v.get("verdict", "unknown")), (f"rule: {rule}" if rule else "")
    return plain_text(v)


def adaptive_text(v: Any) -> str:
    """An adaptive run's stopping rule (manifest `adaptive`, measure/adaptive.py)."""
    if not isinstance(v, dict):
        return plain_text(v)
    return (f"each cell until its 95 % interval half-width ≤ {float(v.get('target_rel', float('nan'))):.1%} of its "
            f"median (kernel timer), {v.get('min_repeats', '?')}–{v.get('max_repeats', '?')} repeats, at most "
            f"{v.get('max_seconds', '?')} s of repeats per cell (cells.csv `stopped`)")


def launch_shape(v: Any) -> str:
    """The ladder's launch shapes: consumer grid x block, and the pin's per granularity."""
    if not isinstance(v, dict):
        return plain_text(v)
    block = lambda b: " × ".join(map(str, b)) if isinstance(b, list) else str(b)  # noqa: E731
    out = [f"consumer grid {v.get('grid', '?')}, block {block(v.get('block', '?'))}"]
    pins = [f"{block(b)} ({k.removeprefix('pin_block_')} pin)" for k, b in v.items() if k.startswith("pin_block_")]
    if pins or "pin_grid" in v:
        out.append(f"pin grid {v.get('pin_grid', '?')}, block " + ", ".join(pins))
    return "; ".join(out)


def seconds_each(v: Any) -> str:
    if isinstance(v, dict):
        return ", ".join(f"{k.removesuffix('_s')} {float(x):,.1f} s" for k, x in v.items())
    return SECONDS(v)[0]


def ranges(v: Any) -> str:
    if not isinstance(v, list):
        return plain_text(v)
    from l2attr.integrity.manifest_fields import typed_ranges

    out = []
    for r in typed_ranges(v):       # a field that breaks its rule is not printed (--allow-partial said it)
        span = (f"{float(r['duration_us']):,.0f} µs (ncu's range duration)" if r.get("duration_us") is not None
                else f"{float(r['span_us']):,.0f} µs (first kernel start to last kernel end)"
                if r.get("span_us") is not None else "no duration recorded")
        every = (f"every {float(r['interval_ns']) / 1e3:.1f} µs" if r.get("interval_ns") is not None
                 else "at an interval not recorded")
        out.append(f"{r.get('range', '?')}: {span}, PM sampling {every}")
    return "; ".join(out)


# -- the facts ----------------------------------------------------------------------------------

GROUPS: tuple[tuple[str, tuple[Spec, ...]], ...] = (
    ("Run", (
        Spec("kind", ("kind",), always=True), Spec("status", ("status",)),
        Spec("created (UTC)", ("created_utc",), when, always=True, dir_stamp=True),
        Spec("command line", ("command",), always=True, mono=True),
    )),
    ("Code", (
        Spec("l2attr", ("versions.l2attr",), always=True),
        Spec("git sha", ("versions.git_sha",), always=True, mono=True),
        Spec("source digest", ("versions.source_digest",), always=True, mono=True),
    )),
    ("Software", tuple(Spec(name, (f"versions.{name}",)) for name in
                       ("python", "torch", "cupy", "numpy", "pandas", "nvtx", "ncu_report", "ncu"))),
    ("GPU", (
        Spec("GPU", ("gpu.name",), always=True), Spec("chip", ("gpu.chip", "chip")),
        Spec("compute capability", ("gpu.compute_capability",)), Spec("SMs", ("gpu.sm_count",), plain_text),
        Spec("L2 size", ("gpu.l2_bytes",), MIB),
        Spec("persisting L2 max", ("gpu.persisting_l2_max_bytes",), MIB),
        Spec("access-policy window max", ("gpu.access_policy_max_window_bytes",), MIB),
        Spec("memory", ("gpu.memory_bytes",), GIB), Spec("memory bus", ("gpu.memory_bus_bits",), unit(1, "bits", 0)),
        Spec("driver", ("gpu.driver", "gpu.driver_version"), always=True),
        Spec("CUDA (driver API)", ("gpu.driver_cuda",), cuda_version),
        Spec("CUDA (runtime)", ("gpu.runtime_cuda",), cuda_version),
        Spec("SM clock", ("gpu.sm_clock_mhz",), MHZ), Spec("SM clock max", ("gpu.max_sm_clock_mhz",), MHZ),
        Spec("memory clock", ("gpu.mem_clock_mhz",), MHZ),
        Spec("memory clock max", ("gpu.max_mem_clock_mhz",), MHZ),
        Spec("power limit", ("gpu.power_limit_w",), WATTS),
    )),
    ("Measured bandwidth", (
        Spec("HBM device-to-device copy", ("hbm_copy_GBps",), gbps), Spec("HBM read", ("hbm_read_GBps",), gbps),
        Spec("L2 read", ("l2_read_GBps",), gbps),
    )),
    ("Measure options", (
        Spec("kernel families", ("measure.families",), plain_text),
        Spec("rungs", ("measure.rungs", "rungs"), plain_text),
        Spec("profiles", ("measure.profiles", "profiles"), plain_text),
        Spec("L2 state", ("measure.l2_state",), plain_text), Spec("repeats", ("measure.repeats",), plain_text),
        Spec("adaptive repeats", ("adaptive",), adaptive_text, null="no: a fixed-repeat run"),
        Spec("maxrregcount (OptMT)", ("measure.maxrregcount",), plain_text),
        Spec("pin granularity", ("measure.pin_granularity",), null="each family's own"),
        Spec("RPF depth", ("measure.rpf_depth",), plain_text),
        Spec("spin head start", ("measure.spin_us",), MICROSECONDS),
        Spec("host-timed repeats", ("measure.host_repeat",), plain_text),
        Spec("bandwidth measured", ("measure.bandwidth",), plain_text),
        Spec("trace", ("measure.trace",), null="generated per profile"),
        Spec("hot rows", ("measure.hot",), null="top-k of the trace"),
        Spec("drop out-of-range ids", ("measure.drop_out_of_range",), plain_text),
        Spec("launch shape", ("measure.shape",), launch_shape),
        Spec("NVTX ranges (last batches)", ("measure.nvtx_last",), plain_text),
        Spec("state at each repeat's start", ("repeat_start_state",)), Spec("telemetry", ("telemetry",)),
    )),
    ("Nsight Compute", (
        Spec("ncu version", ("ncu.version",)), Spec("ncu path", ("ncu.path",), mono=True),
        Spec("replay mode", ("ncu.replay_mode", "replay_mode")),
        Spec("application replay", ("app_replay_match",), lambda v: f"match {v}"),
        Spec("application replay mode", ("app_replay_mode",)),
        Spec("cache control", ("ncu.cache_control", "cache_control")),
        Spec("clock control", ("ncu.clock_control", "clock_control")),
        Spec("metric set", ("ncu.metric_set", "metric_set")),
        Spec("metrics", ("ncu.metrics", "metrics"), count_of("metrics")),
        Spec("derived metrics", ("derived_metrics",), count_of("derived")),
        Spec("NVTX filter", ("nvtx_include",), plain_text, mono=True),
        Spec("kernels and replay passes", ("ncu.replay_passes", "replayer_passes"), replay_passes),
        Spec("calls profiled per cell", ("calls_per_cell",), plain_text),
        Spec("child workload overrides", ("child_workload_overrides",), lambda v: " ".join(
            f"{k} {x}" for k, x in v.items()) if isinstance(v, dict) else plain_text(v), mono=True),
        Spec("validity control cell", ("control",), plain_text, null="not run"),
        Spec("validity control", (), validity, judged="control"),
        Spec("method", ("method",)), Spec("family", ("family",)), Spec("rung", ("rung",)),
        Spec("profile", ("profile",)), Spec("ranges", ("ranges",), ranges), Spec("nsys", ("nsys",)),
        Spec("settings warnings", ("settings_warnings",), count_of("warnings")),
        Spec("warnings", ("warnings",), count_of("warnings")),
    )),
    ("Run time", (
        Spec("phases", ("timings",), seconds_each), Spec("process wall time", ("process_wall_s",), SECONDS),
        Spec("profiler wall time", ("wall_s",), seconds_each), Spec("profiler wall time, total", ("wall_s_total",),
                                                                     SECONDS),
    )),
)


def lookup(manifest: dict[str, Any], dotted: str) -> Any:
    """The value at a dotted path as recorded; ABSENT when a part is missing (or broke its rule)."""
    return recorded(manifest, dotted, ABSENT)


def _stamp_of(run_name: str) -> str | None:
    """Run dirs are named <UTC stamp>-<name>; the stamp stands in when the manifest has no time."""
    try:
        return dt.datetime.strptime(run_name[:16], "%Y%m%dT%H%M%SZ").strftime("%Y-%m-%d %H:%M:%S (from the dir name)")
    except ValueError:
        return None


def fact(spec: Spec, run: Run, judged: dict[str, Any] | None = None) -> Fact | None:
    """The spec's fact for this run; None where it is not recorded and need not be shown.
    `judged`: what analysis made of the run, for the specs that show a judgement."""
    value, null_seen = (judged or {}).get(spec.judged, ABSENT) if spec.judged else ABSENT, False
    for place in spec.places:
        found = lookup(run.manifest, place)
        null_seen |= found is None
        if found not in (ABSENT, None, "", [], {}):
            value = found
            break
    if value is ABSENT:
        if null_seen and spec.null:
            return Fact(spec.label, spec.null)
        if spec.dir_stamp and _stamp_of(run.name):
            return Fact(spec.label, _stamp_of(run.name))
        return Fact(spec.label, None) if spec.always else None
    shown = spec.show(value)
    text, title = shown if isinstance(shown, tuple) else (shown, "")
    return Fact(spec.label, text, spec.mono, title)


@dataclass(frozen=True)
class RunFacts:
    name: str
    kind: str
    groups: list[tuple[str, list[Fact]]]
    variants: Table | None
    raw: str                    # the manifest as recorded, indented


VARIANT_COLUMNS = (
    key("Variant (family/rung/pin)", "variant"), plain("Role", "role"), plain("Kernel", "kernel"),
    number("registers", "registers_per_thread", fmt.count), number("local bytes", "local_bytes", fmt.count),
    number("blocks / SM", "blocks_per_sm", fmt.count),
    number("occupancy", "occupancy", lambda x: f"{100 * x:.1f} %"),
    plain("launch (grid × block)", "launch"), plain("compile options", "options"),
)


def _variant_rows(run: Run) -> list[dict[str, Any]]:
    variants = recorded(run.manifest, "variants")
    rows: list[dict[str, Any]] = []
    for name, info in (variants.items() if isinstance(variants, dict) else []):
        info = info if isinstance(info, dict) else {"value": info}
        roles = [(role, info[role]) for role in (Role.CONSUMER.value, Role.PIN.value)
                 if isinstance(info.get(role), dict)]
        for role, k in roles or [("", info)]:
            block = k.get("block")
            rows.append({
                "variant": name, "role": role, "kernel": k.get("kernel"),
                "registers_per_thread": k.get("registers_per_thread"), "local_bytes": k.get("local_bytes"),
                "blocks_per_sm": k.get("blocks_per_sm"),
                "occupancy": k.get("theoretical_occupancy", k.get("occupancy")),
                "launch": (f"{k['grid']} × {' × '.join(map(str, block)) if isinstance(block, list) else block}"
                           if "grid" in k else None),
                "options": " ".join(k.get("options", [])) or None,
                "source": f"{run.name}/manifest.json[variants.{name}]",
            })
    return rows


def undeclared_line(manifest: dict[str, Any]) -> list[str]:
    """A kind's page's provenance line for the top-level fields no rule declares (kept, not read),
    and its blank line; [] where there are none (the table's group, below, for the ladder's page)."""
    odd = undeclared(manifest)
    return [f"Fields no rule declares (kept, not read): {', '.join(odd)}.", ""] if odd else []


def run_facts(run: Run, judged: dict[str, Any] | None = None) -> RunFacts:
    groups = []
    for heading, specs in GROUPS:
        facts = [f for f in (fact(s, run, judged) for s in specs) if f is not None]
        if facts:
            groups.append((heading, facts))
    odd = undeclared(run.manifest)           # kept in the manifest, read by nothing: named, never used
    if odd:
        groups.append(("Fields no rule declares", [Fact("kept, not read", ", ".join(odd), mono=True)]))
    rows = _variant_rows(run)
    return RunFacts(run.name, str(recorded(run.manifest, "kind", "unknown")), groups,
                    table(VARIANT_COLUMNS, rows) if rows else None,
                    json.dumps(run.manifest, indent=2, ensure_ascii=False))


def provenance(runs: list[Run], config: dict[str, Any],
               controls: dict[str, dict[str, Any] | None] | None = None) -> dict[str, Any]:
    """Every run's facts and the workload config; a profile run's validity control is analysis's
    judgement (`controls`, by run name: Analysis.controls), never a verdict read from its manifest."""
    controls = controls or {}
    judged = {name: {"control": "not run" if vc is None else vc} for name, vc in controls.items()}
    return {"runs": [run_facts(r, judged.get(r.name)) for r in runs],
            "config": [("Workload config", [Fact(k, plain_text(v)) for k, v in config.items()])]}
