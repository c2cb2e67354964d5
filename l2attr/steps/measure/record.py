"""What one step of a PyTorch program does, op by op: names, module path, tensors read and written.

A TorchDispatchMode sees every aten op below autograd with its real input and output tensors:
their data pointers and sizes are what producer -> consumer edges are made of (a later op that
reads bytes an earlier op wrote). Each op runs inside a profiler range `l2attr:op:<index>`, so
the kernels its launches produce in the kineto trace are matched to it (step/trace.py) by the
CPU time of their launch, whatever API launched them. In the `cold` condition the recorder
flushes L2 right before each op that is not a view (views launch nothing): read-only flush
after a persisting reset (measure/verbs.py), so the op's first kernel meets a cold L2 with
no dirty lines of anyone else's to write back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from l2attr.names import LEGACY_PREFIX, STEP_OP

# The variable `l2attr step` sets for the script whose marked step it records: the path of a file
# holding the step's options (steps/declare.py StepOptions.to_child), never the options themselves.
ENV = "L2ATTR_STEP_OPTIONS"

OP_RANGE = f"{LEGACY_PREFIX}op:"          # LEGACY_PREFIX + names.STEP_OP: one op in the kineto trace
NVTX_OP_INCLUDE = "regex:l2attr@op:.*/"
SLOT_RANGE = f"{LEGACY_PREFIX}slot:"      # LEGACY_PREFIX + names.STEP_SLOT: one traced replay or call


@dataclass
class OpRecord:
    index: int
    op: str
    module: str
    inputs: list[tuple[int, int]] = field(default_factory=list)    # (data_ptr, nbytes)
    outputs: list[tuple[int, int]] = field(default_factory=list)
    flushed: bool = False
    view: bool = False


def _tensors(obj: Any, out: list[tuple[int, int]]) -> None:
    import torch

    if isinstance(obj, torch.Tensor):
        if obj.is_cuda and obj.numel():
            out.append((int(obj.data_ptr()), int(obj.numel() * obj.element_size())))
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            _tensors(o, out)
    elif isinstance(obj, dict):
        for o in obj.values():
            _tensors(o, out)


class ModuleStack:
    """The nn.Module path of the op being dispatched (global forward hooks, class names)."""

    def __init__(self) -> None:
        self.stack: list[str] = []
        self._handles: list[Any] = []

    def __enter__(self) -> "ModuleStack":
        from torch.nn.modules import module as m

        self._handles = [m.register_module_forward_pre_hook(self._enter), m.register_module_forward_hook(self._leave)]
        return self

    # Hooks return None: a forward hook's return value would replace the module's output.
    def _enter(self, mod: Any, args: Any) -> None:
        self.stack.append(type(mod).__name__)

    def _leave(self, mod: Any, args: Any, out: Any) -> None:
        if self.stack:
            self.stack.pop()

    def __exit__(self, *exc: Any) -> None:
        for h in self._handles:
            h.remove()

    @property
    def path(self) -> str:
        return "/".join(self.stack)


def _nvtx(on: bool, index: int) -> Any:
    from contextlib import nullcontext

    if not on:
        return nullcontext()
    import nvtx

    from l2attr.names import NVTX_DOMAIN, STEP_OP

    return nvtx.annotate(STEP_OP.build(op_index=index), domain=NVTX_DOMAIN)


Before = Callable[[OpRecord, list[OpRecord]], bool]
"""A hook called right before each op that is not a view (the op's record with its inputs, the
ops so far): whatever it does to the L2 happens there; it returns whether it flushed."""


def make_recorder(flush: Callable[[], None] | None, nvtx_ranges: bool = False, before: Before | None = None,
                  range_ops: set[int] | None = None) -> Any:
    """A TorchDispatchMode recording every op (and flushing before each, when `flush` is given).
    `nvtx_ranges`: each op also inside an NVTX range `op:<index>` of l2attr's domain (for ncu).
    `before`: a hook in place of the flush (steps/measure/edges.py). `range_ops`: only these ops get a
    profiler range (the others are recorded, not traced: a smaller trace)."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    class Recorder(TorchDispatchMode):
        def __init__(self) -> None:
            super().__init__()
            self.ops: list[OpRecord] = []
            self.modules = ModuleStack()

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):   # noqa: ANN001
            from contextlib import nullcontext

            kwargs = kwargs or {}
            rec = OpRecord(len(self.ops), str(func.overloadpacket.__name__), self.modules.path)
            _tensors(args, rec.inputs)
            _tensors(kwargs, rec.inputs)
            rec.view = bool(getattr(func, "is_view", False))
            if flush is not None and not rec.view:
                flush()
                rec.flushed = True
            if before is not None and not rec.view:
                rec.flushed = bool(before(rec, self.ops)) or rec.flushed
            traced = range_ops is None or rec.index in range_ops
            with (torch.profiler.record_function(LEGACY_PREFIX + STEP_OP.build(op_index=rec.index)) if traced
                  else nullcontext()), _nvtx(nvtx_ranges, rec.index):
                out = func(*args, **kwargs)
            _tensors(out, rec.outputs)
            self.ops.append(rec)
            return out

    return Recorder()
