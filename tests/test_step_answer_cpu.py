"""The step's answer on data whose answer is known by hand (issue 36): the write-back-matched saving
over each named denominator, the split by what was reused, a kernel outside its bracket flagged, the
bracket as the answer where no write-back was read; and the pieces the GPU path stands on (the
write-back reading, its grain, three captures' launches compared)."""

from __future__ import annotations

import struct

import pandas as pd
import pytest

from l2attr.steps.analyse.answer import answer
from l2attr.steps.analyse.reading import grid_rows, grid_sentence
from l2attr.steps.measure.flushes import WRITE_BACK_GRAIN, grain
from l2attr.steps.measure.pointers import VALUE_LIMIT, host_spans, launch_difference, moves_by_one_step, touched
from l2attr.steps.measure.surgery_run import write_back_bytes

# two kernel nodes, per arm: (node 0, node 1) durations in µs; every repeat the same plus a tiny ramp
ARMS = {"natural": (10.0, 20.0), "cold": (12.0, 22.0), "cold_matched": (13.0, 24.0),
        "cold_dirty": (15.0, 27.0), "cold_start": (12.5, 20.0)}
REPEATS = 8


def _kernels(arms=ARMS, repeats=REPEATS) -> pd.DataFrame:
    rows = []
    for cond, durs in arms.items():
        for i in range(repeats):
            for node, d in enumerate(durs):
                rows.append({"condition": cond, "step": i, "op_index": -2, "kernel_index": node, "node": node,
                             "kernel": f"k{node}", "duration_us": d + 0.001 * i, "start_us": 1000.0 * i + 100 * node,
                             "stream": 7})
    return pd.DataFrame(rows)


OPS = pd.DataFrame(columns=["op_index", "op", "module", "flushed_in_cold", "inputs", "outputs", "view"])
# two untraced timings per repeat, as steps/measure/timing.py writes them (the reader holds step_times.csv to it)
TIMES = pd.DataFrame({"repeat": range(2 * REPEATS), "step_us": [40.0] * (2 * REPEATS), "discard": [""] * (2 * REPEATS)})
MANIFEST = {"surgery": {"eager_us": [100.0] * REPEATS, "control_us": [0.5] * REPEATS}}


def test_the_matched_saving_over_every_named_denominator():
    a = answer(_kernels(), OPS, TIMES, every_kernel=True, manifest=MANIFEST)
    # matched - natural: (13 - 10) + (24 - 20) = 7 µs over 30 µs of kernels, a 40 µs replay, a 100 µs eager step
    assert a.matched.saving.median == pytest.approx(7.0, abs=0.01)
    assert a.matched.share.median == pytest.approx(7.0 / 30.0, abs=1e-3)
    assert a.replay.share.median == pytest.approx(7.0 / 40.0, abs=1e-3)
    assert a.eager.share.median == pytest.approx(7.0 / 100.0, abs=1e-3)
    assert a.primary is a.eager and a.judgement == "faster"
    head = a.headline("two")
    assert head.startswith("two: inter-kernel L2 reuse is worth 7.00 % of the eager step")
    assert "write-back-matched cold arm" in head and "clean +13.33 %" in head and "dirty +39.9" in head


def test_the_split_by_what_was_reused():
    a = answer(_kernels(), OPS, TIMES, every_kernel=True, manifest=MANIFEST)
    p = a.parts
    assert p.before.median == pytest.approx(2.5, abs=0.01)          # start arm: node 0 lost its pre-step data
    assert p.within.median == pytest.approx(4.5, abs=0.01)          # 7 - 2.5
    assert p.nondata.median == pytest.approx(0.5, abs=1e-9)         # (2 kernels - 1 flush) x 0.5 µs control
    assert p.activations.median == pytest.approx(4.0, abs=0.01)
    assert a.activations.share.median == pytest.approx(4.0 / 100.0, abs=1e-3)
    assert "above the study's 0.65 %" in a.headline("two")


def test_a_kernel_outside_its_bracket_is_flagged_never_hidden():
    arms = {**ARMS, "cold_matched": (9.0, 24.0)}         # node 0 matched faster than clean-cold
    a = answer(_kernels(arms), OPS, TIMES, every_kernel=True, manifest=MANIFEST)
    assert a.kernels.set_index("node")["out_of_bracket"].to_dict() == {0: True, 1: False}
    assert "1 kernel(s) read outside their bracket" in a.headline("two")


