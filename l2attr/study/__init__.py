"""The cross-run study: every run kind's readings of a loaded study made once, for the page and the
README (issue 51, docs/house/README.md: above the kinds it reads).

- study:     `analyse(study)` runs every analysis once (the ladder's, layer B's, the caveats) on
             what `load_runs` (analysis/load.py) read
- families:  the three kernel families side by side, per profile
- findings:  the figures the README's prose states, as named values
- result:    `LadderResult`, what `l2attr.ladder()` returns
"""

from l2attr.analysis.load import Study, load_runs
from l2attr.study.study import Analysis, analyse

__all__ = ["Study", "load_runs", "Analysis", "analyse"]
