"""Workloads for the EmbeddingBag kernels: artifact traces, built-in reuse profiles, hot sets.

The GPU code needs only `build_workload` (and the `Workload` it returns); the rest is here for
the `l2attr traces` command and for tests.
"""

from l2attr.dlrm.workload.build import Workload, build_workload, workload_shape
from l2attr.dlrm.workload.hotset import coverage, id_counts, read_hot_file, top_k
from l2attr.dlrm.workload.profiles import canonical_profile, generate, period, stream
from l2attr.dlrm.workload.stats import TraceStats, reuse_distances, trace_stats
from l2attr.dlrm.workload.traces import Trace, circular, read_trace, write_ids

__all__ = [
    "Trace", "TraceStats", "Workload", "build_workload", "canonical_profile", "circular",
    "coverage", "generate", "id_counts", "period", "read_hot_file", "read_trace",
    "reuse_distances", "stream", "top_k", "trace_stats", "workload_shape", "write_ids",
]
