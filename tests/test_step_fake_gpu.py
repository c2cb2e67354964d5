"""`l2attr.step`'s orchestration on a CPU, against a simulated GPU whose answer is known by hand.

The simulation (made here, never measured) stands in for torch, the device and the dispatch mode:
a step of two ops (mul writes `buf`, sum reads it), each one kernel whose duration is a base plus
a cost per byte it reads that is not in a simulated L2 (unbounded: a flush empties it, a kernel
leaves what it read and wrote, the re-warm adds what it reads). Kernels, ranges and graph
launches are written as kineto events, so the real trace parser, graph alignment, edge
measurement loop, run dir and analysis run unchanged. By hand: the sum's cold saving is
4000 bytes x 0.001 µs = 4 µs; the edge mul -> sum saves exactly that, with the control holding.
"""

from __future__ import annotations

import json
from contextlib import contextmanager, nullcontext
import sys
from types import SimpleNamespace

import numpy as np
import pytest

from l2attr.errors import UserError
from l2attr.steps.measure.record import OpRecord

SRC, BUF, OUT = (1000, 4000), (10000, 4000), (20000, 4)
PENALTY = 0.001          # µs per byte read that is not in the simulated L2
BASE = {"mul_k": 5.0, "sum_k": 3.0}


class Sim:
    def __init__(self) -> None:
        self.events: list[dict] = []
        self.ts, self.corr = 0.0, 0
        self.l2: list[tuple[int, int]] = []
        self.recorder = None
        self.capturing = None
        self.ops_variant = 0

    # -- the simulated L2 -----------------------------------------------------------------------
    def missing(self, ranges) -> int:
        from l2attr.steps.measure.edges import _minus

        return sum(e - s for p, n in ranges for s, e in _minus((p, p + n), self.l2))

    def touch(self, ranges) -> None:
        self.l2 += [(p, p + n) for p, n in ranges]

    def flush(self) -> None:
        self.l2 = []

    # -- kineto events ----------------------------------------------------------------------------
    @contextmanager
    def annotate(self, name: str):
        start = self.ts
        self.ts += 1
        yield
        self.ts += 1
        self.events.append({"ph": "X", "cat": "user_annotation", "name": name, "tid": 1, "ts": start,
                            "dur": self.ts - start})
        self.ts += 1                  # the host's clock moves on after a range closes

    def _runtime(self, api: str) -> int:
        self.corr += 1
        self.events.append({"ph": "X", "cat": "cuda_runtime", "name": api, "tid": 1, "ts": self.ts, "dur": 1,
                            "args": {"correlation": self.corr}})
        self.ts += 2
        return self.corr

    def _run(self, name: str, reads, writes, corr: int) -> None:
        dur = BASE[name] + PENALTY * self.missing(reads)
        self.events.append({"ph": "X", "cat": "kernel", "name": name, "tid": 7, "ts": self.ts, "dur": dur,
                            "args": {"correlation": corr, "stream": 7}})
        self.ts += dur + 1
        self.touch([*reads, *writes])

    def launch(self, name: str, reads, writes) -> None:
        if self.capturing is not None:
            self.capturing.kernels.append((name, reads, writes))
            return
        self._run(name, reads, writes, self._runtime("cudaLaunchKernel"))

    # -- an aten op through the (simulated) dispatch mode -----------------------------------------
    def op(self, name: str, kernel: str, reads, writes) -> None:
        rec = self.recorder
        if rec is None:
            return self.launch(kernel, reads, writes)
        o = OpRecord(len(rec.ops), name, "", list(reads), list(writes))
        if rec.flush is not None:
            rec.flush()
            o.flushed = True
        if rec.before is not None:
            o.flushed = bool(rec.before(o, rec.ops)) or o.flushed
        traced = rec.range_ops is None or o.index in rec.range_ops
        with self.annotate(f"l2attr:op:{o.index}") if traced else nullcontext():
            self.launch(kernel, reads, writes)
        rec.ops.append(o)


class FakeRecorder:
    def __init__(self, sim: Sim, flush, before, range_ops) -> None:
        self.sim, self.flush, self.before, self.range_ops = sim, flush, before, range_ops
        self.ops: list[OpRecord] = []
        self.modules = nullcontext()

    def __enter__(self):
        self.sim.recorder = self
        return self

    def __exit__(self, *exc):
        self.sim.recorder = None


class FakeGraph:
    def __init__(self, sim: Sim) -> None:
        self.sim, self.kernels = sim, []

    def replay(self) -> None:
        corr = self.sim._runtime("cudaGraphLaunch")
        for name, reads, writes in self.kernels:
            self.sim._run(name, reads, writes, corr)


