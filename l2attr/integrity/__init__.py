"""The integrity contract of every run kind: what a whole, undamaged run dir holds.

Why a package of its own: the loaders (analysis/load.py, sweep/load.py, the tuning
table's reader) each used to check what their author thought of; the same rule (keys unique,
values in range, summaries agreeing with their samples, every declared unit present, a typed
manifest, one workload and GPU per report) is stated here once per table and run kind, and every
break of it is one line naming the file, the row and the rule (or, with `--allow-partial`, a
line at the top of the report and the damaged rows left out).

- rules.py: typed columns, then row rules over one table (unique keys, whole numbers, order, known
  words, bounds)
- tables.py: the contract of each table built from those rules, and the checker a kind hands its
  own tables' contracts to (the sweep's: sweep/check/tables.py)
- summaries.py: tables that must agree with each other (cells vs samples, derived metrics, phases)
- manifest.py: the manifest's types (shape, GPU, dates, bandwidths, control figures)
- the sweep's run (the points and units its manifest declares, all present): sweep/check/
- runs.py: a ladder, profile or timeline run as a whole (units.csv included), and runs combined in
  one report share workload and GPU, or are a comparison
- the fast family's tuning table, read whole or refused: ladders/tuning/table.py
"""

from l2attr.integrity.tables import check_table

__all__ = ["check_table"]
