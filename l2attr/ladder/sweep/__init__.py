"""`l2attr sweep AXIS` (issue #10): when does cross-kernel L2 residency pay?

spec.py says what a sweep measures (points x arms, checked before any GPU work), schedule.py in
which order the table calls run, protocol.py how one call is timed, device.py what the GPU does
for each arm, run.py writes every repeat to the run dir as it is measured (resumable), and
tables.py defines the files. The judgements live in l2attr/analysis/sweep_*.py.
"""
