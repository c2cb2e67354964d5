"""The child side of the import: an `.ncu-rep` through NVIDIA's `ncu_report` into plain rows.

Values come from `ncu_report` in base units (`as_double()`, `unit()`): ncu's CSV export rescales
and formats numbers (docs/facts.md#ncu-units). A kernel's identity comes from its innermost l2attr NVTX
push/pop range, never from kernel order, which replay and filters change.

The `ncu_report` that ships in Nsight Compute 2025.3.1's extras/python crashed (SIGSEGV in
`IMetric.unit()`) on the H200 image whenever numpy had been imported before it, and l2attr
always has numpy loaded; so this module runs as a child (`python -m l2attr.profile.ncu_rows`,
started by ncu_child.run_reader), imports ncu_report before anything else and imports no
numpy/pandas at all.
"""

from __future__ import annotations

import math
import re
import shutil
import sys
from pathlib import Path
from typing import Any, Callable, Iterable

from l2attr.catalog.sets import CHIP_BY_CC, derived_specs
from l2attr.errors import UserError
from l2attr.names import NVTX_DOMAIN, parse_range_name
from l2attr.profile.ncu_child import answer
from l2attr.profile.ncu_file import check_report_file, declared_results

# Attribute metrics that describe the device, the launch or the profiler, not the kernel's work.
NOISE_PREFIXES = ("device__", "launch__", "numa__", "nvlink__", "c2clink__", "profiler__",
                  "sm__maximum_warps", "smsp__maximum_warps")
# ... except these, which the run needs (how many passes each kernel took).
ALWAYS_KEEP = ("profiler__replayer_passes",)


def innermost_range(action: Any) -> str:
    """The innermost push/pop range of a kernel launch, preferring l2attr's own ranges.

    `nvtx_state()` lists domains; each domain's `push_pop_ranges()` runs outermost to innermost.
    A range of l2attr's own NVTX domain comes back as `l2attr@<name>`; before l2attr had a domain
    its names carried an `l2attr:` prefix in the default domain, and those are read too.
    """
    state = action.nvtx_state()
    if state is None:
        return ""
    ours: list[str] = []
    legacy: list[str] = []
    others: list[str] = []
    for domain_id in state.domains():
        domain = state.domain_by_id(domain_id)
        if domain is None:
            continue
        ranges = [str(r) for r in domain.push_pop_ranges()]
        if domain.name() == NVTX_DOMAIN:
            ours.extend(f"{NVTX_DOMAIN}@{r}" for r in ranges)
        else:
            legacy.extend(r for r in ranges if r.startswith(f"{NVTX_DOMAIN}:"))
            others.extend(ranges)
    for found in (ours, legacy, others):
        if found:
            return found[-1]
    return ""


# -- metric values -------------------------------------------------------------------------------

def _is_noise(name: str) -> bool:
    """Attributes and source-level counters (`inst_executed`: no `unit__` prefix) are not kernel metrics."""
    if name in ALWAYS_KEEP:
        return False
    return name.startswith(NOISE_PREFIXES) or "__" not in name


_ROLLUPS = (".avg", ".min", ".max")


def _drop_extra_rollups(values: dict[str, tuple[float, str]], keep: set[str]) -> None:
    """ncu adds .avg/.min/.max (over L2 slices, DRAM channels, ...) to every .sum it collects.

    They describe the spread across hardware units, not the kernel's total, and would triple the
    table; they are dropped when the .sum is there, unless asked for by name.
    """
    for name in list(values):
        for suffix in _ROLLUPS:
            if name.endswith(suffix) and name not in keep and name[: -len(suffix)] + ".sum" in values:
                del values[name]


def _numeric_value(metric: Any, string_kind: int) -> float | None:
    """A number in base units, or None for strings and metrics without a value."""
    if metric is None or metric.kind() == string_kind:
        return None
    try:
        if hasattr(metric, "has_value") and not metric.has_value():
            return None
        value = float(metric.as_double())
    except (TypeError, ValueError, RuntimeError):
        return None
    return value if math.isfinite(value) else None


