"""The Markdown summary: verdict and ladder tables that paste into an issue."""

from __future__ import annotations

from pathlib import Path

from helpers_rundirs import write_ladder_run, write_profile_run

from l2attr.study import analyse, load_runs
from l2attr.report.markdown import render_markdown


def test_verdict_and_ladder_tables(tmp_path: Path) -> None:
    md = render_markdown(analyse(load_runs([write_ladder_run(tmp_path), write_profile_run(tmp_path)])))
    lines = md.splitlines()
    series = "artifact kernels, element pin · the headline"
    assert f"**Verdict — {series}**" in lines and f"**Latency ladder — {series}**" in lines
    # reuse_medium by hand (helpers_rundirs.TIMINGS): kernels 54.6 / (16.2 + 44.5) = 0.90x; the pin step's
    # launch + sync is PIN_SYNC_US = 8 µs (wall - artifact's timer of L2P+OptMT minus OptMT's), so
    # 54.6 / (16.2 + 8 + 44.5) = 0.79x; wall 0.83x, 1.19x artifact's timer (63.6 / 53.5), 1.23x consumer
    # kernel; vs OptMT 46.7 / 44.5 = 1.05x, 46.7 / 60.7 = 0.77x, 46.7 / 68.7 = 0.68x; break-even
    # 16.2 / 2.2 = 7.4 -> 8 calls on the kernel, (16.2 + 8) / 2.2 = 11.0 -> 11 on the pin step
    row = next(line for line in lines if line.startswith("| reuse_medium | 0.90×"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[:10] == ["reuse_medium", "0.90×", "0.79×", "0.83×", "1.19×", "1.23×", "1.05×", "0.77×", "0.68×",
                          "8.0 µs"]
    assert cells[12:14] == ["8 calls", "11 calls"]
    assert ("- reuse_medium (artifact kernels, element pin): L2P+OptMT vs baseline: 0.90× with the pin kernel "
            "charged (slower), 0.79× with the pin step's host launch + sync charged too (slower), 0.83× for the "
            "whole call on the host clock (slower); pin not charged: 1.19× as the artifact timed it (faster), "
            "1.23× on consumer kernel time (faster); the pin alone") in md
    assert any(line.startswith("| random | RPF+L2P+OptMT |") for line in lines)
    # tables are well-formed: same number of columns in every row of each table
    for block in md.split("\n\n"):
        rows = [b for b in block.splitlines() if b.startswith("|")]
        assert len({r.count("|") - r.count("\\|") for r in rows}) <= 1


def test_profile_only_says_not_measured(tmp_path: Path) -> None:
    md = render_markdown(analyse(load_runs([write_profile_run(tmp_path)])))
    assert "_Latency ladder: not measured (no ladder run)._" in md
    assert "| reuse_medium |" in md          # the verdict still has the hit-rate gain


def test_failed_validity_is_a_warning_line(tmp_path: Path) -> None:
    md = render_markdown(analyse(load_runs([write_profile_run(tmp_path, control="not_clear")])))
    assert "> **Warning:** The validity control failed" in md


def test_the_kernel_timer_definition_names_the_runs_own_timer(tmp_path) -> None:
    """The definitions line says how the runs' kernel timer kept launch lag out, from their
    manifests: the blocking start, a spin of the recorded length, or both when runs differ."""
    import json

    from l2attr.study import analyse, load_runs
    from l2attr.report.markdown import kernel_timer_words
    from helpers_rundirs import write_ladder_run

    blocking = write_ladder_run(tmp_path / "a")
    manifest = json.loads((blocking / "manifest.json").read_text())
    manifest["measure"]["timer"] = "blocking"
    (blocking / "manifest.json").write_text(json.dumps(manifest))
    an = analyse(load_runs([blocking]))
    assert kernel_timer_words(an) == "a blocking start"
    assert "(CUDA events, a blocking start)" in render_markdown(an)
    spin = write_ladder_run(tmp_path / "b", "20261129T210000Z-ladder")
    manifest = json.loads((spin / "manifest.json").read_text())
    manifest["measure"].update(timer="spin", spin_us=50.0)
    (spin / "manifest.json").write_text(json.dumps(manifest))
    assert kernel_timer_words(analyse(load_runs([spin]))) == "a 50 µs spin head start"
    assert kernel_timer_words(analyse(load_runs([blocking, spin]))) == "a blocking start or a 50 µs spin head start"
