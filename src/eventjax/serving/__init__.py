"""Helpers for serving eventjax from a web process: warm-up and dynamic batching."""

from eventjax.serving.batching import DynamicBatcher
from eventjax.serving.warmup import Warmup, WarmupEntry

__all__ = ['DynamicBatcher', 'Warmup', 'WarmupEntry']
