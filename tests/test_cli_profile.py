"""`l2attr profile`: --import (ncu and nsys), refusals, dry run, and a full run with ncu faked."""

from __future__ import annotations

import io
import json
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pandas as pd
import pytest
from conftest import KERNEL_REPLAY_REPORT

from l2attr.analysis.control import run_control
from l2attr.analysis.load import read_run
from l2attr.cli import main
from l2attr.dlrm.config import build_config
from l2attr.errors import UserError
from l2attr.commands.profile import profile_and_show, timeline_and_show
from l2attr.dlrm.profile import plan
from l2attr.profile import tools as ptools
from l2attr.profile.ncu_cmd import NcuOptions
from l2attr.profile.ncu_import import control_condition, read_report
from l2attr.profile.nsys import NsysStatus, probe_nsys, read_timeline, timeline_unavailable
from l2attr.schema import METRICS

FIXTURES = Path(__file__).parent / "fixtures" / "ncu"
APP_REPORT = FIXTURES / "pin_consume_app_replay_h200.ncu-rep"


def _one_error_line(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    return lines[0]


# -- --import ------------------------------------------------------------------------------------

def test_import_csv_parses_with_pandas(capsys):
    assert main(["profile", "--import", str(KERNEL_REPLAY_REPORT), "--csv"]) == 0
    out = capsys.readouterr().out
    df = pd.read_csv(io.StringIO(out))
    assert list(df.columns[:5]) == ["kernel", "nvtx_range", "metric", "value", "unit"]
    assert set(METRICS.columns) <= set(df.columns)
    row = df[(df["nvtx_range"] == "l2attr:consumer:nopin") & (df["metric"] == "dram__bytes_read.sum")]
    assert row["value"].tolist() == [57602048.0] and row["unit"].tolist() == ["byte"]
    evict = df[(df["nvtx_range"] == "l2attr:pin") & (df["metric"] == "lts__t_sectors_aperture_device_evict_last.sum")]
    assert evict["value"].tolist() == [1438544.0]


def test_import_summary_table(capsys):
    assert main(["profile", "--import", str(APP_REPORT)]) == 0
    out = capsys.readouterr().out
    assert "8 kernels in 8 calls" in out and "l2attr:consumer:l2p_optmt:reuse_high:natural:t0:b1" in out


@pytest.mark.parametrize("make, needle", [
    ("missing", "report not found"), ("text", "is not an Nsight Compute report"), ("dir", "is not a file"),
    ("first 100 KB", "the report is cut short (a block ends at byte 120,038, the file has 100,000 bytes)"),
    ("file header only", "no profiled kernel metrics in it (empty or truncated report?)"),
])
@pytest.mark.parametrize("csv", [True, False])
def test_import_bad_input_is_one_line_and_exit_2(tmp_path, capsys, make, needle, csv):
    target = tmp_path / "r.ncu-rep"
    if make == "text":
        target.write_text("not a report\n")
    elif make == "dir":
        target = tmp_path
    elif make == "first 100 KB":
        target.write_bytes(APP_REPORT.read_bytes()[:100_000])
    elif make == "file header only":      # magic + file header: a report of no kernels (10 bytes)
        target.write_bytes(APP_REPORT.read_bytes()[:10])
    assert main(["profile", "--import", str(target), *(["--csv"] if csv else [])]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    line = _one_error_line(err)
    assert line.startswith("l2attr profile: error:") and needle in line


def test_csv_without_import_is_refused(capsys):
    assert main(["profile", "--csv", "--chip", "gh100"]) == 2
    assert "--csv only applies to --import" in _one_error_line(capsys.readouterr().err)


# -- refusals and dry run ------------------------------------------------------------------------

def test_dry_run_prints_one_ncu_command_with_the_control_folded_in(capsys):
    assert main(["profile", "--dry-run", "--chip", "gh100", "--preset", "small", "--rungs", "optmt,l2p_optmt",
                 "--profiles", "reuse_low,reuse_medium", "--calls-per-cell", "3", "--ncu", "/opt/ncu"]) == 0
    out = capsys.readouterr().out
    lines = [ln for ln in out.splitlines() if ln.startswith("[")]
    assert [ln.split("]")[0][1:] for ln in lines] == ["sweep"]
    sweep = lines[0]
    for part in ("/opt/ncu --config-file off --replay-mode application", "--cache-control none --clock-control none",
                 "--nvtx --nvtx-include 'regex:l2attr@(pin|consumer):.*/'", "-o '<RUN_DIR>/ncu/sweep' -f",
                 "-m l2attr ladder", "--rungs optmt,l2p_optmt --profiles reuse_low,reuse_medium --l2 natural",
                 "--repeats 1 --no-host-repeat --timer spin --spin-us 0 --no-bandwidth --nvtx-last 3", "--tables 2 --rows 100000",
                 "--warmup-batches 1 --batches 1"):
        assert part in sweep, part
    # the control runs the pin rung on the hottest selected profile, the headline family, in the
    # sweep's own child: after the pin is the sweep's cell; after pin + flush and after pin +
    # persisting-L2 reset are its two extra cells
    assert sweep.endswith("--extra-cell artifact:l2p_optmt:reuse_medium:flush_after_pin "
                          "--extra-cell artifact:l2p_optmt:reuse_medium:reset_after_pin")


def test_kernel_replay_refused_on_the_cli(capsys):
    assert main(["profile", "--dry-run", "--chip", "gh100", "--replay-mode", "kernel"]) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert "kernel replay refused" in line and "--i-know-kernel-replay-erases-l2" in line
    assert main(["profile", "--dry-run", "--chip", "gh100", "--replay-mode", "kernel",
                 "--i-know-kernel-replay-erases-l2", "--no-control"]) == 0
    out = capsys.readouterr().out
    assert "--replay-mode kernel" in out and "warning: kernel replay" in out


def test_cache_flush_refused_on_the_cli(capsys):
    assert main(["profile", "--dry-run", "--chip", "gh100", "--cache-control", "all"]) == 2
    assert "--i-know-cache-control-erases-l2" in _one_error_line(capsys.readouterr().err)


@pytest.mark.parametrize("args, text", [(["--metrics", "l9"], "unknown metric set"),
                                        (["--chip", "gk110"], "unknown chip"),
                                        (["--rungs", "turbo"], "unknown rung"),
                                        (["--profiles", "hot"], "unknown profile"),
                                        (["--calls-per-cell", "0"], "at least 1")])
def test_bad_profile_flags_exit_2(capsys, args, text):
    base = ["profile", "--dry-run", "--chip", "gh100"]
    if "--chip" in args:
        base = ["profile", "--dry-run"]
    assert main(base + args) == 2
    assert text in _one_error_line(capsys.readouterr().err)


def test_timeline_without_nsys_or_ncu_says_so(monkeypatch, capsys):
    monkeypatch.setattr(ptools.Tools, "__post_init__", lambda self: setattr(self, "which", lambda name: None))
    assert main(["profile", "--timeline", "--chip", "gh100"]) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert "no timeline" in line and "ncu is not on PATH" in line


def test_timeline_without_nsys_uses_range_replay(tmp_path):
    """nsys missing: one `call` range replayed whole, with PM sampling and for range totals."""
    from l2attr.schema import PHASES, TIMELINE

    class FakeRangeNcu(FakeNcu):
        def stream(self, argv, echo):
            self.report = FIXTURES / ("range_pmsampling_pin_consume_h200.ncu-rep" if "--section" in argv
                                      else "range_evictlast_pin_consume_h200.ncu-rep")
            return super().stream(argv, echo)

        def run(self, argv, timeout):
            if argv[-1] == "--version" and "nsys" in argv[0]:
                raise OSError("no nsys")
            return super().run(argv, timeout)

    fake = FakeRangeNcu()
    tools = ptools.Tools(stream=fake.stream, run=fake.run, which=lambda n: None if n == "nsys" else f"/usr/bin/{n}",
                       python="/py")
    assert timeline_and_show(_settings(tmp_path, timeline_totals=True), _console(), tools) == 0
    run_dir = next(tmp_path.iterdir())
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["kind"] == "timeline" and manifest["status"] == "done"
    pm, totals = fake.argvs
    for argv in (pm, totals):
        assert argv[argv.index("--replay-mode") + 1] == "app-range"
        assert argv[argv.index("--nvtx-include") + 1] == "regex:l2attr@call:.*/"
        assert "--nvtx-calls" in argv and "--cache-control" in argv
    assert "--pm-sampling-interval" in pm and "--metrics" in totals
    # l2attr's own section (catalog/sampled.py write_section): written in the run, named on the command line,
    # asking for every sampled quantity the reader knows for the chip
    folder = Path(pm[pm.index("--section-folder") + 1])
    assert folder.parent.parent == run_dir and pm[pm.index("--section") + 1] == "L2attrTimeline"
    text = (folder / "L2attrTimeline.section").read_text()
    assert "LTS.TriageCompute.lts__average_t_sector_hit_rate_realtime.pct" in text and "PmSampling" not in pm
    assert pm[pm.index("--pm-sampling-max-passes") + 1] == "1"      # the default: one sampling replay
    phases = pd.read_csv(run_dir / PHASES.filename)
    assert list(phases[phases["phase"].isin(["pin", "gap", "consumer"])]["phase"]) == ["pin", "gap", "consumer"]
    assert len(pd.read_csv(run_dir / TIMELINE.filename)) > 600
    assert "dram__bytes_read.sum" in set(pd.read_csv(run_dir / "range_metrics.csv")["metric"])


# -- a whole run with ncu faked ------------------------------------------------------------------

class FakeNcu:
    """Plays ncu: writes a recorded report where -o points, echoes a few lines."""

    def __init__(self, report: Path = APP_REPORT, fail: str | None = None, rc: int = 0):
        self.report, self.fail, self.rc, self.argvs = report, fail, rc, []

    def stream(self, argv, echo):
        self.argvs.append(list(argv))
        echo("==PROF== Connected to process 1 (python)\n")
        if self.fail:
            echo(self.fail)
            return self.rc
        out = Path(argv[argv.index("-o") + 1] + ".ncu-rep")
        shutil.copy(self.report, out)
        if "--out" in argv:   # the profiled child (a ladder) records its GPU and software in its run dir
            child = Path(argv[argv.index("--out") + 1]) / f"fake-{out.stem}"
            child.mkdir(parents=True, exist_ok=True)
            (child / "manifest.json").write_text(json.dumps({"gpu": {"name": "NVIDIA H200"},
                                                             "versions": {"l2attr": "test"}}))
        echo(f"==PROF== Report: {out}\n")
        return 0

    def run(self, argv, timeout):
        if "--query-metrics" in argv:
            return subprocess.CompletedProcess(argv, 0, (FIXTURES / "query_metrics_gh100_excerpt.txt").read_text(), "")
        if "--version" in argv:
            return subprocess.CompletedProcess(argv, 0, "Version 2025.3.1.0 (build 1)\n", "")
        if argv[0].endswith("nvidia-smi"):
            return subprocess.CompletedProcess(argv, 0, "9.0\n", "")
        raise AssertionError(argv)


def _settings(tmp_path, **kw):
    base = dict(cfg=build_config("small"), out=tmp_path, name="t", calls_per_cell=2,
                rungs=["l2p_optmt"], profiles=["reuse_high"], command="l2attr profile (test)")
    return plan.ProfileSettings(**{**base, **kw})


def _tools(fake):
    return ptools.Tools(stream=fake.stream, run=fake.run, which=lambda n: f"/usr/bin/{n}", python="/py")


def _console():
    from rich.console import Console

    return Console(file=io.StringIO(), width=200)


def test_full_run_writes_metrics_manifest_and_verdict(tmp_path, capsys):
    fake = FakeNcu()
    console = _console()
    # the recorded report holds the tuned family's pin rung on reuse_high, natural and flush_after_pin
    assert profile_and_show(_settings(tmp_path, control_family="tuned"), console, _tools(fake)) == 0
    run_dir = next(tmp_path.iterdir())
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "done" and manifest["kind"] == "profile"
    assert manifest["chip"] == "gh100" and manifest["ncu"]["version"] == "2025.3.1.0"
    assert manifest["replay_mode"] == "application" and manifest["cache_control"] == "none"
    assert manifest["clock_control"] == "none" and manifest["metric_set"] == "l2"
    assert manifest["metric_validation"].startswith("metric names validated")
    jobs = ["sweep"]                  # the control's arms run in the sweep's child
    assert [j["name"] for j in manifest["jobs"]] == jobs
    assert set(manifest["wall_s"]) == set(jobs)
    assert manifest["replayer_passes"]["sweep.ncu-rep"] == {"min": 4, "max": 4, "kernels": 8}
    # the manifest declares the control; its verdict is judged from metrics.csv, never recorded
    assert "validity_control" not in manifest
    assert manifest["control"] == {"rung": "l2p_optmt", "family": "tuned", "profile": "reuse_high",
                                   "l2_states": ["natural", "flush_after_pin", "reset_after_pin"],
                                   "job": "sweep", "after_pin": "the sweep's own cell"}
    vc = run_control(read_run(run_dir))
    assert vc["verdict"] == "clear" and vc["hit_rate_gain_points"] > 90 and vc["dram_read_reduction"] > 0.9
    df = pd.read_csv(run_dir / "metrics.csv")
    assert set(METRICS.columns) <= set(df.columns)
    # natural rows are the sweep's (ladder) and, for the control's cell, its after-pin arm too
    assert set(df["condition"]) == {"ladder", "control_after_pin", "control_after_flush"}
    natural = df[df["l2_state"] == "natural"]
    assert len(natural[natural["condition"] == "ladder"]) == len(natural[natural["condition"] == "control_after_pin"])
    assert set(df[df["l2_state"] == "flush_after_pin"]["condition"]) == {"control_after_flush"}
    # each job's argv went to ncu, in order, reports under RUN_DIR/ncu/
    assert [a[a.index("-o") + 1] for a in fake.argvs] == [str(run_dir / "ncu" / n) for n in jobs]
    text = console.file.getvalue()
    assert "clearly above noise" in text and "l2p_optmt" in text


def test_failed_ncu_run_is_translated_and_recorded(tmp_path):
    perm = ("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU "
            "Performance Counters on the target device 0.\n")
    with pytest.raises(UserError, match="sweep: ncu may not read the GPU performance counters"):
        profile_and_show(_settings(tmp_path), _console(), _tools(FakeNcu(fail=perm, rc=1)))
    manifest = json.loads((next(tmp_path.iterdir()) / "manifest.json").read_text())
    assert manifest["status"] == "failed" and "ERR_NVGPUCTRPERM" in manifest["error"]


def test_no_kernels_profiled_is_an_error_even_with_exit_0(tmp_path):
    with pytest.raises(UserError, match="NVTX filter matched no range"):
        profile_and_show(_settings(tmp_path), _console(),
                         _tools(FakeNcu(fail="==WARNING== No kernels were profiled.\n", rc=0)))


def test_unknown_raw_metric_is_caught_before_running(tmp_path):
    fake = FakeNcu()
    with pytest.raises(UserError, match="lts__bogus.sum"):
        profile_and_show(_settings(tmp_path, metrics="l2,lts__bogus.sum"), _console(), _tools(fake))
    assert fake.argvs == [] and list(tmp_path.iterdir()) == []


def test_chip_detection():
    fake = FakeNcu()
    assert ptools.detect_chip(fake.run, lambda n: "/usr/bin/nvidia-smi") == "gh100"
    sm86 = lambda argv, t: subprocess.CompletedProcess(argv, 0, "8.6\n", "")  # noqa: E731
    with pytest.raises(UserError, match="8.6"):
        ptools.detect_chip(sm86, lambda n: "/usr/bin/nvidia-smi")
    with pytest.raises(UserError, match="--chip"):
        ptools.detect_chip(fake.run, lambda n: None)


def test_validity_rule_on_synthetic_arms():
    from l2attr.analysis.control import describe_control, validity_control

    def rows(cond, hits, dram):
        return [{"role": "consumer", "condition": cond, "table": t, "batch": 0, "launch": t, "metric": m, "value": v}
                for t, (h, d) in enumerate(zip(hits, dram))
                for m, v in (("lts__t_sectors_op_read_lookup_hit.sum", h * 10),
                             ("lts__t_sectors_op_read_lookup_miss.sum", (100 - h) * 10),
                             ("dram__bytes_read.sum", d))]
    clear = pd.DataFrame(rows("control_after_pin", [49.0, 49.5], [37.5e6, 37.6e6])
                         + rows("control_after_flush", [33.5, 33.9], [58.9e6, 58.8e6]))
    assert validity_control(clear)["verdict"] == "clear"
    # kernel replay on the H200: 35.55 % vs 35.53 %, same DRAM bytes
    erased = pd.DataFrame(rows("control_after_pin", [35.53], [57.5e6]) + rows("control_after_flush", [35.55], [57.6e6]))
    vc = validity_control(erased)
    assert vc["verdict"] == "not_clear"
    assert "NOT clearly above noise" in describe_control(vc)
    overlap = pd.DataFrame(rows("control_after_pin", [30.0, 60.0], [30e6, 30e6])
                           + rows("control_after_flush", [35.0, 36.0], [60e6, 60e6]))
    assert validity_control(overlap)["verdict"] == "not_clear"
    assert validity_control(clear[clear["condition"] == "control_after_pin"])["verdict"] == "inconclusive"


def test_control_on_the_recorded_evict_last_reports():
    """Three arms recorded on the H200: the reset keeps the lines (DRAM like after the pin), the
    flush removes them; the consumer's evict-last lookup counters read 0 in every arm."""
    from l2attr.analysis.calls import call_table
    from l2attr.analysis.control import validity_control

    arms = {"natural": "control_after_pin", "reset_after_pin": "control_after_reset",
            "flush_after_pin": "control_after_flush"}
    frames = [read_report(FIXTURES / f"evict_{state}.ncu-rep", condition=cond).table for state, cond in arms.items()]
    metrics = pd.concat(frames, ignore_index=True)
    # these reports hold all-operation lookups, not the read counts the headline rate needs:
    # no verdict from a substitute rate
    vc = validity_control(metrics)
    assert vc["verdict"] == "inconclusive" and "missing" in vc["reason"]
    calls = call_table(metrics)
    cons = calls[calls["role"] == "consumer"].groupby("condition")
    dram = cons["dram_read"].median()
    assert dram["control_after_pin"] < 10e6 and dram["control_after_reset"] < 10e6 < 25e6 < dram["control_after_flush"]
    assert (cons["evict_last_lookup_hit"].max() == 0).all()
    pins = calls[calls["role"] == "pin"]
    assert (pins["evict_last"] > 2.8e6).all()


def test_plan_child_command_flags(tmp_path):
    jobs = plan.plan_jobs(tmp_path, build_config("small"), ["baseline"], ["random", "reuse_low"], 2,
                          extra=["--seed=3"], python="/py")
    assert [j.name for j in jobs] == ["sweep"]
    child = list(jobs[0].child)
    assert child[:4] == ["/py", "-m", "l2attr", "ladder"]
    for flag, value in (("--rungs", "baseline"), ("--profiles", "random,reuse_low"), ("--l2", "natural"),
                        ("--repeats", "1"), ("--spin-us", "0"), ("--nvtx-last", "2"),
                        ("--out", str(tmp_path / "child")),
                        ("--name", "sweep"), ("--hot-rows", "10000")):
        assert child[child.index(flag) + 1] == value, flag
    # the workload's batches are overridden after the config's own flags (argparse: last wins)
    assert child[len(child) - child[::-1].index("--batches")] == "1"
    assert "--seed=3" in child and "--no-host-repeat" in child
    # the sweep has no pin rung: all three arms of the control (hottest profile, headline family)
    # are extra cells of its child
    cells = [child[i + 1] for i, a in enumerate(child) if a == "--extra-cell"]
    assert cells == [f"artifact:l2p_optmt:reuse_low:{s}" for s in ("natural", "flush_after_pin", "reset_after_pin")]
    assert plan.hottest_profile(["random", "reuse_high"]) == "reuse_high"
    assert [j.condition for j in plan.plan_jobs(tmp_path, build_config("small"), ["optmt"], ["random"], 1,
                                                control=False)] == ["ladder"]


def test_job_conditions_label_control_rows_by_l2_state():
    job = plan.NcuJob("control_after_flush", "control", ("x",), Path("/r/ncu/c"))
    assert plan.job_condition(job) is control_condition
    assert plan.job_condition(plan.NcuJob("sweep", "ladder", ("x",), Path("/r/s"))) == "ladder"


def test_settings_default_options_keep_l2():
    s = plan.ProfileSettings(cfg=build_config("small"))
    assert s.opts == NcuOptions() and s.rungs == plan.DEFAULT_RUNGS and "torch" not in s.rungs


# -- nsys ----------------------------------------------------------------------------------------

def _nsys_sqlite(path: Path) -> Path:
    """A hand-made export following NVIDIA's documented schema (times in ns)."""
    con = sqlite3.connect(path)
    con.executescript("""
        CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INT NOT NULL, end INT NOT NULL, deviceId INT,
            contextId INT, streamId INT, correlationId INT, globalPid INT, demangledName INT, shortName INT);
        CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INT NOT NULL, end INT NOT NULL, eventClass INT,
            globalTid INT, correlationId INT, nameId INT, returnValue INT);
        CREATE TABLE NVTX_EVENTS (start INT NOT NULL, end INT, eventType INT NOT NULL, rangeId INT,
            category INT, color INT, text TEXT, globalTid INT, endGlobalTid INT, textId INT, domainId INT);
    """)
    con.executemany("INSERT INTO StringIds VALUES (?, ?)",
                    [(1, "pin_kernel"), (2, "bag_kernel"), (3, "l2attr:consumer:l2p_optmt:reuse_high:natural:t0:b0"),
                     (4, "cudaLaunchKernel")])
    tid = 77
    # NVTX push/pop ranges on the CPU thread (one via text, one via textId), plus a foreign outer range
    con.executemany("INSERT INTO NVTX_EVENTS VALUES (?, ?, 59, 0, 0, 0, ?, ?, ?, ?, 0)", [
        (0, 100_000, "bench", tid, tid, None),
        (1_000, 2_000, "l2attr:pin:l2p_optmt:reuse_high:natural:t0:b0", tid, tid, None),
        (3_000, 4_000, None, tid, tid, 3),
    ])
    con.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, 0, ?, ?, 4, 0)",
                    [(1_100, 1_200, tid, 10), (3_100, 3_200, tid, 11), (90_000, 90_100, tid, 12)])
    # GPU: pin 10-26 us, consumer 30-75 us (gap 4 us), one kernel outside l2attr ranges
    con.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?, ?, 0, 1, 7, ?, 1, ?, ?)",
                    [(10_000, 26_000, 10, 1, 1), (30_000, 75_000, 11, 2, 2), (95_000, 96_000, 12, 2, 2)])
    con.commit()
    con.close()
    return path


