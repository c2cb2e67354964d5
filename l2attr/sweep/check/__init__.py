"""The sweep run's contract: its row contracts, the points against their declaration and samples."""
