"""The arrays of the events family, from NumPy alone.

``eventjax bench --family events`` builds its problem here, and so does
``brainevent_events.py``, which loads this file by path in the Python 3.12
environment of brainevent 0.3.0, so both time the same arrays from the same seed.
"""

from __future__ import annotations

import numpy as np

__all__ = ['events_problem']


def events_problem(n, rng, rate, *, k):
    """``(data, indices, indptr, spikes)``: ``k`` random targets per row, normal float32 weights, ``rate`` events.

    Example:
        >>> data, indices, indptr, spikes = events_problem(10, np.random.default_rng(0), 0.5, k=3)
        >>> int(indptr[-1]), spikes.dtype
        (30, dtype('bool'))
    """
    indices = rng.integers(0, n, size=n * k, dtype=np.int32)
    data = rng.standard_normal(size=n * k, dtype=np.float32)
    indptr = np.arange(0, n * k + 1, k, dtype=np.int32)
    spikes = rng.random(n) < rate
    return data, indices, indptr, spikes
