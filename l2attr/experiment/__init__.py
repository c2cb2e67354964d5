"""Any producer, any consumer: declare a pair, time it honestly, profile it without erasing L2.

    import l2attr
    exp = l2attr.Experiment("my-pair", producer=pin, consumer=attention, reference=ref)
    cells = exp.time()        # exp_cells.csv as a DataFrame, and exp.run_dir
    exp.profile()             # this script re-entered as the Nsight Compute child
"""

from l2attr.experiment.annotate import annotate
from l2attr.experiment.api import Experiment

__all__ = ["Experiment", "annotate"]