def test_without_a_write_back_reading_the_bracket_is_the_answer_and_says_why():
    arms = {k: v for k, v in ARMS.items() if k != "cold_matched"}
    m = {"surgery": {**MANIFEST["surgery"], "write_back_missing": "no write-back reading was given"}}
    a = answer(_kernels(arms), OPS, TIMES, every_kernel=True, manifest=m)
    assert a.matched is None and a.parts is None and a.primary is None
    assert "no write-back-matched arm (no write-back reading was given)" in a.headline("two")


def test_the_write_back_reading_and_its_grain():
    from l2attr.steps.declare import node_bytes

    ncu = node_bytes(pd.DataFrame({"node": [0, 1], "write_none_b": [5e6, 1e3], "write_all_b": [1e6, 2e3]}))
    got, why = write_back_bytes(ncu, 2)
    assert got == {0: 4e6, 1: 0.0} and why == ""
    assert write_back_bytes(ncu, 3)[1].startswith("the write-back reading covers 2 kernel nodes")
    assert write_back_bytes(None, 2)[0] == {} and write_back_bytes(0.0, 3)[0] == {0: 0.0, 1: 0.0, 2: 0.0}
    l2 = 60 << 20
    assert grain(0, l2) == 0 and grain(31_000, l2) == 0 and grain(40_000, l2) == WRITE_BACK_GRAIN
    assert grain(1e12, l2) == l2 and grain(float("nan"), l2) == 0


def test_captures_may_differ_in_pointers_only():
    spans = [(0x1000, 0x1000), (0x9000, 0x1000), (0xA000, 0x1000)]
    ptr = lambda p: p.to_bytes(8, "little")                        # noqa: E731
    four = lambda v: v.to_bytes(4, "little")                       # noqa: E731
    dims = (4, 1, 1, 128, 1, 1, 0)
    a, b, c = ((dims, [ptr(p), four(7)]) for p in (0x1010, 0x9020, 0xA020))
    assert launch_difference([a, b, c], spans) == ("", 0)          # each capture's own pool: fine
    grown = [(dims, [ptr(p), four(n)]) for p, n in ((0x1010, 7), (0x9020, 8), (0xA020, 9))]
    why, _ = launch_difference(grown, spans)
    assert why == "argument 1 moves by one step per call (read as integer): 7, 8, 9"
    wider = ((5, 1, 1, 128, 1, 1, 0), a[1])
    assert "launch dimensions" in launch_difference([a, b, wider], spans)[0]
    assert launch_difference([a, b, (dims, [ptr(0xA020)])], spans)[0] == "argument sizes differ"
    counts = [(dims, [ptr(n), four(7)]) for n in (17, 18, 19)]     # a count, not a pointer: refused
    assert launch_difference(counts, spans)[0].startswith("argument 0 (bytes 0-3) moves by one step")


def test_values_that_move_at_random_are_counted_not_refused():
    """The H100's records (examples/logs/answer/): torch's reduce kernel argument held 6 against 0 at
    one word, 3395512506 against 1244895801 at another, and at a third a double that grew by 1.165e7
    a call (both halves of its word move); a one-byte argument held 0xe0 against 0xf0. None is a
    count; only the value that continues 6 -> 0 by one step would be."""
    dims = (4, 1, 1, 128, 1, 1, 0)
    arg = lambda *ws: b"".join(w.to_bytes(8, "little") for w in ws)     # noqa: E731
    dbl = lambda v: int.from_bytes(struct.pack("<d", v), "little")      # noqa: E731
    caps = [(dims, [arg(1, 6, 3395512506, dbl(2.61313e9)), b"\xe0"]),
            (dims, [arg(1, 0, 1244895801, dbl(2.62478e9)), b"\xf0"]),
            (dims, [arg(1, 0, 1244895801, dbl(2.63643e9)), b"\x00"])]
    assert launch_difference(caps, []) == ("", 5)      # 6/0, 3395512506/1244895801, both halves of the double, the byte
    on = [(dims, [b"\xd0"]), (dims, [b"\xe0"]), (dims, [b"\xf0"])]    # a byte by one step: a flag, no count
    assert launch_difference(on, []) == ("", 1)
    back = [(dims, [arg(6)]), (dims, [arg(0)]), (dims, [(-6 & 0xFFFF_FFFF).to_bytes(4, "little") + bytes(4)])]
    assert "read as integer): 6, 0, -6" in launch_difference(back, [])[0]


