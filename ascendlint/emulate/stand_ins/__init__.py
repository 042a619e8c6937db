"""Stand-ins for modules and ops that kernels use but that cannot run on CPU as installed."""
