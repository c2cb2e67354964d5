"""`l2attr sweep AXIS` (issue #10): when does cross-kernel L2 residency pay?

axes/ declares each axis in one module (options, points and arms, checks, table, chart, judgement)
and registers it; spec.py holds what every sweep shares and dispatches to the axis (points x arms,
checked before any GPU work), protocol.py in which order the table calls run and how one call is
timed, device.py what the GPU does for the points' arms, run.py writes every repeat to the
run dir as it is measured (resumable), and tables.py defines the files. The tables and judgements
are built in l2attr/analysis/sweep*.py from the declarations.
"""
