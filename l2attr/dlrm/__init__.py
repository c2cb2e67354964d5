"""The EmbeddingBag ladder of the DLRM study: the first workload on l2attr's engine.

Everything that knows about embedding tables, the artifact's kernels, rungs, reuse profiles,
traces and the design-space sweeps lives here, in the flow's order: `declare` (rungs, families,
variants), `config` and `workload/` (the inputs), `compile`/`ptxas` (its kernels), `measure/` (the
cell protocol applied to it), `profile/` (its Nsight Compute plan and timeline) and `sweep/`. The
engine below (measure.cell, measure.timer, profile.ncu_*, experiment/) knows none of it.
"""
