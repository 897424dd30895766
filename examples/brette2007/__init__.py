"""Brette et al. (2007) benchmarks 1 (COBA) and 2 (CUBA) as NEST's examples define them, on eventjax."""