def test_values_that_move_by_a_fixed_step_but_are_no_small_whole_numbers_are_not_counts():
    """The fourth H100 run: a heap address at a 4-byte offset (bytes 604-607: 1063302904, +5688 a
    call), a packed value (1543504345, +24 a call) and a bit pattern that reads as a float32
    (0x87200021, 0x87400016, 0x8760000b: -1.2e-34 by -2.4e-35) all moved by a fixed step. None is a
    whole number of at most VALUE_LIMIT; a count of that size beside them is."""
    dims = (4, 1, 1, 128, 1, 1, 0)
    four = lambda *vs: b"".join(v.to_bytes(4, "little") for v in vs)    # noqa: E731
    rows = [(7, 1063302904 + k * 5688, 0, 1543504345 + k * 24, 0, (0x87200021, 0x87400016, 0x8760000b)[k], 0)
            for k in range(3)]
    caps = [(dims, [four(*r)]) for r in rows]
    assert launch_difference(caps, []) == ("", 3)
    assert moves_by_one_step([four(v) for v in (VALUE_LIMIT - 2, VALUE_LIMIT - 1, VALUE_LIMIT)]) == "integer"
    assert moves_by_one_step([four(v) for v in (VALUE_LIMIT - 1, VALUE_LIMIT, VALUE_LIMIT + 1)]) == ""
    counted = [(dims, [four(*r[:-1], 5 + k)]) for k, r in enumerate(rows)]
    assert launch_difference(counted, [])[0].startswith("argument 0 (bytes 24-27) moves by one step per call")


def test_float_counters_are_whole_numbers():
    dims = (1, 1, 1, 32, 1, 1, 0)
    f32 = lambda v: struct.pack("<f", v)                             # noqa: E731
    assert moves_by_one_step([f32(v) for v in (1.0, 2.0, 3.0)]) == "float32"
    assert moves_by_one_step([f32(v) for v in (0.1, 0.2, 0.3)]) == ""          # not a count: not seen
    assert moves_by_one_step([f32(v) for v in (1.0, 2.0, 5.0)]) == ""
    assert moves_by_one_step([f32(v) for v in (1.0, 1.0, 1.0)]) == ""            # no step
    assert moves_by_one_step([f32(v) for v in (0.0, 2e6, 4e6)]) == ""            # beyond VALUE_LIMIT
    # x + n with a Python int n: torch's functor holds {alpha = 1.0, b = n} in one word
    caps = [(dims, [f32(1.0) + f32(v)]) for v in (1.0, 2.0, 3.0)]
    assert launch_difference(caps, [])[0] == "argument 0 (bytes 4-7) moves by one step per call (read as float32): 1, 2, 3"


def test_the_grid_table_and_its_sentence():
    a = answer(_kernels(), OPS, TIMES, every_kernel=True, manifest=MANIFEST)
    from dataclasses import replace

    rows = grid_rows([replace(a, name="s1")])
    assert rows.loc[0, "eager_us"] == "100.0" and rows.loc[0, "activations_share"].startswith("+4.00 %")
    assert grid_sentence([replace(a, name="s1")]).startswith(
        "Reuse of activations, as a share of the eager step, against the study's 0.65 %: 0 of 1 steps below it, 1 above")


def test_an_address_outside_the_allocator_may_differ_between_captures():
    dims = (4, 1, 1, 128, 1, 1, 0)
    caps = [(dims, [w.to_bytes(8, "little")]) for w in (0x7F00_1234_0000, 0x7F00_1234_1000, 0x7F00_1234_2000)]
    assert launch_difference(caps, []) == ("", 0)                  # by a fixed step, and still an address


