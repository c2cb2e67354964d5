"""The ncu argv: exact list, and refusal of settings that erase the pin's L2 state."""

from __future__ import annotations

from pathlib import Path

import pytest

from l2attr.errors import UserError
from l2attr.profile.ncu_cmd import (NVTX_INCLUDE, NcuOptions, build_ncu_argv, check_options,
                                    parse_ncu_version, query_metrics_argv, report_path)

CHILD = ["python", "-m", "l2attr", "ladder", "--rungs", "l2p_optmt", "--nvtx-last", "2"]


def test_default_argv_is_exactly_this():
    argv = build_ncu_argv(CHILD, ["dram__bytes_read.sum", "gpu__time_duration.sum"], Path("/r/ncu/sweep"))
    assert argv == [
        "ncu", "--config-file", "off",
        "--replay-mode", "application", "--app-replay-match", "grid", "--app-replay-mode", "strict",
        "--cache-control", "none", "--clock-control", "none",
        "--nvtx", "--nvtx-include", "regex:l2attr@(pin|consumer):.*/",
        "--metrics", "dram__bytes_read.sum,gpu__time_duration.sum",
        "-o", "/r/ncu/sweep", "-f",
        *CHILD,
    ]


def test_the_replay_buffer_is_named_only_when_it_is_not_ncus_default():
    argv = build_ncu_argv(CHILD, ["dram__bytes_read.sum"], Path("/r/x"), NcuOptions(app_replay_buffer="memory"))
    assert argv[argv.index("--app-replay-buffer") + 1] == "memory" and argv.index("--app-replay-buffer") < argv.index("-o")
    kernel = build_ncu_argv(CHILD, ["dram__bytes_read.sum"], Path("/r/x"),
                            NcuOptions(replay_mode="kernel", allow_kernel_replay=True, app_replay_buffer="memory"))
    assert "--app-replay-buffer" not in kernel                      # an application-replay option only
    with pytest.raises(UserError, match="--app-replay-buffer 'disk'"):
        build_ncu_argv(CHILD, ["dram__bytes_read.sum"], Path("/r/x"), NcuOptions(app_replay_buffer="disk"))


def test_nvtx_include_selects_l2attrs_domain_with_trailing_slash():
    # docs/facts.md#nvtx-filter and the H200 probe (examples/logs/probe_nvtx_evict_last.log): push/pop ranges of
    # the l2attr domain, a regex over `domain@range` and a trailing '/'
    import re

    from l2attr.names import NVTX_DOMAIN, range_name

    assert NVTX_INCLUDE.startswith("regex:") and NVTX_INCLUDE.endswith("/")
    pattern = re.compile(NVTX_INCLUDE[len("regex:"):])
    for role, hit in (("pin", True), ("consumer", True), ("call", False)):
        name = range_name(role, "artifact", "l2p_optmt", "element", "reuse_high", "natural", 0, 1)
        assert bool(pattern.search(f"{NVTX_DOMAIN}@{name}/")) is hit


def test_report_suffix_is_not_doubled():
    argv = build_ncu_argv(CHILD, ["x__y.sum"], "/r/a.ncu-rep")
    assert argv[argv.index("-o") + 1] == "/r/a"
    assert report_path("/r/a") == Path("/r/a.ncu-rep")
    assert report_path("/r/a.ncu-rep") == Path("/r/a.ncu-rep")


def test_kernel_replay_is_refused_with_the_reason():
    with pytest.raises(UserError) as exc:
        build_ncu_argv(CHILD, ["x__y.sum"], "/r/a", NcuOptions(replay_mode="kernel"))
    msg = str(exc.value)
    assert "restores device memory" in msg and "pin" in msg
    assert "--i-know-kernel-replay-erases-l2" in msg


def test_kernel_replay_allowed_when_acknowledged_with_a_warning():
    opts = NcuOptions(replay_mode="kernel", allow_kernel_replay=True)
    argv = build_ncu_argv(CHILD, ["x__y.sum"], "/r/a", opts)
    assert argv[argv.index("--replay-mode") + 1] == "kernel"
    assert "--app-replay-match" not in argv
    assert any("kernel replay" in w for w in check_options(opts))


def test_cache_flush_is_refused_unless_acknowledged():
    with pytest.raises(UserError, match="flush every cache.*--i-know-cache-control-erases-l2"):
        check_options(NcuOptions(cache_control="all"))
    assert check_options(NcuOptions(cache_control="all", allow_cache_flush=True))


def test_base_clocks_only_warn():
    warnings = check_options(NcuOptions(clock_control="base"))
    assert len(warnings) == 1 and "not comparable" in warnings[0]
    assert check_options(NcuOptions()) == []


@pytest.mark.parametrize("field, value", [("replay_mode", "range"), ("cache_control", "some"),
                                          ("clock_control", "max"), ("app_replay_mode", "loose"),
                                          ("app_replay_match", "order")])
def test_unknown_option_values_are_refused(field, value):
    with pytest.raises(UserError):
        check_options(NcuOptions(**{field: value}))


def test_empty_metrics_or_child_are_refused():
    with pytest.raises(UserError):
        build_ncu_argv(CHILD, [], "/r/a")
    with pytest.raises(UserError):
        build_ncu_argv([], ["x__y.sum"], "/r/a")


def test_query_and_version_helpers():
    assert query_metrics_argv("gh100", "/opt/ncu") == ["/opt/ncu", "--query-metrics", "--chips", "gh100"]
    assert parse_ncu_version("NVIDIA (R) Nsight Compute Command Line Profiler\nCopyright (c) 2018-2025 "
                             "NVIDIA Corporation\nVersion 2025.3.1.0 (build 36398880) (public-release)\n") == "2025.3.1.0"
    assert parse_ncu_version("garbage") is None
