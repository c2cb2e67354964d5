"""The step kind's checks: its manifest rules, its tables' counts, the program check."""
