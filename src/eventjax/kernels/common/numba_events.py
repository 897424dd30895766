"""Event tests and row loops the families' numba kernels share (imported only with those kernels: numba is optional).

An event is ``True`` in a bool array, or an entry ``> 0`` in a numeric one
(NaN is never an event); see ``docs/semantics.rst``.

Why the loops look the way they do (measured at m = n = 4000, 100 entries
per row, 2% events, on AVX2): a column index is read as an unsigned 64-bit
number, so a negative one becomes huge and one unsigned compare drops every
out-of-range column; numba then also emits no negative-index wraparound,
which otherwise kept LLVM from vectorizing and cost 2-3x. Binary row sums
read ``flags[min(j, n)]`` from a bool copy of the events with a ``False``
sentinel at ``n`` (one small allocation per call; testing ``j < n`` and the
event separately measured 2x slower). Sums
are selects (a non-event adds ``+0.0``, which changes no value: every
accumulator starts at ``+0.0``), never products with 0/1, so a NaN weight
without an event adds nothing. Kernels that use these helpers are compiled
with :data:`FASTMATH` (reassociation only) so the row sums vectorize.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ['FASTMATH', 'PARALLEL_MIN_ROWS', 'binary_row_sum', 'event_columns', 'event_flags', 'float_row_sum',
           'row_has_event', 'use_parallel']

# Reassociation (and fused multiply-add) only: NaN and Inf keep their IEEE meaning.
FASTMATH = {'reassoc', 'contract'}

# Kernels with this many output rows or more run their row loop on numba's
# threads (prange); smaller calls stay on the calling thread, where serving
# threads already give parallelism. Tests lower it to reach the parallel path.
PARALLEL_MIN_ROWS = 32768


def use_parallel(rows: int) -> bool:
    """Whether a kernel with ``rows`` independent output rows should use its parallel variant.

    Example:
        >>> use_parallel(10) or PARALLEL_MIN_ROWS <= 10
        False
    """
    return rows >= PARALLEL_MIN_ROWS


def by_direction(name: str, scatter, gather, gather_parallel):
    """The kernel factory of operator ``name``: ``scatter`` when transposed, else the gather for the size.

    The gather is ``gather_parallel`` from ``PARALLEL_MIN_ROWS`` output rows
    on (its rows are independent); a scatter stays serial (rows would collide).

    Example:
        >>> factory = by_direction('op', 'S', 'G', 'P')
        >>> factory(transpose=True, shape=(10, 10)), factory(transpose=False, shape=(10, 10))
        ('S', 'G')
    """
    def factory(*, transpose, shape):
        if transpose:
            return scatter
        return gather_parallel if use_parallel(shape[0]) else gather
    factory.__name__ = factory.__qualname__ = f'{name}_kernel'
    factory.__doc__ = f'The kernel for ``{name}``.'
    return factory


@numba.njit(cache=True)
def event_flags(x):
    """A bool copy of the events of a vector ``x`` with one more entry, ``False``: ``flags[min(j, n)]`` tests ``j``."""
    n = x.shape[0]
    flags = np.empty(n + 1, np.bool_)
    for j in range(n):
        flags[j] = x[j] > 0
    flags[n] = False
    return flags


@numba.njit(cache=True, inline='always')
def binary_row_sum(data, indices, start, end, flags, zero):
    """Sum of ``data[k]`` (``data[0]`` when it has one entry) over ``k`` in ``[start, end)`` whose column is an event.

    ``flags`` comes from :func:`event_flags`: a column ``j >= n`` (a negative one read unsigned is huge)
    reads its last entry, ``False``.
    """
    n = np.uint64(flags.shape[0] - 1)
    if data.shape[0] == 1:
        count = 0
        for k in range(start, end):
            count += flags[min(np.uint64(np.int64(indices[k])), n)]
        # A shared weight added count times; no events add nothing (not 0 * NaN).
        return zero if count == 0 else zero + data[0] * data.dtype.type(count)
    acc = zero
    for k in range(start, end):
        acc += data[k] if flags[min(np.uint64(np.int64(indices[k])), n)] else zero
    return acc


@numba.njit(cache=True, inline='always')
def float_row_sum(data, indices, start, end, v, n, zero):
    """Sum of ``data[k] * v[indices[k]]`` over ``k`` in ``[start, end)`` with the column in ``[0, n)``."""
    last = n - np.uint64(1)
    acc = zero
    if data.shape[0] == 1:
        w = data[0]
        for k in range(start, end):
            j = np.uint64(np.int64(indices[k]))
            acc += w * v[min(j, last)] if j < n else zero
        return acc
    for k in range(start, end):
        j = np.uint64(np.int64(indices[k]))
        acc += data[k] * v[min(j, last)] if j < n else zero
    return acc


@numba.njit(cache=True, inline='always')
def row_has_event(B, i):
    """Whether row ``i`` of ``B`` holds an event."""
    hit = False
    for c in range(B.shape[1]):
        hit |= B[i, c] > 0
    return hit


@numba.njit(cache=True)
def event_columns(B, i, active):
    """Write the columns of row ``i`` of ``B`` that hold an event into ``active``; return how many."""
    count = 0
    for col in range(B.shape[1]):
        if B[i, col] > 0:
            active[count] = col
            count += 1
    return count
