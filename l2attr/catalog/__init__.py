"""The metric catalog: every metric, rate and sampled quantity of `metrics/*.toml`, per chip.

Profiling (which names to ask ncu for) and analysis (what a recorded name means) both read it,
so it sits below both: analysis never imports the profiler to learn a metric's key.
"""