def test_timeline_extraction_from_sqlite(tmp_path):
    calls = read_timeline(_nsys_sqlite(tmp_path / "t.sqlite"))
    assert len(calls) == 1
    row = calls.iloc[0]
    assert (row["rung"], row["profile"], row["l2_state"], row["table"], row["batch"]) == \
        ("l2p_optmt", "reuse_high", "natural", 0, 0)
    assert row["pin_us"] == 16.0 and row["consumer_us"] == 45.0 and row["gap_us"] == 4.0


def test_import_sqlite_on_the_cli(tmp_path, capsys):
    assert main(["profile", "--import", str(_nsys_sqlite(tmp_path / "t.sqlite")), "--csv"]) == 0
    df = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert df[["pin_us", "gap_us", "consumer_us"]].values.tolist() == [[16.0, 4.0, 45.0]]


def test_sqlite_without_kernel_tables_is_a_user_error(tmp_path):
    f = tmp_path / "x.sqlite"
    sqlite3.connect(f).execute("CREATE TABLE foo (a INT)").connection.close()
    with pytest.raises(UserError, match="missing tables"):
        read_timeline(f)
    (tmp_path / "y.sqlite").write_text("not sqlite at all, definitely not" * 10)
    with pytest.raises(UserError, match="not an SQLite database"):
        read_timeline(tmp_path / "y.sqlite")


