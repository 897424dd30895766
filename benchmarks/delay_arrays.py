"""The arrays of one delayed delivery, from NumPy alone.

``eventjax bench --family delay`` builds its problem here, and so does
``brainevent_delay.py`` beside it, which loads this file by path in a separate
environment (brainevent 0.3.0 needs Python 3.12), so both time the same
arrays from the same seed.
"""

from __future__ import annotations

import numpy as np

__all__ = ['delay_problem']


def delay_problem(n, rng, rate, *, k, steps):
    """``(ring, spikes, data, indices, indptr, delays)`` of a square network of ``n`` neurons.

    ``k`` random targets per row, normal float32 weights, delays uniform in
    ``steps`` (inclusive), a zero ring of ``steps[1] + 1`` rows, and a spike
    vector with ``rate`` of the neurons active.

    Example:
        >>> ring, spikes, *_ = delay_problem(10, np.random.default_rng(0), 0.5, k=3, steps=(1, 4))
        >>> ring.shape, spikes.dtype
        ((5, 10), dtype('bool'))
    """
    indices = rng.integers(0, n, size=n * k, dtype=np.int32)
    data = rng.standard_normal(size=n * k, dtype=np.float32)
    indptr = np.arange(0, n * k + 1, k, dtype=np.int32)
    delays = rng.integers(steps[0], steps[1] + 1, size=n * k, dtype=np.int32)
    spikes = rng.random(n) < rate
    ring = np.zeros((steps[1] + 1, n), np.float32)
    return ring, spikes, data, indices, indptr, delays
