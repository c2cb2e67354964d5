"""Layer A: time the ladder with CUDA events and host clocks; summarise samples (CPU-testable)."""
