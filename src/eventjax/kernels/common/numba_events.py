"""Event helpers the families' numba kernels share (imported only with those kernels: numba is optional).

An event is ``True`` in a bool array, or an entry ``> 0`` in a numeric one
(NaN is never an event); see ``docs/semantics.rst``.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ['event_columns', 'event_mask']


@numba.njit(cache=True)
def event_mask(x):
    """A bool copy of events: True where an entry is an event."""
    flat = x.reshape(x.size)
    mask = np.empty(flat.size, np.bool_)
    for j in range(flat.size):
        mask[j] = flat[j] > 0
    return mask.reshape(x.shape)


@numba.njit(cache=True)
def event_columns(B, i, active):
    """Write the columns of row ``i`` of ``B`` that hold an event into ``active``; return how many."""
    count = 0
    for col in range(B.shape[1]):
        if B[i, col] > 0:
            active[count] = col
            count += 1
    return count