def test_a_host_address_in_a_structs_padding_may_move_by_a_step():
    """The H100's record: word 33 of torch's reduce kernel argument held the previous kernel node's
    handle, a heap address below 4 GiB (0x19e67018 in one capture, 0x19e68650 in the next). Handles
    made one per capture may well move by a fixed step; inside a host mapping in all three captures
    it is skipped, elsewhere counted as a value that moves (no small whole number); a counter beside
    it is still refused."""
    dims = (4, 1, 1, 128, 1, 1, 0)
    arg = lambda *ws: b"".join(w.to_bytes(8, "little") for w in ws)     # noqa: E731
    step = [(dims, [arg(0, 0x19E67018 + k * 0x1638)]) for k in range(3)]
    heap = host_spans("00400000-00600000 r-xp 0 08:01 1 /usr/bin/python3\n19a00000-1a200000 rw-p 0 00:00 0 [heap]\n")
    assert heap == [(0x400000, 0x200000), (0x19A00000, 0x800000)]
    assert launch_difference(step, [], heap) == ("", 0)
    assert launch_difference(step, []) == ("", 1)          # no mapping: no small whole number either
    assert launch_difference(step[:2] + [(dims, [arg(0, 0x30000000)])], [], heap) == ("", 1)   # unmapped: at random
    packed = [(dims, [b"".join(v.to_bytes(4, "little") for v in (1, 0x19E67018 + k * 0x1638, 0, 5))])
              for k in range(3)]                               # the address at bytes 4-11 of a packed struct
    assert launch_difference(packed, [], heap) == ("", 0)
    grow = [(dims, [arg(n, 0x19E67018 + k * 0x1638)]) for k, n in enumerate((7, 8, 9))]
    assert "(bytes 0-3)" in launch_difference(grow, [], heap)[0]            # a counter beside them


def test_this_process_maps_its_own_heap():
    """host_spans reads /proc/self/maps: two live host buffers lie inside it, a small count does not."""
    import ctypes
    import sys

    if not sys.platform.startswith("linux"):
        pytest.skip("/proc/self/maps is Linux's")
    bufs = [ctypes.create_string_buffer(64) for _ in range(2)]
    maps = host_spans()
    assert all(touched([ctypes.addressof(x)], maps) for x in bufs) and not touched([4096], maps)


class _Dev:
    reset_ok = False

    def facts(self):
        return {"gpu": {"name": "hand-made", "uuid": "none"}, "software": {"l2attr": "test"}}

    def close(self):
        pass


def test_the_one_writer_writes_a_run_the_reader_answers(tmp_path):
    """A graph-surgery record with every arm, written by the writer and read back by the reader:
    the same answer as the tables give by hand, the write-back table beside it."""
    import time

    from l2attr.steps.analyse.answer import StepAnswer
    from l2attr.steps.declare import StepOptions
    from l2attr.steps.measure.run import StepSpec, _write
    from l2attr.steps.measure.surgery_run import SurgeryRun
    from l2attr.vocab import StepMode

    wb = pd.DataFrame({"node": [0, 1], "kernel": ["k0", "k1"], "bytes": [0.0, 2e6], "matched_bytes": [0, 2031616]})
    facts = {**MANIFEST["surgery"], "arms": list(ARMS), "graph_kernels": 2, "eager_kernels": 0, "matched_kernels": 0,
             "overlapping_kernels": 0, "nodes": 2, "node_types": {"Kernel": 2}, "call_us": [], "torch_graph_us": [],
             "call_kernel_us": [], "call_kernels": [], "launch_check": "the two captures launch every kernel node alike"}
    got = SurgeryRun(_kernels(), [], TIMES, facts, write_back=wb)
    path = _write(_Dev(), StepSpec(lambda: None, options=StepOptions(name="written", repeats=REPEATS, out=tmp_path,
                                                                      edges=0)),
                  StepMode.SURGERY, got, lambda s: None, None, time.perf_counter())
    a = StepAnswer.from_run(path)
    assert a.name == "written" and a.eager.share.median == pytest.approx(0.07, abs=1e-3)
    assert a.parts.activations.median == pytest.approx(4.0, abs=0.01)
    assert pd.read_csv(path / "step_write_back.csv")["matched_bytes"].tolist() == [0, 2031616]
    assert "\nwritten: inter-kernel L2 reuse is worth 7.00 % of the eager step" in repr(a)


