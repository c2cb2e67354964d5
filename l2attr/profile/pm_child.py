"""The child side of a PM-sampled timeline: ncu_report only, plain JSON out (ncu_child, ncu_rows
say why: ncu_report must load before numpy, so this module imports neither numpy nor pandas).

Per range result it sends every sampled quantity's series (values and their correlation ids, the
GPU timestamps) and the kernels' own start and end; pmsampling turns them into tables.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

from l2attr.catalog.sampled import load_quantities
from l2attr.profile.ncu_child import answer
from l2attr.profile.ncu_rows import chip_of, ensure_ncu_report, innermost_range, open_report, read_rows
from l2attr.vocab import Job, Ncu

_WORKLOAD_START = re.compile(r"profiler__timestamp_workload_start_(\d+)$")


def _load(path: Path | str) -> tuple[Any, Any, Path]:
    return open_report(path)


def _actions(ctx: Any) -> list[Any]:
    return [ctx.range_by_idx(r).action_by_idx(a)
            for r in range(ctx.num_ranges()) for a in range(ctx.range_by_idx(r).num_actions())]


def _scalar(action: Any, name: str) -> float | None:
    m = action.metric_by_name(name)
    return None if m is None else float(m.as_double())


def _series(metric: Any) -> dict[str, Any]:
    ids = metric.correlation_ids()
    n = metric.num_instances()
    return {"metric": metric.name(), "unit": metric.unit(),
            "ts": [int(ids.as_uint64(i)) for i in range(n)],
            "values": [float(metric.as_double(i)) for i in range(n)]}


def _workloads(action: Any) -> list[list[int]]:
    """[start, end] GPU timestamps of the kernels in the range (pass group 0)."""
    starts = [n for n in action.metric_names() if (m := _WORKLOAD_START.match(n)) and m[1] == "0"]
    if not starts:
        return []
    s = action.metric_by_name(starts[0]).correlation_ids()
    e_metric = action.metric_by_name(starts[0].replace("_start_", "_end_"))
    if s is None or e_metric is None or e_metric.correlation_ids() is None:
        return []
    e = e_metric.correlation_ids()
    n = min(s.num_instances(), e.num_instances())
    return [[int(s.as_uint64(i)), int(e.as_uint64(i))] for i in range(n)]


def _result_kind(action: Any, range_kind: Any) -> str:
    """Whether a result covers one range or one kernel (ncu_report's workload type)."""
    return (Ncu.RANGE if action.workload_type() == range_kind else Ncu.KERNEL).value


def collect_timeline(path: Path | str) -> dict[str, Any]:
    """Child: per action, the PM series of every quantity found, plus timing facts."""
    ncu_report, ctx, path = _load(path)
    quantities = load_quantities()
    range_kind = ncu_report.IAction.WorkloadType_RANGE
    actions = []
    for action in _actions(ctx):
        chip = chip_of(action)
        present = set(action.metric_names())
        series, missing = {}, {}
        for q in quantities:
            names = q.names_for(chip)
            name = next((n for n in names if n in present), None)
            metric = action.metric_by_name(name) if name else None
            if metric is None or metric.num_instances() < 2 or not metric.has_correlation_ids():
                missing[q.key] = list(names)
                continue
            series[q.key] = _series(metric)
        duration = _scalar(action, "gpu__time_duration.sum")
        actions.append({
            "range": innermost_range(action), "chip": chip,
            "workload": _result_kind(action, range_kind),
            "interval_ns": _scalar(action, "profiler__pmsampler_interval_time"),
            "pass_groups": _scalar(action, "profiler__pmsampler_pass_groups"),
            "duration_ns": duration, "kernels": _workloads(action),
            "series": series, "missing": missing,
        })
    return {"report": path.name, "actions": actions}


def collect_range_metrics(path: Path | str) -> dict[str, Any]:
    """Child: ncu_rows' rows plus, per action, its workload type and instanced metric names."""
    data = read_rows(path)
    ncu_report, ctx, _ = _load(path)
    range_kind = ncu_report.IAction.WorkloadType_RANGE
    actions = []
    for action in _actions(ctx):
        instanced = [n for n in action.metric_names() if action.metric_by_name(n).num_instances() > 1]
        actions.append({"workload": _result_kind(action, range_kind), "instanced": instanced})
    return {"rows": data["rows"], "chip": data["chip"], "actions": actions}


def _main(argv: list[str]) -> int:
    """Child entry: `python -m l2attr.profile.pm_child timeline|range-metrics REPORT` -> JSON."""
    jobs = {Job.TIMELINE.value: collect_timeline, "range-metrics": collect_range_metrics}
    if len(argv) != 2 or argv[0] not in jobs:
        print("usage: python -m l2attr.profile.pm_child timeline|range-metrics REPORT", file=sys.stderr)
        return 2

    def job() -> dict[str, Any]:
        ensure_ncu_report()  # first, before anything can load numpy
        return jobs[argv[0]](argv[1])

    return answer(job)


if __name__ == "__main__":
    raise SystemExit(_main(sys.argv[1:]))
