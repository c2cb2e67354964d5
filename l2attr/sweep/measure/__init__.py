"""How a sweep measures: the call protocol, the device, the run writer, DRAM under ncu, the
adaptive repeats, the occupy probe and the workers."""
