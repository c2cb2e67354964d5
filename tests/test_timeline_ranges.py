"""A timeline manifest's `ranges` are typed (issue 52: a string, list, NaN, negative, true or 1e400
in span_us, duration_us, interval_ns or instances crashed the HTML report or printed "nan µs",
"-5 µs", "inf µs"; `ranges: []` passed): each is refused in one line naming the field."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from l2attr.cli import main
from l2attr.errors import UserError
from l2attr.integrity.manifest import check_manifest

ROOT = Path(__file__).resolve().parents[1]
RUN = ROOT / "examples" / "20261130T231829Z-timeline"
BAD: dict[str, Any] = {"string": "5", "list": [5], "nan": float("nan"), "negative": -5, "true": True, "huge": 1e400}


def manifest() -> dict[str, Any]:
    return json.loads((RUN / "manifest.json").read_text())


def test_the_committed_timeline_passes() -> None:
    check_manifest(manifest(), RUN)


@pytest.mark.parametrize("field", ["span_us", "duration_us", "interval_ns", "instances", "untimed"])
@pytest.mark.parametrize("what", sorted(BAD))
def test_a_damaged_range_number_is_refused_naming_it(field: str, what: str) -> None:
    m = manifest()
    m["ranges"][0][field] = BAD[what]
    with pytest.raises(UserError, match=rf"ranges\[0\]\.{field} must be"):
        check_manifest(m, RUN)


@pytest.mark.parametrize("ranges", [[], {}, ["x"], None])
def test_no_ranges_is_refused(ranges: Any) -> None:
    m = manifest()
    m["ranges"] = ranges
    with pytest.raises(UserError, match="ranges"):
        check_manifest(m, RUN)


def test_a_fractional_count_is_refused_a_whole_float_is_not() -> None:
    m = manifest()
    m["ranges"][0]["pass_groups"] = 1.0
    check_manifest(m, RUN)
    m["ranges"][0]["instances"] = 1119.5
    with pytest.raises(UserError, match=r"ranges\[0\]\.instances must be a whole number"):
        check_manifest(m, RUN)


@pytest.mark.parametrize("what", ["nan", "negative", "huge", "string"])
def test_the_html_report_of_a_damaged_range_is_one_line(tmp_path: Path, what: str,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / RUN.name
    shutil.copytree(RUN, run)
    m = manifest()
    m["ranges"][0]["duration_us"] = BAD[what]
    (run / "manifest.json").write_text(json.dumps(m).replace("Infinity", "1e400"))
    assert main(["report", str(run), "-o", str(tmp_path / "r.html")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "ranges[0].duration_us" in err and "Traceback" not in err
    assert not (tmp_path / "r.html").exists()


@pytest.mark.parametrize("what", sorted(BAD))
def test_allow_partial_never_prints_a_damaged_range_number(tmp_path: Path, what: str,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """--allow-partial reads past the damage (said as a warning) and the page leaves the value out:
    no traceback, no "-5 µs", "nan µs" or "inf µs"."""
    run = tmp_path / RUN.name
    shutil.copytree(RUN, run)
    m = manifest()
    for field in ("duration_us", "interval_ns", "instances", "untimed"):
        m["ranges"][0][field] = BAD[what]
    (run / "manifest.json").write_text(json.dumps(m).replace("Infinity", "1e400"))
    out = tmp_path / "r.html"
    assert main(["report", str(run), "--allow-partial", "-o", str(out)]) == 0
    err, page = capsys.readouterr().err, out.read_text()
    assert "Traceback" not in err and "ranges[0].duration_us" in err
    assert "no duration recorded, PM sampling at an interval not recorded" in page
    assert not any(f"{x} µs (ncu" in page for x in ("-5", "nan", "inf", "5"))
