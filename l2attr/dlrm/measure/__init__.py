"""What measuring a testbed variant takes, shared by the ladder, the sweep and the profile: the options
model, GPU buffers, kernels, checks, the residency window and the prefetch (the ladder's run over
families x profiles is l2attr/ladders/measure/)."""
