"""`l2attr report` on sweep run dirs: alone, in a folder with ladder runs, damaged."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers_rundirs import write_ladder_run
from helpers_sweep import write_sweep_run

from l2attr.cli import main
from l2attr.sweep.table import SWEEP_POINTS

AXES = ("amortisation", "hotset", "window", "occupy", "pollution")


@pytest.fixture(scope="module")
def sweeps(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("sweeps")
    for axis in AXES:
        write_sweep_run(root, axis, hot_rows=[0, 5, 10])
    return root


def test_a_folder_of_sweeps_renders_one_chapter_each(sweeps: Path, tmp_path: Path, capsys):
    out = tmp_path / "s.html"
    assert main(["report", str(sweeps), "-o", str(out)]) == 0
    html = out.read_text()
    for title in ("consumer calls per pin", "hot-set size", "access-policy window", "l2 held by evict_last lines",
                  "pollution between pin and consumer"):
        assert title in html.lower()
    assert html.count('class="card"') == 5
    assert 'id="fig-sweep-0-artifact"' in html and "measured 4, formula 3" in html
    md = tmp_path / "s.md"
    assert main(["report", str(sweeps), "-o", str(md)]) == 0
    text = md.read_text()
    # kernel: pays from k = 4; wall: equal to OptMT at k = 4 (within noise), faster from 8 (helpers_sweep)
    assert "| artifact | reuse_high | interleaved | 4 | 8 (within noise from 4) | 3 |" in text
    assert text.count("**Reading.**") == 5
    assert "0.0 % of the" in text and "spin had run out" in text      # the fake's launches never lag


def test_ladder_and_sweep_runs_share_one_page(sweeps: Path, tmp_path: Path, capsys):
    """The fake sweeps are another workload on another GPU than the ladder: refused as one study,
    shown as a comparison with --allow-mixed (said at the top)."""
    ladder = write_ladder_run(tmp_path)
    out = tmp_path / "both.html"
    assert main(["report", str(ladder), *map(str, sorted(sweeps.iterdir())), "-o", str(out)]) == 2
    assert "differ in workload or GPU" in capsys.readouterr().err and not out.exists()
    assert main(["report", str(ladder), *map(str, sorted(sweeps.iterdir())), "-o", str(out), "--allow-mixed"]) == 0
    html = out.read_text()
    top = html[:html.index('id="verdict')]
    assert "gpu.name: &#39;NVIDIA H200&#39; vs &#39;Fake GPU&#39;" in top and "Read this first" in top
    assert 'id="verdict' in html and 'id="sweep-4"' in html
    assert html.index('id="sweep-0"') < html.index('id="caveats"')
    assert 'href="#sweep-0"' in html
    md = tmp_path / "both.md"
    assert main(["report", str(ladder), str(sweeps), "-o", str(md), "--allow-mixed"]) == 0
    assert "## Sweep: pollution between pin and consumer" in md.read_text()


def test_a_sweep_without_points_is_one_line(tmp_path: Path, capsys):
    run = write_sweep_run(tmp_path, "pollution", pollution_mib=[0.0, 30.0])
    (run / SWEEP_POINTS.filename).unlink()
    assert main(["report", str(run), "-o", str(tmp_path / "x.html")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "a sweep run without sweep_points.csv" in err
    assert not (tmp_path / "x.html").exists()


def test_a_cut_points_file_is_refused_or_read_in_part(tmp_path: Path, capsys):
    run = write_sweep_run(tmp_path, "occupy", occupy_mib=[0.0, 20.0])
    f = run / SWEEP_POINTS.filename
    f.write_bytes(f.read_bytes()[:-7])
    assert main(["report", str(run), "-o", str(tmp_path / "x.md")]) == 2
    assert "the last row is cut off" in capsys.readouterr().err
    assert main(["report", str(run), "--allow-partial", "-o", str(tmp_path / "x.md")]) == 0
    assert "partial data" in capsys.readouterr().err


def test_report_never_writes_over_a_sweep_file(tmp_path: Path, capsys):
    run = write_sweep_run(tmp_path, "hotset", hot_rows=[0, 5])
    before = (run / SWEEP_POINTS.filename).read_bytes()
    assert main(["report", str(run), "-o", str(run / SWEEP_POINTS.filename), "--format", "md"]) == 2
    assert (run / SWEEP_POINTS.filename).read_bytes() == before
