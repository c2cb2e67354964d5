"""The step kind's measuring: record, trace, surgery, arms, timing, pointers, ncu."""
