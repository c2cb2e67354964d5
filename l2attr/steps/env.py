"""The variable `l2attr step` sets for the script it runs (JSON: out, repeats, warmup, name, mode)."""

ENV = "L2ATTR_STEP_CHILD"
