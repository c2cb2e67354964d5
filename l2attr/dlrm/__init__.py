"""The EmbeddingBag ladder of the DLRM study: the first workload on l2attr's engine.

Everything that knows about embedding tables, the artifact's kernels, rungs, reuse profiles and
traces lives here, in the flow's order: `declare` (rungs, families, variants), `config` and
`workload/` (the inputs), `compile`/`ptxas` (its kernels), `measure/` (what measuring a variant
takes: options, GPU buffers, kernels, checks, the residency window, the prefetch) and `profile/`
(its Nsight Compute plan and timeline). The ladder and the design-space sweeps measure its
variants from packages of their own, l2attr/ladders/ and l2attr/sweep/ (issue 51). The engine below (measure.cell,
measure.timer, profile.ncu_*, experiment/) knows none of it.
"""
