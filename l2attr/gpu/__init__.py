"""GPU side: lazy torch/cupy imports, kernel compilation, device facts. Import only on a GPU path."""