def fake_torch(sim: Sim) -> SimpleNamespace:
    class Profile:
        def __init__(self, activities=None) -> None:
            self.start = 0

        def __enter__(self):
            self.start = len(sim.events)
            return self

        def __exit__(self, *exc):
            self.events = sim.events[self.start:]

        def export_chrome_trace(self, path: str) -> None:
            with open(path, "w") as f:
                json.dump({"traceEvents": self.events}, f)

    @contextmanager
    def graph(g):
        sim.capturing = g
        yield
        sim.capturing = None

    stream = SimpleNamespace(synchronize=lambda: None, wait_stream=lambda s: None)
    cuda = SimpleNamespace(synchronize=lambda: None, current_stream=lambda: stream, Stream=lambda: stream,
                           stream=lambda s: nullcontext(), CUDAGraph=lambda: FakeGraph(sim), graph=graph)
    profiler = SimpleNamespace(profile=Profile, record_function=sim.annotate,
                               ProfilerActivity=SimpleNamespace(CPU="cpu", CUDA="cuda"))
    return SimpleNamespace(profiler=profiler, cuda=cuda)


@pytest.fixture()
def sim(monkeypatch):
    s = Sim()

    class Device:
        def __init__(self, *a, **k) -> None:
            self.torch, self.np, self.cupy, self.reset_ok, self.l2_bytes = fake_torch(s), np, None, True, 1 << 20

        def flush_l2(self) -> None:
            s.flush()

        def sync(self) -> None:
            pass

        def facts(self) -> dict:
            return {"gpu": {"name": "simulated", "uuid": "none"}, "software": {"l2attr": "test"}}

        def close(self) -> None:
            pass

    class Timer:
        def __init__(self, *a, **k) -> None:
            pass

        def time(self, launch):
            t0 = s.ts
            launch()
            return SimpleNamespace(time_us=s.ts - t0, discard="")

        def close(self) -> None:
            pass

    class Warmer:
        def __init__(self, dev) -> None:
            pass

        def __call__(self, ranges) -> int:
            s.touch(ranges)
            return sum(n for _, n in ranges)

    def recorder(flush, nvtx_ranges=False, before=None, range_ops=None):
        return FakeRecorder(s, flush, before, range_ops)

    import l2attr.measure.verbs
    import l2attr.measure.timer
    import l2attr.steps.measure.edges
    import l2attr.steps.measure.record
    import l2attr.steps.measure.run

    monkeypatch.setattr(l2attr.measure.verbs, "Device", Device)
    # The fake device simulates the eager and graph methods. Graph surgery starts where cuda-bindings
    # imports (steps/measure/surgery_run.py); torch's CUDA wheel installs it, and surgery then built real flush
    # buffers on this fake torch (issue 38: 'SimpleNamespace' object has no attribute 'arange'), so
    # the fake says it is not there, whatever the venv holds.
    monkeypatch.setitem(sys.modules, "cuda.bindings.runtime", None)
    monkeypatch.setattr(l2attr.measure.timer, "BlockingTimer", Timer)
    monkeypatch.setattr(l2attr.steps.measure.edges, "Warmer", Warmer)
    for mod in (l2attr.steps.measure.run, l2attr.steps.measure.edges, l2attr.steps.measure.record):
        monkeypatch.setattr(mod, "make_recorder", recorder)
    return s


def _step(sim: Sim):
    def fn():
        sim.op("mul", "mul_k", [SRC], [BUF])
        sim.op("sum", "sum_k", [BUF], [OUT])
    return fn


def test_eager_step_and_its_edge_by_hand(sim, tmp_path):
    import l2attr

    ans = l2attr.step(_step(sim), name="sim", repeats=4, warmup=1, out=tmp_path, edges=1, log=lambda s: None)
    per = ans.kernels.set_index("op")
    assert per.loc["sum", "saving_us"] == pytest.approx(4.0) and per.loc["mul", "saving_us"] == pytest.approx(4.0)
    e = ans.measured_edges.iloc[0]
    assert (e["producer_op"], e["consumer_op"], e["bytes"]) == ("mul", "sum", 4000)
    assert e["natural_us"] == pytest.approx(3.0) and e["rewarmed_us"] == pytest.approx(3.0)
    assert e["edge_cold_us"] == pytest.approx(7.0) and e["cold_us"] == pytest.approx(7.0)
    assert e["control"] == "holds" and e["judgement"] == "faster" and e["saving_us"] == pytest.approx(4.0)
    assert ans.manifest["step"]["mode"] == "eager" and "edges_method" in ans.manifest
    assert ans.step_time.valid