def test_nsys_probe_and_message():
    assert probe_nsys(which=lambda n: None) == NsysStatus(False, None, None, "nsys is not on PATH")

    def runner(argv, timeout):
        if argv[1] == "--version":
            return subprocess.CompletedProcess(argv, 0, "NVIDIA Nsight Systems version 2025.3\n", "")
        Path(argv[argv.index("-o") + 1] + ".qdstrm").write_text("x")
        return subprocess.CompletedProcess(argv, 1, "", "Importer error: cannot create report\n")
    status = probe_nsys(runner=runner, which=lambda n: "/opt/nsys")
    assert not status.usable and ".qdstrm" in status.detail and status.version.startswith("NVIDIA")
    msg = timeline_unavailable(status)
    assert "l2attr ladder" in msg and "CUDA events" in msg

    def working(argv, timeout):
        if argv[1] == "profile":
            Path(argv[argv.index("-o") + 1] + ".nsys-rep").write_text("x")
        return subprocess.CompletedProcess(argv, 0, "ok\n", "")
    assert probe_nsys(runner=working, which=lambda n: "/opt/nsys").usable


def test_timeline_run_with_a_working_nsys(tmp_path):
    sqlite_src = _nsys_sqlite(tmp_path / "src.sqlite")

    def run(argv, timeout):
        if argv[1] == "profile":
            Path(argv[argv.index("-o") + 1] + ".nsys-rep").write_text("x")
        return subprocess.CompletedProcess(argv, 0, "NVIDIA Nsight Systems version 2025.3\n", "")

    seen = []

    def stream(argv, echo):
        seen.append(argv[1])
        if argv[1] == "export":
            shutil.copy(sqlite_src, argv[argv.index("-o") + 1])
        return 0

    out = tmp_path / "runs"
    tools = ptools.Tools(stream=stream, run=run, which=lambda n: "/opt/nsys", python="/py")
    assert timeline_and_show(_settings(out), _console(), tools) == 0
    run_dir = next(out.iterdir())
    assert seen == ["profile", "export"]
    calls = pd.read_csv(run_dir / "timeline_nsys.csv")
    assert calls[["pin_us", "gap_us", "consumer_us"]].values.tolist() == [[16.0, 4.0, 45.0]]
    assert json.loads((run_dir / "manifest.json").read_text())["status"] == "done"


def test_the_command_line_and_the_settings_share_the_sampling_default():
    """`l2attr profile` and a ProfileSettings made in Python ask ncu for the same sampling replays."""
    from l2attr.cli import build_parser
    from l2attr.dlrm.profile.plan import ProfileSettings

    assert build_parser().parse_args(["profile"]).pm_max_passes == ProfileSettings.pm_max_passes == 1
