"""Numba CPU kernels for the dense operators: ``kernel(weights, spikes, out)``.

Every kernel first lists the events, then touches only the weights they
select (the docs' Kernel speed page has the measurements):

- ``transpose=True`` adds the event rows of ``weights`` (contiguous), four
  rows per pass over ``out`` so ``out`` is loaded and stored a quarter as
  often; the matrix product adds them into a transposed ``(batch, n)``
  accumulator (one contiguous row per batch column) and transposes once.
- ``transpose=False`` sums, per output row, the weights at the event
  columns: a list of ``(column, batch column)`` pairs in column order, so
  each row of ``weights`` is read front to back once. The vector product
  prefetches the next row's event columns meanwhile, which the hardware
  prefetcher cannot guess; the matrix product's list repeats columns across
  the batch, where prefetching lost time, so it has none.

Sums are selects over listed events, never products with 0/1. From
``numba.events.PARALLEL_MIN_WORK`` visited weights on (rows times events),
``transpose=False`` runs its rows on numba's threads (no two threads write
one row). ``transpose=True`` stays serial: split by output columns inside a
``prange`` its row sums stopped vectorizing.
"""

from __future__ import annotations

import numba
import numpy as np

from eventjax.backends.numba import empty_vector, prefetch
from eventjax.kernels.common.numba.events import FASTMATH, by_work, event_indices

__all__ = ['binary_densemm_kernel', 'binary_densemv_kernel']


@numba.njit(cache=True, inline='always')
def _count(spikes):
    """How many entries of ``spikes`` are events."""
    count = 0
    for e in spikes.ravel():
        count += e > 0
    return count


@numba.njit(cache=True)
def _rows_work(weights, spikes, out):
    """Weights a ``transpose=False`` product reads: output rows x events."""
    return out.shape[0] * _count(spikes)


@numba.njit(cache=True)
def _events(spikes):
    """The events of a matrix as (row, column) pairs, row-major."""
    rows = empty_vector(spikes.size, np.int64)
    cols = empty_vector(spikes.size, np.int64)
    count = 0
    for j in range(spikes.shape[0]):
        for c in range(spikes.shape[1]):
            if spikes[j, c] > 0:
                rows[count] = j
                cols[count] = c
                count += 1
    return rows[:count], cols[:count]


@numba.njit(cache=True, inline='always')
def _prefetch_next_row(weights, columns, i):
    """Ask the caches for row ``i + 1``'s weights at ``columns`` while row ``i`` is summed."""
    if i + 1 < weights.shape[0]:
        for a in range(columns.shape[0]):
            prefetch(weights, (i + 1, columns[a]))


@numba.njit(cache=True, fastmath=FASTMATH, inline='always')
def _mv_row(weights, active, out, i):
    _prefetch_next_row(weights, active, i)
    acc = out.dtype.type(0)
    for a in range(active.shape[0]):
        acc += weights[i, active[a]]
    out[i] = acc


@numba.njit(cache=True, fastmath=FASTMATH)
def _mv(weights, spikes, out):
    """out[i] = sum of weights[i, j] over the events j."""
    active = event_indices(spikes)
    for i in range(out.shape[0]):
        _mv_row(weights, active, out, i)


@numba.njit(cache=True, fastmath=FASTMATH, parallel=True)
def _mv_parallel(weights, spikes, out):
    active = event_indices(spikes)
    for i in numba.prange(out.shape[0]):
        _mv_row(weights, active, out, i)


@numba.njit(cache=True, fastmath=FASTMATH, inline='always')
def _add_rows(weights, active, acc):
    """acc[:] += the rows weights[active[a], :], four rows per pass over acc."""
    n, count = acc.shape[0], active.shape[0]
    a = 0
    while a + 4 <= count:
        r0, r1, r2, r3 = active[a], active[a + 1], active[a + 2], active[a + 3]
        for j in range(n):
            acc[j] += (weights[r0, j] + weights[r1, j]) + (weights[r2, j] + weights[r3, j])
        a += 4
    while a < count:
        r0 = active[a]
        for j in range(n):
            acc[j] += weights[r0, j]
        a += 1


@numba.njit(cache=True, fastmath=FASTMATH)
def _mv_transposed(weights, spikes, out):
    """out[:] = sum of the rows weights[i, :] of the events i."""
    out[:] = 0
    _add_rows(weights, event_indices(spikes), out)


@numba.njit(cache=True, fastmath=FASTMATH, inline='always')
def _mm_row(weights, rows, cols, out, i):
    zero = out.dtype.type(0)
    for c in range(out.shape[1]):
        out[i, c] = zero
    for e in range(rows.shape[0]):
        out[i, cols[e]] += weights[i, rows[e]]


@numba.njit(cache=True, fastmath=FASTMATH)
def _mm(weights, spikes, out):
    """out[i, c] = sum of weights[i, j] over the events spikes[j, c]."""
    rows, cols = _events(spikes)
    for i in range(out.shape[0]):
        _mm_row(weights, rows, cols, out, i)


@numba.njit(cache=True, fastmath=FASTMATH, parallel=True)
def _mm_parallel(weights, spikes, out):
    rows, cols = _events(spikes)
    for i in numba.prange(out.shape[0]):
        _mm_row(weights, rows, cols, out, i)


@numba.njit(cache=True, fastmath=FASTMATH)
def _mm_transposed(weights, spikes, out):
    """out[j, c] = sum of weights[i, j] over the events spikes[i, c]."""
    n, batch = out.shape[0], out.shape[1]
    acc = np.zeros((batch, n), out.dtype)
    for c in range(batch):
        _add_rows(weights, event_indices(spikes[:, c]), acc[c])
    for j in range(n):
        for c in range(batch):
            out[j, c] = acc[c, j]


def binary_densemv_kernel(*, transpose):
    """The kernel for ``binary_densemv``."""
    if transpose:
        return _mv_transposed
    return by_work(_mv, _mv_parallel, _rows_work)


def binary_densemm_kernel(*, transpose):
    """The kernel for ``binary_densemm``."""
    if transpose:
        return _mm_transposed
    return by_work(_mm, _mm_parallel, _rows_work)
