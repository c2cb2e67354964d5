"""Shared test fixtures: paths to recorded data (all inside the repository, so a clone runs every
CPU test), the `gpu` mark that skips without a GPU, and what keeps the suite fast on two cores:
one xdist worker per test file, one read per committed run dir, few property examples."""

from __future__ import annotations

import copy
import functools
import gc
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

# pytest rewrites each test module's asserts on import and keeps the result in __pycache__ unless
# bytecode writing is off (PYTHONDONTWRITEBYTECODE, set in many containers): then every xdist
# worker rewrites all ~230 modules again on every run, seconds of each worker's collection. The
# cache lives in the gitignored __pycache__ folders; PYTHONDONTWRITEBYTECODE=1 is honoured in
# the subprocesses the tests start (they only read what is there).
sys.dont_write_bytecode = False

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures"
EXAMPLES = REPO / "examples"
# The first lines of the artifact's traces and hot file: tests/fixtures/traces/README.md
TRACES = FIXTURES / "traces"
MEDIUM_CUT = TRACES / "reuse_medium_head4000.txt"
LOW_CUT = TRACES / "reuse_low_head4000.txt"
HOT_MEDIUM_CUT = TRACES / "hot60k_medium_head2000.txt"
KERNEL_REPLAY_REPORT = FIXTURES / "ncu" / "pin_consume_kernel_replay_h200.ncu-rep"


def unpack_reports(folder: Path = FIXTURES / "ncu") -> None:
    """The Nsight Compute fixtures are committed xz-compressed (a tenth of their size or less: the
    tree a device call carries); the tests read each report beside its .xz, unpacked here once per
    checkout (.gitignore keeps the copies out). A copy older than its .xz is unpacked again; each
    copy lands whole (os.replace), so test workers starting together do not race."""
    import lzma
    import shutil

    for packed in sorted(folder.glob("*.ncu-rep.xz")):
        plain = packed.with_suffix("")
        if plain.is_file() and plain.stat().st_mtime_ns >= packed.stat().st_mtime_ns:
            continue
        part = plain.with_name(f".{plain.name}.{os.getpid()}")
        with lzma.open(packed, "rb") as src, open(part, "wb") as dst:
            shutil.copyfileobj(src, dst)
        os.replace(part, plain)


unpack_reports()

