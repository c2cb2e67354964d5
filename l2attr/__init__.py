"""l2attr: measure what cross-kernel L2 residency is really worth (DLRM EmbeddingBag L2 pinning)."""

__version__ = "0.1.0"
