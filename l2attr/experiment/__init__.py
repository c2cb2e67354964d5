"""Any producer, any consumer: declare a pair, time it honestly, profile it without erasing L2.

    import l2attr
    exp = l2attr.Experiment("my-pair", producer=pin, consumer=attention, reference=ref)
    result = exp.time()       # .cells (exp_cells.csv), .verdict, .run_dir
    exp.profile(run=result)   # this script re-entered as the Nsight Compute child

`l2attr.Experiment` itself is l2attr/api.py (its time() returns a judged result); `l2attr.annotate`
is l2attr/annotation.py, shared with the step kind.
"""
