"""The DLRM inference step, marked for `l2attr step --ncu -- python marked_dlrm.py [VARIANT]`.

VARIANT: no-pin (default), inline or side-stream (dlrm_step.py). Under Nsight Compute
(application replay) each pass re-runs this script; `--ncu-metrics dram` keeps it to DRAM bytes.
"""

import sys

import torch

import l2attr
from dlrm_step import build

VARIANT = sys.argv[1] if len(sys.argv) > 1 else "no-pin"
step = build()


@l2attr.step_range(f"dlrm-step-{VARIANT}-marked")
def marked():
    with torch.inference_mode():
        return step(VARIANT)


for _ in range(3):
    marked()
torch.cuda.synchronize()
