"""Numba CPU kernels for the dense operators: ``kernel(weights, spikes, out)``.

Both directions first list the events, then touch only the weights they
select: ``transpose=True`` adds the event rows of ``weights`` (contiguous);
``transpose=False`` sums, per output row, the event columns.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ['binary_densemm_kernel', 'binary_densemv_kernel']


@numba.njit(cache=True)
def _active(spikes):
    idx = np.empty(spikes.shape[0], np.int64)
    count = 0
    for i in range(spikes.shape[0]):
        if spikes[i] > 0:
            idx[count] = i
            count += 1
    return idx[:count]


@numba.njit(cache=True)
def _mv(weights, spikes, out):
    """out[i] = sum of weights[i, j] over the events j."""
    active = _active(spikes)
    for i in range(out.shape[0]):
        acc = out.dtype.type(0)
        for j in active:
            acc += weights[i, j]
        out[i] = acc


@numba.njit(cache=True)
def _mv_transposed(weights, spikes, out):
    """out[:] = sum of the rows weights[i, :] of the events i."""
    out[:] = 0
    for i in _active(spikes):
        for j in range(out.shape[0]):
            out[j] += weights[i, j]


@numba.njit(cache=True)
def _mm(weights, spikes, out):
    """out[i, c] = sum of weights[i, j] over the events spikes[j, c]."""
    out[:] = 0
    for j in range(spikes.shape[0]):
        for c in range(spikes.shape[1]):
            if spikes[j, c] > 0:
                for i in range(out.shape[0]):
                    out[i, c] += weights[i, j]


@numba.njit(cache=True)
def _mm_transposed(weights, spikes, out):
    """out[j, c] = sum of weights[i, j] over the events spikes[i, c]."""
    out[:] = 0
    for i in range(spikes.shape[0]):
        active = _active(spikes[i])
        if active.size == 0:
            continue
        for j in range(out.shape[0]):
            w = weights[i, j]
            for c in active:
                out[j, c] += w


def binary_densemv_kernel(*, transpose):
    """The kernel for ``binary_densemv``."""
    return _mv_transposed if transpose else _mv


def binary_densemm_kernel(*, transpose):
    """The kernel for ``binary_densemm``."""
    return _mm_transposed if transpose else _mm
