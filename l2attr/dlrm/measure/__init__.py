"""The ladder's measurement: its GPU buffers, kernels, checks and the run over families x profiles."""
