"""ncu's ==ERROR== / ==WARNING== lines become messages that say what to do (captured strings)."""

from __future__ import annotations

from l2attr.profile.ncu_errors import summarize, translate

# Strings as ncu 2025.3.1 printed them on the H200 (2026-11-29) or as quoted in public reports.
PERM = ("==PROF== Connected to process 42 (/usr/bin/python3.12)\n"
        "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU "
        "Performance Counters on the target device 0. For instructions on enabling permissions and "
        "to get more information see https://developer.nvidia.com/ERR_NVGPUCTRPERM\n"
        "==PROF== Disconnected from process 42\n"
        "==WARNING== No kernels were profiled.\n")
NO_MATCH = ("==PROF== Connected to process 1034 (/usr/bin/python3.12)\ntiny done 2\n"
            "==PROF== Disconnected from process 1034\n"
            "==WARNING== No kernels were profiled.\n"
            "==WARNING== Note that specified NVTX include expressions match only push/pop ranges.\n"
            "==WARNING== Refer https://docs.nvidia.com/nsight-compute/NsightComputeCli/index.html#nvtx-filtering "
            "for NVTX Filtering usage.\n")
BAD_METRIC = ("==PROF== Connected to process 985 (/usr/bin/python3.12)\n"
              "==ERROR== Failed to find metric regex:^lts__bogus_metric\\.(sum|min|max|avg|pct|ratio|max_rate)$\n\n"
              "==ERROR== Failed to profile \"reduce_kernel\" in process 985\n"
              "==PROF== Trying to shutdown target application\n"
              "==ERROR== The application returned an error code (9).\n")
MISMATCH = ("==PROF== Disconnected from process 1140\n"
            "==ERROR== Unexpected number of profiled kernels. Application replay requires that the "
            "execution, combined with selected filters, guarantees a consistent set of kernels in all passes.\n"
            "==ERROR== Check the --app-replay-match and --app-replay-mode options for different matching strategies.\n")
CHILD_FAIL = ("==PROF== Disconnected from process 1204\n"
              "==ERROR== The application returned an error code (1).\n")
NOT_WRITABLE = "==ERROR== Unable to write to file sweep.ncu-rep. Please verify this file is not locked, and writable.\n"
SANDBOX = "==ERROR== Failed to initialize the profiler: LibraryNotLoaded\n"
NOTES_ONLY = ("==WARNING== Note: Running with uncontrolled GPU caches. Profiling results may be inconsistent.\n"
              "==PROF== Report: /tmp/x.ncu-rep\n")


def test_counter_permission_says_how_to_enable_access():
    msg = summarize(PERM, 1)
    assert "ERR_NVGPUCTRPERM" in msg
    assert "NVreg_RestrictProfilingToAdminUsers=0" in msg and "root" in msg
    assert "developer.nvidia.com/ERR_NVGPUCTRPERM" in msg
    # the root cause wins over the "No kernels were profiled" that follows it
    assert [p.code for p in translate(PERM)] == ["counter_permission", "no_kernels"]


def test_no_kernels_points_at_the_nvtx_filter():
    msg = summarize(NO_MATCH, 0)
    assert "NVTX" in msg and "--nvtx" in msg and "regex:l2attr@(pin|consumer):.*/" in msg


def test_unknown_metric_is_named_with_query_hint():
    msg = summarize(BAD_METRIC, 9, chip="gh100")
    assert "'lts__bogus_metric'" in msg
    assert "ncu --query-metrics --chips gh100" in msg
    codes = [p.code for p in translate(BAD_METRIC)]
    assert codes[0] == "unknown_metric" and "child_failed" in codes


def test_plain_unknown_metric_name():
    msg = summarize("==ERROR== Failed to find metric foo__bar.sum\n", 1)
    assert "'foo__bar.sum'" in msg and "<chip>" in msg


def test_replay_mismatch_says_child_must_be_deterministic():
    msg = summarize(MISMATCH, 1)
    assert "different kernels" in msg and "same order" in msg


def test_child_failure_and_unwritable_report_and_sandbox():
    assert "exited with code 1" in summarize(CHILD_FAIL, 1)
    assert "does not create folders" in summarize(NOT_WRITABLE, 1)
    assert "profiling library" in summarize(SANDBOX, 1)


def test_unknown_errors_pass_through_and_notes_are_ignored():
    assert summarize("==ERROR== Something new happened\n", 3) == "ncu: Something new happened"
    assert translate(NOTES_ONLY) == []
    assert "status 5" in summarize(NOTES_ONLY, 5)
    assert summarize(NOTES_ONLY, 0) == "ncu finished without a recognised problem"
