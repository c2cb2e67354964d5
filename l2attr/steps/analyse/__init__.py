"""The step kind's analyses: the answer, its kernels and edges, the split, the readings."""
