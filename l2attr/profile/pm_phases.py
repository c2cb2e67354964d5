"""Find the pin burst, the sync gap and the consumer burst in a PM-sampled timeline.

A unit is busy from BUSY_PCT % of its peak (catalog.sampled, shared with the timeline chart);
busy samples form bursts, and a burst with SM work is a kernel's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from l2attr.catalog.sampled import BUSY_KEYS, BUSY_PCT
from l2attr.vocab import Phase

if TYPE_CHECKING:
    import pandas as pd

PHASE_COLUMNS = ["range", "phase", "start_us", "end_us", "duration_us", "samples"]


def _bursts(busy: Sequence[bool], merge_samples: int) -> list[tuple[int, int]]:
    """[first, last] index runs of busy samples; runs split by <= merge_samples idle ones are joined."""
    runs: list[list[int]] = []
    for i, b in enumerate(busy):
        if not b:
            continue
        if runs and i - runs[-1][1] - 1 <= merge_samples:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    return [(a, b) for a, b in runs]


def _range_phases(name: str, wide: "pd.DataFrame", busy_pct: float, merge_samples: int) -> list[dict]:
    import pandas as pd

    signals = [k for k in BUSY_KEYS if k in wide]
    if not signals or len(wide) < 2:
        return []
    busy = pd.concat([wide[k] >= busy_pct for k in signals], axis=1).any(axis=1).to_numpy()
    kernel_signs = []
    if "ctas_launched" in wide:
        kernel_signs.append(wide["ctas_launched"] > 0)
    if "sm_inst_pct_of_peak" in wide:
        kernel_signs.append(wide["sm_inst_pct_of_peak"] >= busy_pct)
    kernel = (pd.concat(kernel_signs, axis=1).any(axis=1).to_numpy() if kernel_signs
              else [True] * len(wide))
    t = wide.index.to_numpy(dtype=float)
    step = float(pd.Series(t).diff().median())
    out = [{"phase": (Phase.KERNEL if any(kernel[a:b + 1]) else Phase.OTHER).value, "start_us": float(t[a]),
            "end_us": float(t[b] + step), "samples": b - a + 1}
           for a, b in _bursts(list(busy), merge_samples)]
    kernels = [row for row in out if row["phase"] == Phase.KERNEL]
    if len(kernels) >= 2:
        pin, consumer = kernels[0], kernels[-1]
        pin["phase"], consumer["phase"] = Phase.PIN.value, Phase.CONSUMER.value
        between = int(((t >= pin["end_us"]) & (t < consumer["start_us"])).sum())
        out.append({"phase": Phase.GAP.value, "start_us": pin["end_us"], "end_us": consumer["start_us"],
                    "samples": between})
    for row in out:
        row["range"] = name
        row["duration_us"] = row["end_us"] - row["start_us"]
    return sorted(out, key=lambda r: (r["start_us"], r["phase"] != Phase.GAP))


def phases(timeline: "pd.DataFrame", busy_pct: float = BUSY_PCT, merge_samples: int = 1) -> "pd.DataFrame":
    """Bursts of activity in each range, labelled pin / gap / consumer.

    A sample is busy when the L2, DRAM or SM throughput reaches `busy_pct` % of peak; busy samples
    form bursts (idle runs of up to `merge_samples` samples do not split one). A burst with thread
    blocks launched or SM instructions is kernel work: the first is the pin, the last the
    consumer, and the span between them the gap. Busy bursts without SM work (copy engine:
    memcpy/memset) are `other`; extra kernel bursts between pin and consumer are `kernel`. A
    burst spans [first busy sample, last busy sample + one interval). Fewer than two kernel bursts
    give no pin/consumer labels; no busy signal at all gives an empty table.
    """
    import pandas as pd

    out: list[dict[str, Any]] = []
    for name, rows in timeline.groupby("range", sort=False):
        wide = rows.pivot_table(index="t_us", columns="quantity", values="value", aggfunc="first").sort_index()
        out += _range_phases(str(name), wide, busy_pct, merge_samples)
    return pd.DataFrame(out, columns=PHASE_COLUMNS)