# Property tests: few examples in the README's test command (each example of the loader's
# properties writes and reads a run dir), no per-example deadline (CSV round trips on a busy CI
# machine). .ci/run runs them again with HYPOTHESIS_PROFILE=ci; =thorough for a deep run.
settings.register_profile("l2attr", max_examples=15, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("ci", max_examples=200, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", max_examples=2000, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "l2attr"))


def _gpu_available() -> bool:
    """A GPU that answers both libraries, whatever is installed: torch and CuPy on a CPU machine, a
    GPU without a driver or with one too old for CuPy's runtime (cudaErrorInsufficientDriver) all
    skip the `gpu` tests (issue 38: torch and CuPy installed without a GPU failed 17 tests)."""
    try:
        import cupy
        import torch

        return bool(torch.cuda.is_available()) and cupy.cuda.runtime.getDeviceCount() > 0 \
            and bool(cupy.cuda.Device(0).compute_capability)
    except Exception:
        return False


# --- what the README's test command leaves to `-m slow` (.ci/run runs it right after) ------------
# Besides the files that mark themselves (wheel, browser, nvcc, bash rows): the checks of the
# committed examples and the README against them (each analyses every committed H200 run), the
# tests that start a real Dask cluster, and the damage batteries over every case (every table x
# rule, every manifest field, every flag; test_readme_reliability's in-process rows and the
# integrity tests left here keep one case per mechanism fast), and the damage property of every
# committed run kind (each example reports a copied run; tests/test_runs_mutated.py keeps one
# counterexample per run kind in the command and marks the others slow itself: .ci/run runs the
# property with 15 examples in `-m slow` and 200 in its last line). Each entry is a test file or a node id prefix; an entry that matches nothing
# is an error.
SLOW = (
    "tests/test_properties_runs_declared.py::test_every_declared_damage",
    "tests/test_properties_runs_declared.py::test_kept_declared_damage",
    "tests/test_manifest_reads.py::test_no_module_reads_more_of_a_raw_manifest_than_it_did",
    "tests/test_step_losses.py::test_a_committed_arm_of_steps_0_to_8_and_10_is_refused_in_one_line",
    "tests/test_step_losses.py::test_the_committed_run_loses_nothing",
    "tests/test_step_losses.py::test_the_eager_loop_removed_says_the_denominator_changed",
    "tests/test_step_losses.py::test_a_missing_control_is_said",
    "tests/test_step_losses.py::test_control_missing_is_read_and_its_reason_said",
    "tests/test_step_losses.py::test_missing_rewarmed_arms_are_said",
    "tests/test_step_losses.py::test_a_negative_eager_time_is_refused_a_noisy_control_is_not",
    "tests/test_analysis_examples.py",
    "tests/test_report_families.py::test_report_on_examples_still_renders",
    "tests/test_cli_report.py::test_nested_step_runs_make_one_page_with_the_index_first",
    "tests/test_readme_prose.py::test_prose_blocks_are_the_filled_templates",
    "tests/test_readme_results.py",
    "tests/test_readme_experiments.py",
    "tests/test_example_pages.py",
    "tests/test_report_subtitle.py::test_experiment_and_step_pages_do_not_say_the_study",
    "tests/test_reproduction.py",
    "tests/test_step_recorded.py",
    "tests/test_distribute_example.py",
    "tests/test_sweep_report.py",
    "tests/test_distribute_sweep.py",
    "tests/test_distribute_ladder.py",
    "tests/test_distribute_units.py",
    "tests/test_distribute_cli.py::test_workers_without_a_gpu_say_so_and_write_nothing",
    "tests/test_distribute_profile.py",
    "tests/test_distribute_tuning.py",
    "tests/test_integrity_runs.py::test_a_damaged_table_is_one_line_naming_file_row_and_rule",
    "tests/test_integrity_runs.py::test_allow_partial_keeps_the_same_line_and_reads_on",
    "tests/test_integrity_runs.py::test_a_mistyped_manifest_is_refused_in_every_kind",
    "tests/test_integrity_manifest_required.py::test_a_missing_required_field_is_refused",
    "tests/test_integrity_sweep_samples.py",
    "tests/test_integrity_partial.py",
    "tests/test_readme_reliability.py::test_row",
    "tests/test_cli_report.py::test_format_follows_the_extension",
    "tests/test_cli_inputs.py::test_every_flag_with_an_empty_or_negative_value",
    "tests/test_profile_calls_rule.py::test_the_default_is_the_rules_answer_on_the_committed_fixed_runs",
    # real processes interrupted, cut off or filled up, and whole reports of many runs: each a second
    # or more of the 2-core budget (issue 39). Ctrl-C keeps its in-process tests in the fast run; the
    # closed pipe and the full disk are checked here only, in CI's slow stage
    "tests/test_cli_inputs.py::test_ctrl_c_at_start_up_of_the_real_process",
    "tests/test_cli_inputs.py::test_ctrl_c_after_the_command_ended_is_no_death_by_signal",
    "tests/test_cli_errors.py::test_closed_pipe_is_a_quiet_exit_141",
    "tests/test_cli_errors.py::test_full_disk_on_stdout_is_one_line_and_exit_2",
    "tests/test_cli_closed_stdout.py::test_the_real_process_with_fd_1_closed",
    "tests/test_report_families.py::test_cli_report_on_the_three_families",
    "tests/test_cli_report.py::test_folder_of_runs_and_glob_leftovers",
    "tests/test_integrity_mixed.py::test_a_ladder_of_another_shape_beside_a_sweep",
    "tests/test_properties_runs.py",
    "tests/test_properties_runs_distributed.py",
    # the nvcc checks for sm_80 (sm_90, the measured GPUs' arch, keeps each mechanism in the command)
    "tests/test_kernels_nvcc.py::test_artifact_family_keeps_the_artifacts_footprint[sm_80]",
    "tests/test_kernels_nvcc.py::test_tuned_family_uncapped_does_not_spill[sm_80]",
    "tests/test_kernels_nvcc.py::test_pin_ptx_holds_evict_last_prefetch[line-sm_80]",
    "tests/test_kernels_nvcc.py::test_pin_ptx_holds_evict_last_prefetch[element-sm_80]",
    "tests/test_kernels_nvcc.py::test_block_timer_kernel_spills_nothing[sm_80]",
    # every other test whose call took 0.5 s or more in `--durations=0` of the README's command on the
    # 2-core host (issue 39, when that command took 56 s quiet on the final tree of session 43):
    # reports drawn whole, sweeps measured through fakes, static reads of every module, processes.
    # The one-case-per-mechanism tests the entries above keep fast stay fast.
    "tests/test_analysis_load.py::test_duplicate_cells_keep_one_run_and_compare_the_other",
    "tests/test_cli_profile.py::test_control_on_the_recorded_evict_last_reports",
    "tests/test_cli_report.py::test_experiment_runs_print_their_headlines_and_have_text",
    "tests/test_cli_report.py::test_html_report_written",
    "tests/test_cli_report.py::test_mixed_configs",
    "tests/test_contract_ladder.py::test_ladder_sample_columns_obey_their_rule[src0-window_setaside_us--5-must be a number >= 0]",
    "tests/test_contract_ladder.py::test_ladder_sample_columns_obey_their_rule[src1-window_reset_us-abc-must be a number >= 0]",
    "tests/test_contract_signals.py::test_a_signal_mid_write_leaves_no_temp_file[SIGTERM-143]",
    "tests/test_contract_signals.py::test_the_child_sets_its_own_dispositions_whatever_it_inherits",
    "tests/test_distribute_cli.py::test_unreachable_scheduler_one_line",
    "tests/test_distribute_cli.py::test_without_the_flags_dask_is_never_imported",
    "tests/test_doctor.py::test_doctor_module_imports_no_gpu_library",
    "tests/test_experiment_recorded.py::test_a_pair_declared_here_is_profiled_analysed_and_reported",
    "tests/test_headline_once.py::test_banner_markdown_and_console_say_the_same_sentence",
    "tests/test_imports_resolve.py::test_every_l2attr_import_resolves[l2attr]",
    "tests/test_imports_resolve.py::test_every_l2attr_import_resolves[tests]",
    "tests/test_integrity_mixed.py::test_the_same_shape_sweep_is_quoted_by_the_verdict",
    "tests/test_layers.py::test_every_part_has_a_floor",
    "tests/test_ncu_import.py::test_attribute_noise_and_rollups_are_skipped_by_default",
    "tests/test_no_plotly_for_gpu_commands.py::test_gpu_commands_do_not_need_plotly",
    "tests/test_outputs_special.py::test_every_replacing_write_and_append_is_flushed_to_disk",
    "tests/test_outputs_special.py::test_report_to_dev_null[html]",
    "tests/test_properties_load.py::test_what_is_read_is_what_was_written",
    "tests/test_readme_snippet_cpu.py::test_other_exceptions_keep_their_traceback",
    "tests/test_readme_snippet_cpu.py::test_the_step_snippet_without_nsight_compute_ends_in_one_l2attr_line",
    "tests/test_registries.py::test_a_condition_declared_in_the_registry_runs_through_the_cpu_path",
    "tests/test_report_answer.py::test_progress_line_on_request",
    "tests/test_report_walk.py::test_the_skipped_run_is_said_on_stderr_by_the_command",
    "tests/test_report_answer.py::test_sweep_legend_below_its_axis_title",
    "tests/test_report_families.py::test_one_family_has_the_section_but_no_family_answer",
    "tests/test_report_html.py::test_answer_is_the_first_text_after_the_title",
    "tests/test_report_html.py::test_failed_validity_control_shows_red_banner",
    "tests/test_report_html.py::test_ladder_only_marks_layer_b_not_measured",
    "tests/test_report_html.py::test_provenance_one_table_per_run_with_units",
    "tests/test_report_markdown.py::test_the_kernel_timer_definition_names_the_runs_own_timer",
    "tests/test_report_markdown.py::test_verdict_and_ladder_tables",
    "tests/test_report_sections.py::test_a_module_declaring_an_unknown_name_fails_at_import",
    "tests/test_report_sections.py::test_drawing_the_pages_reads_exactly_the_declared_names",
    "tests/test_report_tables.py::test_the_terminal_prints_the_headline_and_the_verdict_cells_of_the_page",
    "tests/test_report_tables.py::test_the_verdict_card_and_the_markdown_page_draw_the_same_cells",
    "tests/test_sweep_adaptive.py::test_a_fixed_sweep_has_no_stopped_column",
    "tests/test_sweep_adaptive.py::test_quiet_points_stop_at_the_minimum_and_a_noisy_one_at_the_limit",
    "tests/test_sweep_new_axis.py::test_plan_measure_analyse_chart_report",
    "tests/test_sweep_occupy.py::test_a_fake_occupy_run_reports_no_a100_and_no_smaller_l2",
    "tests/test_sweep_run.py::test_amortisation_break_even_measured_and_by_formula",
    "tests/test_sweep_run.py::test_every_unit_is_on_disk_with_its_rows",
    "tests/test_sweep_run.py::test_formula_falls_back_to_back_to_back_k1_and_reading_says_when_no_interleaved",
    "tests/test_sweep_run.py::test_resume_remeasures_a_unit_cut_between_its_two_appends",
    "tests/test_sweep_run.py::test_resume_with_everything_done_measures_and_loads_nothing",
    "tests/test_torch_late.py::test_the_cli_the_workload_the_report_and_the_ladders_checks_never_import_torch",
    "tests/test_vocab_literals.py::test_no_vocabulary_value_is_spelled_outside_vocab",
)


def _mark_slow(config: pytest.Config, items: list[pytest.Item]) -> None:
    used = set()
    for item in items:
        for entry in SLOW:
            if item.nodeid == entry or item.nodeid.startswith(entry + "::") or item.nodeid.startswith(entry + "["):
                item.add_marker(pytest.mark.slow)
                used.add(entry)
    # only when the whole suite was collected (no paths or node ids given): a run of a few tests
    # must not trip on the others
    if config.option.file_or_dir:
        return
    stale = [e for e in SLOW if e not in used]
    if stale:
        raise pytest.UsageError(f"tests/conftest.py SLOW names tests that do not exist: {', '.join(stale)}")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    _mark_slow(config, items)
    if any(item.get_closest_marker("gpu") for item in items) and not _gpu_available():
        skip = pytest.mark.skip(reason="needs a CUDA GPU with torch and cupy")
        for item in items:
            if item.get_closest_marker("gpu"):
                item.add_marker(skip)


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    """What the imports and the collection built (modules, test items, fixtures) lives to the end of
    the process: moved out of the cyclic collector's reach (gc.freeze), whose full passes walked it
    again and again, and the youngest generation collected less often: about 2.5 s of collector
    time a worker before, under 1 s after. Garbage is still collected, a little later."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(10_000, 20, 20)


# --- pytest-xdist (the README's test command runs `-n auto`; optional hooks: without xdist, as
# on a GPU machine with only pytest, they are never called) ------------------------------------

@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """One worker where a GPU is usable: the GPU tests time kernels and must not share the GPU
    (or the host's cores) with another worker. Elsewhere xdist's own count (the cores)."""
    return 1 if _gpu_available() else None


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """`-n` alone means `--dist load`, which sends the tests of one file to every worker, so each
    worker builds the file's module-scoped fixtures (committed runs analysed, reports rendered)
    again. Keep a file's tests on one worker instead; an explicit other --dist is left alone."""
    if config.getvalue("dist") != "load":
        return None
    from xdist.scheduler import LoadFileScheduling

    return LoadFileScheduling(config, log)


# --- one read per committed run dir -----------------------------------------------------------
# Many test files read the same committed run dirs under examples/ (about a second each), the
# study's runs (load.read_run) and the experiments' (experiment/table.py load_experiment). The read
# is a function of the dir's bytes, so each is read once per test process and every caller gets
# its own deep copy. Keyed by the path as given (Run.path keeps it) and every file's size and
# mtime, so an edited copy is read again. Only paths inside examples/, and only reads that found
# no damage; L2ATTR_TEST_READ_CACHE=0 turns it off.

def _examples_signature(path: Path) -> tuple | None:
    try:
        resolved = path.resolve()
        resolved.relative_to(EXAMPLES)
    except (OSError, ValueError):
        return None
    if not resolved.is_dir():
        return None
    files = sorted(p for p in resolved.rglob("*") if p.is_file())
    return (str(path), os.getcwd(), str(resolved),
            tuple((str(p.relative_to(resolved)), p.stat().st_size, p.stat().st_mtime_ns) for p in files))


def _cached_reader(read_run: Any) -> Any:
    memo: dict[tuple, Any] = {}

    @functools.wraps(read_run)
    def read(path: Path, *args: Any, **kwargs: Any) -> Any:
        key = _examples_signature(Path(path))
        if key is None:
            return read_run(path, *args, **kwargs)
        if key not in memo:
            damage = args[0] if args else kwargs.get("damage")
            before = len(damage.messages) if damage is not None else 0
            run = read_run(path, *args, **kwargs)
            if run is None or (damage is not None and len(damage.messages) != before):
                return run
            memo[key] = run
        return copy.deepcopy(memo[key])

    read.__wrapped_by_tests__ = True
    return read


def _install(owner: Any, name: str, wrap: Any) -> None:
    """Wrap `owner.name` once for this test process (L2ATTR_TEST_READ_CACHE=0: never), and rebind
    it in every l2attr module that imported the original by name."""
    if os.environ.get("L2ATTR_TEST_READ_CACHE", "1") == "0":
        return
    original = getattr(owner, name, None)
    if original is None or getattr(original, "__wrapped_by_tests__", False):
        return
    cached = wrap(original)
    for mod_name, module in list(sys.modules.items()):
        if (module is owner or mod_name.startswith("l2attr.")) and getattr(module, name, None) is original:
            setattr(module, name, cached)


# --- one ncu_report child per committed report and question ----------------------------------
# Reading an .ncu-rep starts a fresh interpreter (l2attr/profile/ncu_child.py: ncu_report must load
# before numpy), a third of a second each, and many tests read the same committed reports with the
# same arguments. The child's JSON answer is a function of the report's bytes and the arguments, so
# each is asked once per test process and every caller gets its own deep copy. Only reports under
# tests/fixtures/ or examples/ (size and mtime in the key); a test that checks the child itself
# starts its own process; L2ATTR_TEST_READ_CACHE=0 turns it off as well.

def _reports_signature(args: tuple[str, ...]) -> tuple | None:
    files = []
    for arg in args:
        path = Path(arg)
        if path.suffix != ".ncu-rep":
            continue
        try:
            resolved = path.resolve()
            if not any(resolved.is_relative_to(root) for root in (FIXTURES, EXAMPLES)) or not resolved.is_file():
                return None
            files.append((str(resolved), resolved.stat().st_size, resolved.stat().st_mtime_ns))
        except OSError:
            return None
    return tuple(files) or None


def _cached_child(run_reader: Any) -> Any:
    memo: dict[tuple, Any] = {}

    @functools.wraps(run_reader)
    def run(module: str, args: Any, what: Any) -> Any:
        args = tuple(str(a) for a in args)
        files = _reports_signature(args)
        if files is None:
            return run_reader(module, args, what)
        key = (module, args, files, str(what))
        if key not in memo:
            memo[key] = run_reader(module, args, what)       # a UserError is raised, never kept
        return copy.deepcopy(memo[key])

    run.__wrapped_by_tests__ = True
    return run


def pytest_configure(config: pytest.Config) -> None:
    """The cache where tests run: not in an xdist controller, which only hands out tests (and
    would import l2attr.analysis, most of a second, before any worker starts)."""
    distributing = getattr(config.option, "dist", "no") != "no" and bool(getattr(config.option, "tx", None))
    controller = distributing and "PYTEST_XDIST_WORKER" not in os.environ
    if not controller:
        from l2attr.analysis import load_runs
        from l2attr.experiment import table as experiment_table
        from l2attr.profile import ncu_child

        _install(sys.modules[load_runs.__module__], "read_run", _cached_reader)
        _install(experiment_table, "load_experiment", _cached_reader)
        _install(ncu_child, "run_reader", _cached_child)


@pytest.fixture(autouse=True, scope="session")
def _no_fsync() -> Any:
    """Every atomic write ends with an fsync (l2attr/atomic.py), a promise to survive a power cut
    that no test makes: the suite's ~2,400 writes skip it (seconds of a run on a 2-core machine's
    disk). The writes themselves, the temp file and the rename, are unchanged; the processes the
    tests start keep the fsync."""
    from l2attr import atomic

    real, atomic._fsync = atomic._fsync, lambda fd: None
    yield
    atomic._fsync = real


@pytest.fixture(autouse=True)
def _workload_cache_in_tmp(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Generated workloads go to this session's tmp dir, never the user's cache dir
    (l2attr/dlrm/workload/cache.py reads L2ATTR_CACHE_DIR first)."""
    monkeypatch.setenv("L2ATTR_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "workload-cache"))


@pytest.fixture(scope="module")
def cuda_torch() -> Any:
    """torch with a CUDA GPU, cupy and cuda-bindings (graph surgery's needs), or the test skips."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("cupy")
    pytest.importorskip("cuda.bindings")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA GPU")
    return torch
