"""Concurrency stress tests for eventjax; run with ``python -m stress``."""
