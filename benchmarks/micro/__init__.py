"""Benchmarks; run with ``python -m benchmarks.micro`` (``make bench``)."""
