"""tools/capacity_ncu_check.py reads ncu's raw CSV page: header, units row, rows, program output around."""

from __future__ import annotations

import importlib.util
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("capacity_ncu_check", REPO / "tools" / "capacity_ncu_check.py")
tool = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tool)

SAMPLE = '''==PROF== Connected to process 123 (/usr/bin/python3.12)
probe evict_last 20 MiB
==PROF== Disconnected from process 123
"ID","Process ID","Kernel Name","dram__bytes_read.sum","gpu__time_duration.sum","lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum","lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum"
"","","","byte","nsecond","sector","sector"
"0","123","flush_l2","1,048,576","12000","600000","55360"
"1","123","flush_l2","20971520","15000","0","655360"
'''


def test_rows_after_the_header_with_units_skipped():
    rows = tool.parse_raw_csv(SAMPLE)
    assert [r["dram__bytes_read.sum"] for r in rows] == ["1,048,576", "20971520"]
    assert rows[0]["Kernel Name"] == "flush_l2"


def test_no_header_no_rows():
    assert tool.parse_raw_csv("==PROF== nothing profiled\n") == []