def test_the_grid_page_has_one_row_per_configuration(tmp_path):
    """examples/steps/hf_grid.py --page on two hand-made grid runs: a row each, the study defined,
    the sentence from the same answers (the README's line is made the same way)."""
    import time

    from l2attr.steps.declare import StepOptions
    from l2attr.steps.measure.run import StepSpec, _write
    from l2attr.steps.measure.surgery_run import SurgeryRun
    from l2attr.vocab import StepMode

    grid = _grid_module()
    facts = {**MANIFEST["surgery"], "arms": list(ARMS), "graph_kernels": 2, "eager_kernels": 0, "matched_kernels": 0,
             "overlapping_kernels": 0, "nodes": 2, "node_types": {"Kernel": 2}, "call_us": [], "torch_graph_us": [],
             "call_kernel_us": [], "call_kernels": []}
    for name in ("llama-decode-b1-kv512", "gpt2-decode-b1-kv512"):
        _write(_Dev(), StepSpec(lambda: None, options=StepOptions(name=name, repeats=REPEATS, out=tmp_path, edges=0,
                                                                  facts={"series": "hf-grid"})),
               StepMode.SURGERY, SurgeryRun(_kernels(), [], TIMES, facts), lambda s: None, None, time.perf_counter())
    text = grid.write_page(tmp_path)
    rows = [x for x in text.splitlines() if x.startswith("| ") and "decode" in x]
    assert len(rows) == 2 and all("+4.00 [" in r and "| above 0.65 % |" in r for r in rows)
    assert "claims that transient inter-kernel L2 reuse of activations" in text
    assert text.startswith("# Worth the Bytes? on HuggingFace LLM steps (hand-made)\n")   # the runs' GPU
    first = text.split("| step |")[0]                       # the first screen: the GPU, the counts, both denominators
    assert "GPU: hand-made" in first and "of the eager step** (the study's denominator): 0 below 0.65 %, 2 above" in first
    assert "**Of the graph replay**" in first and (tmp_path / "README.md").read_text() == text
    header = next(x for x in text.splitlines() if x.startswith("| step |"))
    shares = [c for c in header.split(" | ") if "%" in c]
    assert shares and all("eager step" in c or "graph replay" in c for c in shares)   # one named denominator each
    assert "No wall-time record under this folder" in text

    # the grid's wall time: one line per call that measured something, read back into the page
    one = {"gpu": "hand-made", "models": {"llama": {"ncu_s": 10.0, "steps_s": 5.5, "steps": ["llama-decode-b1-kv512"]}}}
    grid.record_call(tmp_path, {"gpu": "hand-made", "models": {}}, 1.0, [])        # measured nothing: no line
    assert not (tmp_path / grid.CALLS).exists()
    grid.record_call(tmp_path, one, 16.04, ["--out", "x"])
    said = grid.write_page(tmp_path)
    assert ("one call of the grid measured these 1 steps: 16.0 s on hand-made for 1 step(s) (ncu reading 10.0 s, "
            "steps 5.5 s). 1 of the page's 2 rows were measured by calls with no record.") in said
    two = {"gpu": "hand-made", "models": {"gpt2": {"ncu_s": 2.0, "steps_s": 3.0, "steps": ["gpt2-decode-b1-kv512"]}}}
    grid.record_call(tmp_path, two, 5.0, [])
    said = grid.write_page(tmp_path)
    assert "2 calls of the grid measured these 2 steps, 21.0 s in all: 16.0 s" in said and "no record" not in said

    assert grid.finished([tmp_path]) == {"llama-decode-b1-kv512": "hand-made", "gpt2-decode-b1-kv512": "hand-made"}


