"""`l2attr sweep AXIS` (issue #10): when does cross-kernel L2 residency pay? The sweep kind, one
package named for the stages of its flow (docs/house/README.md):

command.py its flags; declare.py what every sweep shares and dispatches to the axis (points x
arms, checked before any GPU work), with axes/ declaring each axis in one module (options, points
and arms, checks, table, chart, judgement); measure/ times it (protocol.py in which order the
table calls run and how one call is timed, device.py what the GPU does for the points' arms,
run.py writes every repeat to the run dir as it is measured, resumable; dram.py, adaptive.py,
occupy_probe.py, distribute.py); table.py defines the files and load.py reads them back, checked
by check/; analyse/ judges the points from the declarations; section/ lays them out in words,
charts and HTML.
"""
