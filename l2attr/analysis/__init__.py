"""Analysis of l2attr run dirs: pure functions on the tidy tables (CPU only, no GPU imports).

- load:          read run dirs, refuse mixed configs, concatenate tables with a `run` column
- ladder:        layer A latencies, marginal deltas, consumer-only / kernel- / wall-charged speedups
- amortisation:  speedup when one pin serves k calls, break-even k (vs baseline and vs OptMT)
- share:         the pin's saving as a share of step time, consumer-only and charged
- roofline:      achieved bandwidth over the measured HBM copy bandwidth
- attribution:   layer B per role: hit rates, DRAM bytes, the pin's traffic, hotness gradient
- verdict:       one row per profile for the top of the report
- caveats:       validity control, ncu settings, warnings, assumptions
- study:         `analyse(study)` runs all of the above once

Every returned row carries `source` (the input rows behind it) and `missing` (field -> reason for
each NaN), so nothing unmeasured is ever shown as zero.
"""

from l2attr.analysis.load import Study, load_runs
from l2attr.analysis.study import Analysis, analyse

__all__ = ["Study", "load_runs", "Analysis", "analyse"]