def test_the_grid_adds_no_row_from_another_gpu(tmp_path, monkeypatch):
    """One GPU identity per comparison: a grid that would resume on another GPU than its finished
    runs' stops with one line before any profile or measurement; the same GPU goes on."""
    import sys
    import types

    grid = _grid_module()
    run = tmp_path / "20261205T000000Z-llama-decode-b1-kv512"
    run.mkdir()
    (run / "manifest.json").write_text('{"status": "complete", "kind": "step", "step": {"name": "llama-decode-b1-kv512"},'
                                       ' "gpu": {"name": "NVIDIA H100 80GB HBM3"}}')
    assert grid.one_gpu(grid.finished([tmp_path]), "NVIDIA H100 80GB HBM3") == ""
    monkeypatch.setitem(sys.modules, "torch", types.SimpleNamespace(
        cuda=types.SimpleNamespace(get_device_name=lambda: "NVIDIA H200", is_available=lambda: True)))
    monkeypatch.setattr(grid, "write_back_of", lambda *a, **k: pytest.fail("profiled on another GPU"))
    with pytest.raises(SystemExit) as e:
        grid.measure(tmp_path, ["llama3-8b"], [2], grid.configs(), [], 2, 4)
    assert str(e.value).startswith("hf_grid: error: the finished runs were measured on NVIDIA H100 80GB HBM3, "
                                   "this GPU is NVIDIA H200") and "\n" not in str(e.value)


def _grid_module():
    import importlib.util
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    spec = importlib.util.spec_from_file_location("hf_grid", root / "examples" / "steps" / "hf_grid.py")
    grid = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(grid)
    return grid


def test_the_grids_ncu_reading_is_one_child_for_the_grid_cached_and_a_cut_cache_is_read_again(tmp_path, monkeypatch):
    """The grid's second reader: every wanted step of every model at one and two layers in ONE ncu
    child (per cache control) for the whole grid, cached per model; a later call on the same GPU
    profiles nothing; a cache cut mid-row loses only its last step, which is read again (never used
    short); another GPU's rows are not this one's; the cost record counts the steps and nodes read."""
    import json
    import os

    import l2attr.steps.measure.ncu as ncu

    grid = _grid_module()
    calls = []

    def fake_profile(target, out, replays, **kw):
        want = json.loads(open(os.environ[grid.WANT_ENV]).read())
        names = [grid.name_of(*w) for w in want]
        calls.append(names)
        return pd.DataFrame([{"cache_control": cc, "step": n, "replay": 0, "node": j, "kernel": f"k{j}",
                              "key": "dram_write", "value": float(100 * j + (cc == "none"))}
                             for n in names for j in range(3) for cc in ("none", "all")])
    monkeypatch.setattr(ncu, "profile_graph", fake_profile)
    (tmp_path / "bin").mkdir()                 # l2attr.write_back looks for ncu on PATH first
    (tmp_path / "bin" / "ncu").write_text("#!/bin/sh\n")
    (tmp_path / "bin" / "ncu").chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    wanted = {"llama3-8b": [("decode", 1, 4096), ("prefill", 1, 2048)], "qwen2.5-7b": [("decode", 1, 4096)]}
    got, cost = grid.write_back_of(wanted, tmp_path, gpu="G1")
    assert len(calls) == 1 and len(calls[0]) == 6            # (2 + 1) configurations x depths 1 and 2, one child
    assert cost["ncu_steps"] == 6 and cost["ncu_nodes"] == 18 and cost["ncu_s"] >= 0
    assert got["llama3-8b"]["llama3-8b-L2-decode-b1-kv4k"]["write_none_b"].tolist() == [1.0, 101.0, 201.0]
    assert sorted(got["qwen2.5-7b"]) == ["qwen2.5-7b-L1-decode-b1-kv4k", "qwen2.5-7b-L2-decode-b1-kv4k"]
    calls.clear()
    again, cost = grid.write_back_of(wanted, tmp_path, gpu="G1")
    assert len(again["llama3-8b"]) == 4 and calls == [] and cost["ncu_nodes"] == 0
    cache = tmp_path / "ncu" / "llama3-8b-write-back.csv"
    text = cache.read_text()
    cache.write_text(text[:text.rstrip("\n").rindex(",")])     # cut inside the last row
    left = grid.read_cache(cache, "G1")
    assert len(left) == 3 and all(len(t) == 3 for t in left.values())
    grid.write_back_of(wanted, tmp_path, gpu="G1")
    assert len(calls) == 1 and len(calls[0]) == 1           # only the step the cut left short
    calls.clear()
    grid.write_back_of({"llama3-8b": wanted["llama3-8b"][:1]}, tmp_path, gpu="G2")
    assert len(calls[0]) == 2                                # another GPU's reading is not this GPU's
    assert len(grid.read_cache(cache, "G1")) == 4 and len(grid.read_cache(cache, "G2")) == 2   # both kept


