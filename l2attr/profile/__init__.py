"""Layer B: Nsight Compute attribution of L2 behaviour per role (pin vs consumer).

metricsets   which metrics a run asks ncu for (names from l2attr.catalog, checked with ncu)
ncu_cmd      the ncu command line, refusing settings that erase the pin's L2 state
ncu_errors   ncu's ==ERROR== lines -> what to do
ncu_file     an .ncu-rep on disk: a report? whole? recorded how?
ncu_rows     the ncu_report child: a report -> plain rows
ncu_import   plain rows -> the tidy METRICS table, with warnings
nsys         timelines where nsys works (per-call pin / gap / consumer)
pm_*         timelines from ncu alone: PM-sampling argv, child, tables (pmsampling), phases
plan, tools, runner, manifest, orchestrate   `l2attr profile`: what to run, the tools, running
             them, what is recorded; timeline: `l2attr profile --timeline`
Nothing here judges or prints: the control's verdict is l2attr.analysis's, output l2attr.commands'.
"""
