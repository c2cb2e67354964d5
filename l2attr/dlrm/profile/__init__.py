"""The ladder's Nsight Compute plan, child runs, manifest and timeline (the engine's profile/ below)."""