def test_per_repeat_on_the_arrays_is_the_merge_and_a_twice_named_key_is_left_to_it():
    """steps/analyse/reading.per_repeat matches each arm's kernels on the table's arrays; the merge
    it replaced gives the same sums, rows shuffled or not, and still answers where a key is named
    twice in one arm (its cross product)."""
    from l2attr.steps.analyse.reading import _per_repeat_merged, per_repeat

    k = _kernels().sample(frac=1.0, random_state=3).reset_index(drop=True)
    met, skip = {(-2, 0), (-2, 1)}, {(-2, 1)}
    pd.testing.assert_frame_equal(per_repeat(k, met, skip), _per_repeat_merged(k, met, skip), check_exact=True)
    twice = pd.concat([k, k[(k["condition"] == "cold") & (k["step"] == 0)].head(1)], ignore_index=True)
    got = per_repeat(twice, met, skip)
    pd.testing.assert_frame_equal(got, _per_repeat_merged(twice, met, skip), check_exact=True)
    assert got["saving_cold_us"].iloc[0] != got["saving_cold_us"].iloc[1]       # the cross product counted twice


def test_the_grid_page_checks_the_bracket_and_the_attention_kernels():
    """hf_grid.checks on hand-made answers: the matched share inside [clean lo, dirty hi] or not, and
    the attention kernels the clean arm calls slower counted with how many the matched arm still does."""
    from types import SimpleNamespace as NS

    grid = _grid_module()
    k = pd.DataFrame({"kernel": ["cudnn_sdpa_flash_fprop", "cudnn_sdpa_flash_fprop", "fmha_kernel", "gemm"],
                      "clean_judgement": ["slower", "slower", "within noise", "slower"],
                      "judgement": ["faster", "slower", "slower", "slower"]})
    sh = lambda lo, hi: NS(share=NS(lo=lo, hi=hi))                     # noqa: E731
    a = NS(kernels=k, matched=sh(0.05, 0.06), share_ci=(0.04, 0.05), share_dirty_ci=(0.10, 0.12))
    assert grid.checks(a) == {"inside": "yes", "attention": "2 of 3 clean -> 1 matched (+1 slower only when matched)"}
    assert grid.checks(NS(**{**vars(a), "matched": sh(0.13, 0.14)}))["inside"] == "no"
    assert grid.checks(NS(**{**vars(a), "matched": sh(0.01, 0.03)}))["inside"] == "no"
    assert grid.checks(NS(**{**vars(a), "matched": None})) == {"inside": "n/a", "attention": "n/a"}


def test_write_back_is_the_ncu_reading_per_node_and_a_bad_target_is_one_line(tmp_path, monkeypatch):
    """l2attr.write_back: the target checked before Nsight Compute is looked for; one step gives its
    deltas table (D_j = write_none_b - write_all_b per node), several steps a table each."""
    import pandas as pd

    import l2attr
    from l2attr.errors import UserError
    from l2attr.steps.measure import ncu

    made = tmp_path / "mine.py"
    made.write_text("def make():\n    return None\n")
    asked = []

    def fake_profile(target, out, replays, sets="", log=print):
        asked.append((target, replays, sets))
        names = ["step"] if len(asked) == 1 else ["a", "b"]
        return pd.DataFrame([{"cache_control": cc, "step": n, "replay": r, "node": j, "kernel": f"k{j}",
                              "key": key, "value": float(1000 * j + (cc == "none") * (7 + i) + r)}
                             for i, n in enumerate(names) for r in range(3) for j in range(2)
                             for cc in ("none", "all") for key in ("dram_write", "duration")])
    monkeypatch.setattr(ncu, "profile_graph", fake_profile)
    monkeypatch.setenv("PATH", str(tmp_path))                   # no ncu here: said before anything runs
    with pytest.raises(UserError, match="Nsight Compute \\(ncu\\) is not on PATH"):
        l2attr.write_back(f"{made}:make")
    (tmp_path / "ncu").write_text("#!/bin/sh\n")
    (tmp_path / "ncu").chmod(0o755)
    for bad in ("mine.py", f"{tmp_path}/absent.py:make", f"{made}:", f"{made}:not-a-name"):
        with pytest.raises(UserError, match="give FILE.py:FACTORY"):
            l2attr.write_back(bad, out=tmp_path / "ncu")
    with pytest.raises(UserError, match="replays must be at least 1"):
        l2attr.write_back(f"{made}:make", replays=0)
    assert asked == []                                     # nothing profiled for a bad call
    one = l2attr.write_back(f"{made}:make", out=tmp_path / "ncu", log=lambda s: None)
    assert asked == [(f"{made.resolve()}:make", 3, "dram")]
    assert (one["write_none_b"] - one["write_all_b"]).tolist() == [7.0, 7.0]   # medians over replays: 1008 - 1001
    many = l2attr.write_back(f"{made}:make", out=tmp_path / "ncu", log=lambda s: None)
    assert sorted(many) == ["a", "b"] and (many["b"]["write_none_b"] - many["b"]["write_all_b"]).tolist() == [8.0, 8.0]
    assert (many["a"]["write_none_b"] - many["a"]["write_all_b"]).tolist() == [7.0, 7.0]