# -- the reader ----------------------------------------------------------------------------------

def _extras_candidates() -> list[Path]:
    """Where Nsight Compute keeps ncu_report.py, for machines without the PyPI package."""
    out: list[Path] = []
    ncu = shutil.which("ncu")
    if ncu:
        real = Path(ncu).resolve().parent
        out += [real / "extras" / "python", real.parent / "extras" / "python"]
    for root in (Path("/opt/nvidia"), Path("/usr/local/cuda")):
        out += sorted(root.glob("nsight-compute*/extras/python"), reverse=True)
        out += sorted(root.glob("nsight-compute/*/extras/python"), reverse=True)
    return out


def ensure_ncu_report() -> Any:
    """Import ncu_report: the PyPI package, else Nsight Compute's own copy."""
    try:
        import ncu_report

        return ncu_report
    except ImportError:
        pass
    for folder in _extras_candidates():
        if (folder / "ncu_report.py").is_file():
            sys.path.insert(0, str(folder))
            try:
                import ncu_report

                return ncu_report
            except ImportError:
                sys.path.remove(str(folder))
    raise UserError("the ncu_report module is missing: `pip install ncu-report`, or put Nsight "
                    "Compute's extras/python folder on PYTHONPATH")


def _name_matcher(kernel_name: str | None) -> Callable[[str], bool]:
    if not kernel_name:
        return lambda name: True
    if kernel_name.startswith("regex:"):
        try:
            pattern = re.compile(kernel_name[len("regex:"):])
        except re.error as exc:
            raise UserError(f"--kernel-name {kernel_name!r}: not a valid regular expression ({exc})") from None
        return lambda name: bool(pattern.search(name))
    return lambda name: name == kernel_name


def chip_of(action: Any) -> str | None:
    try:
        major = action.metric_by_name("device__attribute_compute_capability_major").as_uint64()
        minor = action.metric_by_name("device__attribute_compute_capability_minor").as_uint64()
    except Exception:
        return None
    return CHIP_BY_CC.get((int(major), int(minor)))


def open_report(path: Path | str, partial: list[str] | None = None) -> tuple[Any, Any, Path]:
    """(ncu_report module, report context, checked path): the one place a report is opened, so a
    cut file, a damaged result and ncu_report's own failure read the same from every command.
    `partial`: where to note damaged results instead of refusing the report (`--allow-partial`);
    the caller then skips them (`is_damaged`)."""
    ncu_report = ensure_ncu_report()
    path = check_report_file(Path(path))
    try:
        ctx = ncu_report.load_report(str(path))
    except Exception as exc:  # ncu_report raises plain exceptions with a message
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise UserError(f"{path}: ncu_report could not read it ({first})") from None
    problem = check_results(ctx, path)
    if problem and partial is None:
        raise UserError(problem + " (profile --import --allow-partial reads the intact kernels)")
    if problem and partial is not None:
        partial.append(problem)
    return ncu_report, ctx, path


def is_damaged(action: Any) -> bool:
    """ncu_report's sign of a result whose bytes did not parse: an action with no name and no
    metrics (it neither raises nor warns; seen for every 2,000-byte overwrite inside a result)."""
    return action.name() is None or len(action.metric_names()) == 0


def check_results(ctx: Any, path: Path) -> str | None:
    """One line when a result of the report is damaged or missing, else None: every result the
    file's block headers declare (ncu_file.declared_results) must come back from ncu_report with
    its name and metrics."""
    actions = [ctx.range_by_idx(r).action_by_idx(a)
               for r in range(ctx.num_ranges()) for a in range(ctx.range_by_idx(r).num_actions())]
    damaged = [i for i, action in enumerate(actions) if is_damaged(action)]
    declared = declared_results(path)
    whole = len(actions) - len(damaged)
    if not damaged and (declared is None or whole >= declared):
        return None
    total = max(len(actions), declared or 0)
    where = f", first at launch {damaged[0]}" if damaged else ""
    return (f"{path}: {total - whole} of the {total} results (kernels) its block headers declare are "
            f"damaged or missing{where}: ncu_report reads a damaged result as an empty kernel without "
            "a word; copy the file again or re-run ncu")


