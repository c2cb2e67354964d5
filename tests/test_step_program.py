"""The program check on numbers known by hand: the natural replay's kernel time against the
function's own calls (median of the call sums), the kernel counts, the tolerance at its edge,
and the caveat line said only when the check fails."""

from __future__ import annotations

import pandas as pd
import pytest

from l2attr.steps.check.program import PROGRAM_TOLERANCE, program_caveat, program_check, program_line


def _kern(*us: float) -> pd.DataFrame:
    return pd.DataFrame({"natural_us": list(us)})


def _manifest(sums, counts, graph_kernels=3) -> dict:
    return {"surgery": {"call_kernel_us": sums, "call_kernels": counts, "graph_kernels": graph_kernels}}


def test_the_replays_kernels_against_the_median_call():
    c = program_check(_manifest([99.0, 100.0, 250.0], [3, 3, 3]), _kern(50.0, 30.0, 21.0))
    assert c.natural_kernel_us == 101.0 and c.call_kernel_us == 100.0
    assert c.ratio == pytest.approx(0.01) and c.holds
    assert program_caveat(c) == ""
    assert "+1.00 %" in program_line(c) and "count: yes" in program_line(c)


@pytest.mark.parametrize("natural,counts,holds", [
    (100.0 * (1 + PROGRAM_TOLERANCE) - 1e-9, [3], True),       # at the edge
    (100.0 * (1 + PROGRAM_TOLERANCE) + 1e-6, [3], False),       # past it
    (100.0 * (1 - PROGRAM_TOLERANCE) - 1e-6, [3], False),       # faster by more than it
    (100.0, [4], False)])                                       # another kernel count
def test_the_tolerance_and_the_count(natural, counts, holds):
    c = program_check(_manifest([100.0], counts), _kern(natural))
    assert c.holds is holds
    assert bool(program_caveat(c)) is not holds
    if not holds:
        assert program_caveat(c).startswith("Caveat: the natural arm is not the program as it runs by itself")


def test_no_check_without_the_calls():
    assert program_check({"surgery": {"call_kernel_us": [], "call_kernels": []}}, _kern(1.0)) is None
    assert program_check({}, _kern(1.0)) is None
    assert program_caveat(None) == ""


def test_a_compiled_function_with_no_inductor_kernel_is_said():
    from l2attr.steps.check.program import compiled_caveat

    eager = pd.DataFrame({"kernel": ["void at::native::elementwise_kernel<128>", "nvjet_sm90_tst_128x128"]})
    fused = pd.DataFrame({"kernel": ["triton_red_fused_rms_norm_0", "nvjet_sm90_tst_128x128"]})
    compiled = {"surgery": {"compiled": True}}
    assert compiled_caveat(compiled, eager).startswith("Caveat: the step function is torch.compile'd")
    assert "2 kernels" in compiled_caveat(compiled, eager)
    assert compiled_caveat(compiled, fused) == ""
    assert compiled_caveat({"surgery": {"compiled": False}}, eager) == ""
    assert compiled_caveat({"surgery": {}}, eager) == ""          # a run made before the flag was recorded


def test_compiled_callables_are_recognised_and_recorded_forced_eager():
    import types

    from l2attr.steps.measure.attribute import eager_stance, is_compiled

    class OptimizedModule:
        pass

    seen = []
    torch = types.SimpleNamespace(_dynamo=types.SimpleNamespace(eval_frame=types.SimpleNamespace(
        OptimizedModule=OptimizedModule)), compiler=types.SimpleNamespace(set_stance=lambda s: seen.append(s) or
                                                                           __import__("contextlib").nullcontext()))
    compiled_fn = lambda x: x          # noqa: E731
    compiled_fn._torchdynamo_orig_callable = abs
    assert is_compiled(torch, OptimizedModule()) and is_compiled(torch, compiled_fn)
    assert not is_compiled(torch, abs)
    with eager_stance(torch):
        pass
    assert seen == ["force_eager"]
    with eager_stance(types.SimpleNamespace()):      # a torch without compiler stances
        pass


def test_the_kernels_only_one_side_launched_are_named():
    from l2attr.steps.measure.timing import kernel_difference

    d = kernel_difference(["gemm", "norm", "norm"], ["norm", "copy", "copy"])
    assert d == {"only_in_graph": ["gemm", "norm"], "only_in_call": ["copy", "copy"]}
    c = program_check(_manifest([100.0], [3]), _kern(120.0))
    line = program_caveat(c, d)
    assert "only in the graph: gemm, norm; only in the call: copy, copy; every saving" in line


def test_no_check_where_kernels_ran_beside_each_other():
    kern = pd.DataFrame({"natural_us": [50.0, 50.0], "overlapped": [True, True]})
    assert program_check(_manifest([60.0], [2], graph_kernels=2), kern) is None
    assert program_check(_manifest([60.0], [2], graph_kernels=2), kern.assign(overlapped=False)) is not None