def test_the_clock_tick_is_read_from_the_durations():
    """significance.clock_tick_us on durations whose tick is known: 32 ns and 8 ns grids (stored to
    1 ns, a few long kernels rescaled off it), none on free durations, none from too few."""
    import numpy as np

    from l2attr.analysis.significance import clock_tick_us

    rng = np.random.default_rng(1)
    on32 = rng.integers(20, 400, 200) * 0.032
    assert clock_tick_us(np.round(on32, 3)) == 0.032
    assert clock_tick_us(np.concatenate([np.round(on32, 3), [552.357, 549.957, 548.581]])) == 0.032
    assert clock_tick_us(rng.integers(100, 1000, 200) * 0.008) == 0.008
    assert clock_tick_us(rng.integers(1000, 100000, 200) / 1000.0) == 0.0     # every nanosecond
    assert clock_tick_us(on32[:10]) == 0.0                                     # too few to tell


def test_a_one_tick_difference_is_within_noise_and_four_ticks_are_not():
    """steps/analyse/answer.per_kernel on a clock of 32 ns ticks: cold one tick above natural in every
    repeat has bootstrap intervals of no width that do not overlap, yet the clock cannot tell it;
    widened by a tick each side it is within noise, and a matched reading one tick outside its
    bracket is not flagged. Four ticks stay faster, and four ticks outside the bracket are flagged."""
    import pandas as pd

    from l2attr.steps.analyse.answer import per_kernel

    tick, rows = 0.032, []
    for node, (nat, gap) in enumerate([(30, 1), (30, 4)]):
        for arm, ticks in (("natural", nat), ("cold", nat + gap), ("cold_dirty", nat + gap + 1), ("cold_matched", nat)):
            rows += [{"condition": arm, "step": r, "op_index": node, "kernel_index": 0, "kernel": f"k{node}",
                      "duration_us": round(ticks * tick, 3), "start_us": 100.0 * r + 10 * node, "stream": 7,
                      "node": node} for r in range(12)]
    ops = pd.DataFrame({"op_index": [0, 1], "op": ["a", "b"], "module": ["", ""], "flushed_in_cold": [True, True]})
    k = per_kernel(pd.DataFrame(rows), ops, every_kernel=True).set_index("node")
    assert k.loc[0, "clean_judgement"] == "within noise" and k.loc[1, "clean_judgement"] == "faster"
    assert k.loc[0, "cold_lo"] == pytest.approx(31 * tick - tick) and k.loc[0, "natural_hi"] == pytest.approx(31 * tick)
    # matched = natural: one tick under clean is within the clock; four ticks under it is flagged
    assert k["out_of_bracket"].tolist() == [False, True]
    from l2attr.steps.section.text import _tick

    assert _tick(k) == "; intervals include the GPU timer's 32 ns tick"      # the page says so
    assert _tick(k.assign(clock_tick_us=0.0)) == ""
