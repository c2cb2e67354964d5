"""The ladder's readings of its cells: the latency ladder and what the study page judges from it."""