def read_rows(path: Path | str, keep_all: bool = False, keep: Iterable[str] = (),
              nvtx_include: Iterable[str] = (), kernel_name: str | None = None,
              allow_partial: bool = False) -> dict[str, Any]:
    """The report as plain rows (no pandas): identity from NVTX, metric, value, unit.

    Rows carry no condition; derived hit rates are appended per kernel. `nvtx_include` selects
    kernels with ncu's own NVTX filter syntax (ncu_report's `actions_by_nvtx`, the same matcher
    `ncu --nvtx-include` uses); `kernel_name` is a function name or `regex:<pattern>`.
    """
    includes = list(nvtx_include)
    name_match = _name_matcher(kernel_name)
    partial: list[str] | None = [] if allow_partial else None
    ncu_report, ctx, path = open_report(path, partial)
    if ctx.num_ranges() == 0:
        raise UserError(f"{path}: no profiled kernels in it (empty or truncated report?)")
    string_kind = ncu_report.IMetric.ValueKind_STRING
    keep = set(keep)
    rows: list[dict[str, Any]] = []
    chip = None
    launch = 0
    for r in range(ctx.num_ranges()):
        rng = ctx.range_by_idx(r)
        wanted = set(rng.actions_by_nvtx(includes, [])) if includes else None
        for a in range(rng.num_actions()):
            action = rng.action_by_idx(a)
            if is_damaged(action):
                launch += 1
                continue
            chip = chip or chip_of(action)
            if (wanted is not None and a not in wanted) or not name_match(action.name()):
                launch += 1
                continue
            nvtx = innermost_range(action)
            ident = parse_range_name(nvtx)
            base = {"cell": ident["cell"], "role": ident["role"], "family": ident["family"],
                    "rung": ident["rung"], "pin": ident["pin"],
                    "profile": ident["profile"], "table": ident["table"], "batch": ident["batch"],
                    "kernel": action.name(), "nvtx_range": nvtx, "l2_state": ident["l2_state"],
                    "report": path.name, "launch": launch}
            values: dict[str, tuple[float, str]] = {}
            for name in action.metric_names():
                if not keep_all and name not in keep and _is_noise(name):
                    continue
                metric = action.metric_by_name(name)
                value = _numeric_value(metric, string_kind)
                if value is None:
                    continue
                values[name] = (value, metric.unit())
            if not keep_all:
                _drop_extra_rollups(values, keep)
            for name, (value, unit) in sorted(values.items()):
                rows.append({**base, "metric": name, "value": value, "unit": unit})
            for d in derived_specs(values):
                rate = d.compute(values[d.hits][0], values[d.misses][0])
                if rate is not None:
                    rows.append({**base, "metric": d.name, "value": rate, "unit": "%"})
            launch += 1
    return {"rows": rows, "chip": chip, "partial": partial or []}


def _main(argv: list[str]) -> int:
    """Child entry: `python -m l2attr.profile.ncu_rows REPORT [--keep a,b] [--keep-all]` -> JSON."""
    import argparse

    ap = argparse.ArgumentParser(prog="python -m l2attr.profile.ncu_rows")
    ap.add_argument("report")
    ap.add_argument("--keep", default="")
    ap.add_argument("--keep-all", action="store_true")
    ap.add_argument("--nvtx-include", action="append", default=[])
    ap.add_argument("--kernel-name")
    ap.add_argument("--allow-partial", action="store_true")
    a = ap.parse_args(argv)

    def job() -> dict[str, Any]:
        ensure_ncu_report()  # first, before anything can load numpy
        return read_rows(a.report, a.keep_all, [k for k in a.keep.split(",") if k], a.nvtx_include,
                         a.kernel_name, a.allow_partial)

    return answer(job)


if __name__ == "__main__":
    raise SystemExit(_main(sys.argv[1:]))
