"""Benchmarks; run with ``python -m bench`` (``make bench``)."""
