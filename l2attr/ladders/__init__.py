"""`l2attr ladder`: the DLRM study's five-variant measurement. The ladder kind, one package named for
the stages of its flow (docs/house/README.md); it declares with the DLRM testbed (l2attr/dlrm/:
rungs, families, workload, kernels, options):

command.py its flags; measure/ times it (run.py runs families x profiles into a run dir, resumable;
protocol.py how one cell is timed; distribute.py its units on many GPUs); table.py writes
samples.csv as each cell ends, then cells.csv; analyse/ reads them (the latency ladder, the
amortisation, the charges, the L2 share, the verdict, the answer, the roofline); section.py lays
them out on the console; tuning/ reads the fast family's tuning table (`l2attr tuning`, `ladder
--tuning`).
"""
