"""The row contracts of the sweep's tables (points, samples, units, DRAM), handed to the core's
table checker (integrity/tables.py check_table, which holds the shared rules and every other
table's contract).
"""

from __future__ import annotations

from l2attr.integrity.tables import SPREAD, TIMES, Contract
from l2attr.sweep.axes import REGISTERED as SWEEP_AXES
from l2attr.sweep.measure.dram import SWEEP_DRAM
from l2attr.sweep.table import SWEEP_POINTS, SWEEP_SAMPLES, SWEEP_UNITS
from l2attr.vocab import Arm, Family, Order, Pin, Timer, SWEEP_MODES, SWEEP_QUANTITIES, SWEEP_ROLES

CONTRACTS: dict[str, Contract] = {c.table.name: c for c in (
    Contract(SWEEP_POINTS, whole=("n_samples", "k", "hot_rows", "occupy_bytes", "pollute_bytes"), ordered=SPREAD,
             together=(("ci95_lo_us", "ci95_hi_us"),), filled=("profile", "point"),
             known={"axis": SWEEP_AXES, "family": Family.values(), "pin": Pin.values(),
                    "order": Order.values(), "arm": Arm.values(), "quantity": SWEEP_QUANTITIES,
                    "timer": Timer.values()},
             times=TIMES),
    Contract(SWEEP_SAMPLES, whole=("repeat", "group", "table", "batch", "position", "k"),
             known={"axis": SWEEP_AXES, "family": Family.values(), "pin": Pin.values(),
                    "order": Order.values(), "arm": Arm.values(), "mode": SWEEP_MODES,
                    "role": SWEEP_ROLES, "timer": Timer.values()},
             times=("time_us",),
             at_least={"time_us": 0.0, "repeat": 0.0, "group": 0.0, "table": 0.0, "batch": 0.0, "position": 0.0}),
    Contract(SWEEP_UNITS, whole=("repeat", "rows"), known={"family": Family.values(), "arm": Arm.values(),
                                                           "mode": SWEEP_MODES},
             at_least={"repeat": 0.0, "rows": 1.0}),
    Contract(SWEEP_DRAM, whole=("table", "group", "position", "dram_read_bytes"),
             known={"family": Family.values(), "arm": Arm.values(), "role": SWEEP_ROLES},
             at_least={"dram_read_bytes": 0.0, "duration_ns": 0.0, "table": 0.0, "group": 0.0, "position": 1.0}),
)}
