"""Turn ncu's `==ERROR==` / `==WARNING==` lines into messages that say what to do.

ncu reports problems as prefixed lines mixed into the child's output; the raw text rarely says
what the user should change. Each known pattern maps to a cause and a fix; unknown `==ERROR==`
lines pass through unchanged so nothing is hidden.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from l2attr.names import NVTX_INCLUDE

_PREFIX_RE = re.compile(r"^\s*==(ERROR|WARNING)==\s*(.*)$")


@dataclass(frozen=True)
class NcuProblem:
    code: str        # short id: counter_permission, no_kernels, unknown_metric, ...
    severity: str    # "error" | "warning"
    message: str     # what happened, in l2attr's words
    hint: str        # what to do about it
    line: str        # the ncu line it came from

    def one_line(self) -> str:
        return f"{self.message}; {self.hint}" if self.hint else self.message


def _metric_from(text: str) -> str:
    """`Failed to find metric regex:^foo\\.(sum|...)$` -> `foo`; a plain name stays as it is."""
    m = re.search(r"Failed to find metric\s+(\S+)", text)
    if not m:
        return "?"
    name = m.group(1).rstrip(".")
    if name.startswith("regex:"):
        name = name[len("regex:"):].lstrip("^")
        name = re.split(r"\\\.|\(|\$", name)[0]
    return name


def _classify(severity: str, text: str, chip: str | None) -> NcuProblem | None:
    chip_arg = chip or "<chip>"
    line = f"=={severity}== {text}"
    sev = severity.lower()
    if "ERR_NVGPUCTRPERM" in text:
        return NcuProblem(
            "counter_permission", sev,
            "ncu may not read the GPU performance counters (ERR_NVGPUCTRPERM)",
            "run as root, or let all users profile: put `options nvidia "
            "NVreg_RestrictProfilingToAdminUsers=0` in a file under /etc/modprobe.d/ and reload the "
            "driver (or reboot); NVIDIA's page 'ERR_NVGPUCTRPERM: Permission issue with Performance "
            "Counters' (https://developer.nvidia.com/ERR_NVGPUCTRPERM) has the details per OS",
            line)
    if "No kernels were profiled" in text:
        return NcuProblem(
            "no_kernels", sev,
            "ncu profiled no kernel: the NVTX filter matched no range",
            "the child must push <role>:... ranges in the l2attr NVTX domain around its kernels "
            "(ladder --nvtx-last N with N >= 1, nvtx importable in the child) and ncu needs --nvtx "
            f"with --nvtx-include '{NVTX_INCLUDE}'; check the child ran its cells at all",
            line)
    if "Failed to find metric" in text:
        name = _metric_from(text)
        return NcuProblem(
            "unknown_metric", sev,
            f"ncu does not know the metric {name!r} on this GPU/ncu version",
            f"list the valid names with `ncu --query-metrics --chips {chip_arg}` and fix the metric set "
            "(metrics/*.toml) or --metrics",
            line)
    if "Unable to write to file" in text:
        return NcuProblem(
            "report_not_writable", sev, "ncu could not write its report file",
            "ncu does not create folders: check that the -o folder exists and is writable, and that "
            "no other program holds the report open", line)
    if "LibraryNotLoaded" in text or "Failed to initialize the profiler" in text:
        return NcuProblem(
            "profiler_init", sev,
            "ncu could not initialise its profiling library on this machine",
            "counters are often unreachable inside containers and sandboxes (seen under gVisor); "
            "run on a host or VM with the NVIDIA driver's profiling support, and check `l2attr doctor`",
            line)
    if "not supported on this device" in text.lower() or "device is not supported" in text.lower():
        return NcuProblem("unsupported_device", sev, "ncu does not support profiling this GPU",
                          "use a newer Nsight Compute, or a GPU it supports", line)
    m = re.search(r"application returned an error code \((\d+)\)", text)
    if m:
        return NcuProblem(
            "child_failed", sev, f"the profiled program exited with code {m.group(1)}",
            "its own error is printed above ncu's lines; run the same `l2attr ladder ...` command "
            "without ncu to see it", line)
    if ("Unexpected number of profiled kernels" in text
            or (re.search(r"replay", text, re.I) and re.search(r"match|mismatch|differ", text, re.I))):
        return NcuProblem(
            "replay_mismatch", sev,
            "application replay found different kernels in different passes",
            "the child must launch the same kernels in the same order every run (fixed seed, no "
            "autotuning inside profiled ranges); --app-replay-mode balanced tolerates reordering",
            line)
    if re.search(r"permission|not permitted", text, re.I):
        return NcuProblem("permission", sev, text.strip(),
                          "run as root or check `l2attr doctor`", line)
    if sev == "error":
        return NcuProblem("ncu_error", sev, f"ncu: {text.strip()}", "", line)
    return None


def translate(output: str, chip: str | None = None) -> list[NcuProblem]:
    """All recognised problems in ncu's output, in order, one per distinct code and line."""
    problems: list[NcuProblem] = []
    seen: set[tuple[str, str]] = set()
    for raw in output.splitlines():
        m = _PREFIX_RE.match(raw)
        if not m:
            continue
        problem = _classify(m.group(1), m.group(2), chip)
        if problem is None:
            continue
        key = (problem.code, problem.message)
        if key not in seen:
            seen.add(key)
            problems.append(problem)
    return problems


_SPECIFIC_FIRST = ("counter_permission", "profiler_init", "unknown_metric", "report_not_writable",
                   "unsupported_device",
                   "replay_mismatch", "no_kernels", "child_failed", "permission", "ncu_error")


def summarize(output: str, returncode: int, chip: str | None = None) -> str:
    """One line for a UserError: the most specific known cause, else ncu's exit status.

    "No kernels were profiled" often follows a permission or metric error; the root cause wins.
    """
    problems = translate(output, chip)
    for code in _SPECIFIC_FIRST:
        for p in problems:
            if p.code == code:
                return p.one_line()
    if returncode != 0:
        return f"ncu exited with status {returncode} and no ==ERROR== line; see its output above"
    return "ncu finished without a recognised problem"


__all__ = ["NcuProblem", "translate", "summarize"]
