"""Many GPUs, many hosts: a run's plan split into independent units, one process per GPU (Dask).

A unit is what one GPU measures in one go and what the analysis may compare within itself: a
ladder's family x profile (every rung, L2 state and repeat of it), a sweep's family x profile
(every point, arm and repeat), one Nsight Compute child of `l2attr profile`, a chunk of the fast
family's tuning grid with the tuned reference beside it. Workers measure and return; the lead
process alone writes the run dir, each unit as it arrives, so `--resume` works across workers
and across a lost one. Dask (`pip install -e '.[gpu,cluster]'`) is optional: without
`--workers` / `--scheduler` nothing here is imported and today's single-process path runs.
"""
