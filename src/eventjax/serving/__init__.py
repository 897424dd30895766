"""Helpers for serving eventjax from a web process: warm-up, filled disk caches and dynamic batching."""

from eventjax.serving.batching import DynamicBatcher
from eventjax.serving.disk_cache import warm
from eventjax.serving.warmup import Warmup, WarmupEntry

__all__ = ['DynamicBatcher', 'Warmup', 'WarmupEntry', 'warm']
