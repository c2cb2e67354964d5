"""The step engine: what inter-kernel L2 reuse is worth in a whole step, per kernel, natural
against cold. The verbs live in l2attr/api.py (`l2attr.step`, `l2attr.step_range`); this package
measures (run.py: one spec, one writer) and never imports the readers (l2attr/analysis).

    import l2attr
    ans = l2attr.step(decode_step, x)           # a StepAnswer: .headline(), .kernels, .run_dir
    @l2attr.step_range("decode")                # or mark the step and run `l2attr step -- python my_step.py`
    def decode_step(x): ...
"""

from __future__ import annotations

from l2attr.steps.measure.record import ENV

__all__ = ["ENV"]
