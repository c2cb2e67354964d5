"""The experiment kind's judgement: the verdict per experiment (cells), the DRAM table and the validity control (dram)."""
