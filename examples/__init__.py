"""Runnable models built on eventjax's public API (not part of the wheel): ``python -m examples.<model>``."""