def test_step_answer_has_the_result_shape(sim, tmp_path):
    """l2attr.step's answer reads like Experiment.time()'s result: .cells, .verdict, .run_dir, repr."""
    import l2attr

    ans = l2attr.step(_step(sim), name="simr", repeats=4, warmup=1, out=tmp_path, edges=0, log=lambda s: None)
    assert ans.cells is ans.kernels and ans.run_dir is not None and ans.run_dir.is_dir()
    v = ans.verdict.iloc[0]
    assert v["step"] == "simr" and v["judgement"] == ans.judgement and v["share_lo"] <= v["share"] <= v["share_hi"]
    assert v["denominator"].startswith("the step's kernel time") and v["versus_study"] == "not measured"
    assert ans.headline("simr") in repr(ans) and str(ans.run_dir) in repr(ans)
    import dataclasses

    with pytest.raises(dataclasses.FrozenInstanceError):     # a result, like Experiment.time()'s: never edited
        ans.judgement = "faster"


def test_a_step_whose_own_keywords_are_name_and_out_is_measured_as_it_is(sim, tmp_path):
    """The step's keywords travel in `kwargs=`, never beside l2attr's: `name` and `out` reach the
    step, and l2attr's own name and out are untouched (issue 37)."""
    import l2attr

    seen = {}
    inner = _step(sim)

    def step(name, out):
        seen.update(name=name, out=out)
        return inner()

    ans = l2attr.step(step, kwargs={"name": "mine", "out": "my-out"}, name="kw", repeats=2, warmup=0, out=tmp_path,
                      edges=0, log=lambda s: None)
    assert seen == {"name": "mine", "out": "my-out"}
    assert ans.name == "kw" and ans.run_dir.parent == tmp_path and "\nkw: " in ans.headline()


def test_inputs_made_by_setup_reach_the_step(sim, tmp_path):
    import l2attr

    got = []
    inner = _step(sim)

    def step(a, b):
        got.append((a, b))
        return inner()

    l2attr.step(step, 1, setup=lambda: (2,), name="setup", repeats=2, warmup=0, out=tmp_path, edges=0,
                log=lambda s: None)
    assert got and set(got) == {(1, 2)}


def test_a_step_without_aten_ops_is_refused_with_the_graph_hint(sim, tmp_path):
    import l2attr

    g = FakeGraph(sim)
    g.kernels = [("mul_k", [SRC], [BUF])]
    with pytest.raises(UserError, match="CUDAGraph itself"):
        l2attr.step(g.replay, name="raw", repeats=2, warmup=0, out=tmp_path, log=lambda s: None)


def test_an_edge_that_cannot_be_measured_keeps_the_step(sim, tmp_path, monkeypatch):
    import l2attr
    import l2attr.steps.measure.edges as edges

    def broken(*a, **k):
        raise UserError("simulated: the step ran other ops")

    monkeypatch.setattr(edges, "measure_edges", broken)
    ans = l2attr.step(_step(sim), name="noedge", repeats=2, warmup=0, out=tmp_path, edges=1, log=lambda s: None)
    assert ans.manifest["edges_error"] == "simulated: the step ran other ops" and ans.measured_edges.empty
    assert ans.kernels.set_index("op").loc["sum", "saving_us"] == pytest.approx(4.0)


def test_marked_step_under_l2attr_step_takes_the_commands_options(sim, tmp_path, monkeypatch):
    import l2attr
    from l2attr.steps.analyse.answer import analyse_step
    from l2attr.steps.declare import StepOptions

    marked = l2attr.step_range("marked")(_step(sim))
    (tmp_path / "child").mkdir()
    for k, v in StepOptions(out=tmp_path, repeats=2, warmup=0, edges=0).to_child(tmp_path / "child").items():
        monkeypatch.setenv(k, v)
    with pytest.raises(SystemExit) as stop:
        marked()
    assert stop.value.code == 0
    (run,) = [p for p in tmp_path.iterdir() if p.name.endswith("-marked")]
    ans = analyse_step(run)
    assert ans.manifest["step"]["mode"] == "eager" and ans.manifest["step"]["edges"] == 0
    assert ans.measured_edges.empty and "edges_method" not in ans.manifest


def test_a_marked_step_takes_the_write_back_the_command_read(sim, tmp_path, monkeypatch):
    """`l2attr step --matched`: the reading travels to the marked step as a CSV named in its spec,
    and reaches the measurement as its write-back (issue 36)."""
    import l2attr
    import l2attr.steps.measure.run as run
    from l2attr.steps.declare import StepOptions

    (tmp_path / "wb.csv").write_text("node,write_none_b,write_all_b\n0,5000000,0\n1,0,0\n")
    got = {}
    monkeypatch.setattr(run, "run_step", lambda spec, **kw: got.setdefault("spec", spec))
    marked = l2attr.step_range("wb")(_step(sim))
    opts = StepOptions(out=tmp_path, repeats=2, warmup=0, edges=0, write_back=tmp_path / "wb.csv")
    for k, v in opts.to_child(tmp_path).items():
        monkeypatch.setenv(k, v)
    with pytest.raises(SystemExit):
        marked()
    assert got["spec"].write_back == {0: 5000000.0, 1: 0.0}     # node -> bytes: write_none_b - write_all_b
