"""Analysis of l2attr run dirs: pure functions on the tidy tables (CPU only, no GPU imports).

- load:          read run dirs, refuse mixed configs, concatenate tables with a `run` column
- amortise:      the amortisation formula, speedup(k) and the break-even k (the ladder's and the sweep's)
- attribution:   layer B per role: hit rates, DRAM bytes, the pin's traffic, hotness gradient
- caveats:       validity control, ncu settings, warnings, assumptions

`analyse(study)` runs all of these once, with the ladder kind's own readings (l2attr/ladders/analyse/:
the latency ladder, amortisation, charges, share, roofline, verdict, answer): l2attr/study/, above
the kinds it reads.

Every returned row carries `source` (the input rows behind it) and `missing` (field -> reason for
each NaN), so nothing unmeasured is ever shown as zero.
"""

from l2attr.analysis.load import Study, load_runs

__all__ = ["Study", "load_runs"]
