"""Layer B: Nsight Compute attribution of L2 behaviour per role (pin vs consumer).

metricsets  which counters to collect, per chip (data in metrics/*.toml)
ncu_cmd     the ncu command line, refusing settings that erase the pin's L2 state
ncu_errors  ncu's ==ERROR== lines -> what to do
ncu_import  .ncu-rep -> the tidy METRICS table (via ncu_report)
nsys        timelines where nsys works (per-call pin / gap / consumer)
orchestrate plan, run and judge a profile run (sweep + validity control)
"""
