"""l2attr's own PM-sampling section: exactly the quantities the timeline reads, for chips it knows."""

from __future__ import annotations

import re

import pytest

from l2attr.catalog.sampled import SampledQuantity, load_quantities
from l2attr.errors import UserError
from l2attr.catalog import sampled as pm_section
from l2attr.profile.pmsampling import timeline_ncu_argv


def _names_in(text: str) -> list[str]:
    return re.findall(r'\bName: "([^"]+)"', text)


def test_the_section_asks_for_every_sampled_quantity_the_reader_knows_and_nothing_else():
    quantities = load_quantities()
    text = pm_section.section_text("gh100", pm_section.sampled_names("gh100"))
    sampled = [n for n in _names_in(text) if n not in pm_section.RANGE_METRICS + pm_section.HEADER_METRICS]
    assert sampled == [n for q in quantities for n in q.candidates["gh100"]]
    assert text.count('Groups: "l2attr_sampling"') == len(sampled)            # one sampling group
    assert "profiler__pmsampler_interval_time" in text
    # no range metric: ncu's range duration cost one more replay of the whole child
    assert "gpu__time_duration" not in text and "\nMetrics {" not in text
    assert "MinArch: CC_90 MaxArch: CC_90" in text and text.count("{") == text.count("}")


def test_candidates_of_a_quantity_all_go_in_once_each():
    q = SampledQuantity("x", "X", "%", "", {"gh100": ("A.b__c.pct", "A.b__d.pct")})
    r = SampledQuantity("y", "Y", "%", "", {"gh100": ("A.b__c.pct",), "ga100": ("Z.z__z.pct",)})
    assert pm_section.sampled_names("gh100", [q, r]) == ["A.b__c.pct", "A.b__d.pct"]
    assert pm_section.sampled_names("ga100", [q, r]) == ["Z.z__z.pct"]


def test_write_section_falls_back_to_ncus_section_where_it_knows_no_architecture(tmp_path):
    assert pm_section.write_section(tmp_path / "s", "gh100") == pm_section.IDENTIFIER
    assert (tmp_path / "s" / f"{pm_section.IDENTIFIER}.section").is_file()
    assert pm_section.write_section(tmp_path / "t", "ga100") is None and not (tmp_path / "t").exists()


def test_timeline_argv_names_the_folder_the_section_and_the_passes(tmp_path):
    argv = timeline_ncu_argv(["python", "-c", "pass"], tmp_path / "timeline", "ncu", "regex:l2attr@call:.*/",
                             section="L2attrTimeline", section_folder=tmp_path / "s", max_passes=1)
    assert argv[argv.index("--section-folder") + 1] == str(tmp_path / "s")
    assert argv[argv.index("--section") + 1] == "L2attrTimeline"
    assert argv[argv.index("--pm-sampling-max-passes") + 1] == "1"
    stock = timeline_ncu_argv(["python"], tmp_path / "timeline", "ncu", "regex:l2attr@call:.*/")
    assert "PmSampling" in stock and "--section-folder" not in stock and "--pm-sampling-max-passes" not in stock
    with pytest.raises(UserError, match="max passes"):
        timeline_ncu_argv(["python"], tmp_path / "timeline", "ncu", "regex:l2attr@call:.*/", max_passes=-1)
