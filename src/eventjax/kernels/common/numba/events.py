"""Event tests and row loops the families' numba kernels share (imported only with those kernels: numba is optional).

An event is ``True`` in a bool array, or an entry ``> 0`` in a numeric one
(NaN is never an event); see ``docs/semantics.rst``.

Why the loops look the way they do (the measurements are on the docs'
Kernel speed page): a column index is read as an unsigned 64-bit
number, so a negative one becomes huge and one unsigned compare drops every
out-of-range column; numba then also emits no negative-index wraparound,
which otherwise kept LLVM from vectorizing. Binary row sums
read ``flags[min(j, n)]`` from a bool copy of the events with a ``False``
sentinel at ``n`` (one small allocation per call, cheaper than testing ``j < n`` and the
event separately). Sums
are selects (a non-event adds ``+0.0``, which changes no value: every
accumulator starts at ``+0.0``), never products with 0/1, so a NaN weight
without an event adds nothing. Kernels that use these helpers are compiled
with :data:`FASTMATH` (reassociation only) so the row sums vectorize.
"""

from __future__ import annotations

import functools

import numba
import numpy as np

from eventjax.backends.numba import empty_vector, launch_begin, launch_end, prefetch, threading_layer

__all__ = ['FASTMATH', 'PARALLEL_MIN_WORK', 'PREFETCH_MIN_ENTRIES', 'ROWS_AHEAD', 'binary_row_sum', 'by_direction',
           'by_work', 'event_columns', 'event_flags', 'event_indices', 'float_row_sum', 'prefetch_entries',
           'row_has_event', 'row_plus_entry', 'serial_and_parallel', 'stored_entries', 'trusted_indptr']

# Reassociation (and fused multiply-add) only: NaN and Inf keep their IEEE meaning.
FASTMATH = {'reassoc', 'contract'}

# A kernel that visits this many entries or more (stored connections, or
# matrix entries, times batch columns) runs its row loop on numba's threads
# (prange): from here on a call takes a few hundred microseconds on one
# thread, far more than waking the others. Smaller calls stay on the calling
# thread, where serving threads already give parallelism. Read when a kernel
# is lowered: tests lower it to reach the parallel path with small problems.
PARALLEL_MIN_WORK = 1 << 17


def serial_and_parallel(gather):
    """``gather``, whose row loop is a ``numba.prange``, compiled twice: serial, and on numba's threads.

    Neither keeps a numba cache entry of its own (one function under two
    sets of flags would share it); the handler compiled from either is
    cached by the bridge under the kernel's fingerprint, flags included.

    Example:
        >>> serial, parallel = serial_and_parallel(lambda x, out, err: None)
        >>> serial.targetoptions.get('parallel'), parallel.targetoptions['parallel']
        (None, True)
    """
    return numba.njit(fastmath=FASTMATH)(gather), numba.njit(fastmath=FASTMATH, parallel=True)(gather)


def by_direction(name: str, scatter, gather, gather_parallel):
    """The kernel factory of operator ``name``: ``scatter`` when transposed, else the gather chosen by :func:`by_work`.

    A scatter stays serial (rows of the output would collide); the gather's
    rows are independent. ``scatter`` may be a :func:`by_inputs` pick (of
    ``eventjax.backends.numba``) where its kernel depends on the inputs.

    A matrix too small for any call to reach :data:`PARALLEL_MIN_WORK` (``m *
    n`` entries times batch columns; only repeated indices could exceed it)
    gets ``gather`` alone, so its handler never compiles the parallel variant
    (seconds per dtype signature).

    Example:
        >>> factory = by_direction('op', 'S', 'G', 'P')
        >>> factory(transpose=True, shape=(10, 10), outs=()), factory(transpose=False, shape=(10, 10), outs=())
        ('S', 'G')
    """
    def factory(*, transpose, shape, outs):
        if transpose:
            return scatter
        batch = outs[0].shape[1] if outs and len(outs[0].shape) > 1 else 1
        if shape[0] * shape[1] * batch < PARALLEL_MIN_WORK:
            return gather
        return by_work(gather, gather_parallel, stored_entries)
    factory.__name__ = factory.__qualname__ = f'{name}_kernel'
    factory.__doc__ = f'The kernel for ``{name}``.'
    return factory


@numba.njit(cache=True, inline='always')
def stored_entries(indices, out):
    """What a CSR or FCN gather visits: every stored index, once per batch column of ``out``."""
    return indices.size * (out.size // out.shape[0] if out.shape[0] > 0 else 1)


def by_work(serial, parallel, work):
    """One kernel that runs ``parallel`` when the call's work reaches :data:`PARALLEL_MIN_WORK`, else ``serial``.

    ``serial`` and ``parallel`` share one signature: ``(weights, indices, x,
    out, err)`` (FCN), ``(data, indices, indptr, x, out, err)`` (CSR) or
    ``(weights, x, out)`` (dense). ``work`` is an njit function of
    ``(indices, out)``, or for the dense signature of all three arguments.
    The choice is made per call, from the sizes and events the call sees, so
    one compiled handler serves small and large calls. The parallel run goes
    through the numba bridge's launch hooks, so it uses the thread count
    ``eventjax.backends.numba.set_num_threads`` sets; the serial one never wakes
    numba's threads. Under ``NUMBA_BOUNDSCHECK=1`` it is ``serial`` (a failed
    check inside a parallel region is not safe).

    Example:
        >>> import numba
        >>> serial = numba.njit(lambda w, x, out: None)
        >>> by_work(serial, serial, numba.njit(lambda w, x, out: 0)).__name__
        '<lambda>'
    """
    return _by_work(serial, parallel, work, PARALLEL_MIN_WORK, bool(numba.config.BOUNDSCHECK))


@functools.cache
def _by_work(serial, parallel, work, min_work, boundscheck):
    if boundscheck:
        return serial
    threading_layer()  # binds the launch hooks to this process
    # One template per signature: the bridge reads the kernel's parameters (no *args), and numba
    # freezes serial, parallel, work and min_work into each closure's machine code.
    arity = serial.py_func.__code__.co_argcount
    if arity == 3:
        def kernel(weights, x, out):
            if work(weights, x, out) >= min_work:
                launch_begin()
                parallel(weights, x, out)
                launch_end()
            else:
                serial(weights, x, out)
    elif arity == 5:
        def kernel(weights, indices, x, out, err):
            if work(indices, out) >= min_work:
                launch_begin()
                parallel(weights, indices, x, out, err)
                launch_end()
            else:
                serial(weights, indices, x, out, err)
    elif arity == 6:
        def kernel(data, indices, indptr, x, out, err):
            if work(indices, out) >= min_work:
                launch_begin()
                parallel(data, indices, indptr, x, out, err)
                launch_end()
            else:
                serial(data, indices, indptr, x, out, err)
    else:
        raise TypeError(f'by_work(): kernels take 3, 5 or 6 arguments, {serial.py_func.__name__} takes {arity}.')
    kernel.__name__ = kernel.__qualname__ = serial.py_func.__name__.lstrip('_')
    return numba.njit(kernel)


@numba.njit(cache=True)
def event_indices(x):
    """The indices of the events of a vector ``x``, in order."""
    idx = empty_vector(x.shape[0], np.int64)
    count = 0
    for i in range(x.shape[0]):
        if x[i] > 0:
            idx[count] = i
            count += 1
    return idx[:count]


# A binary scatter with this many stored entries or more prefetches the
# entries of the event row ROWS_AHEAD rows ahead of the one it adds: at
# n = 100,000 (80 MB of entries) waiting for each row cost a fifth of the
# time; 2 rows measured best (4 and 8 evict what is still needed). Below
# about 32 MB of entries (the last-level cache) the list of events and the
# hints cost more than they saved: 13% at n = 10,000, 5% at 20,000, even
# at 40,000 (4M entries, just under this bound).
PREFETCH_MIN_ENTRIES = 1 << 22
ROWS_AHEAD = 2


@numba.njit(cache=True, inline='always')
def prefetch_entries(a, lo, hi):
    """Ask the caches for ``a[lo:hi]`` of a 1-D array, one 64-byte line at a time (a hint: never faults)."""
    for q in range(lo, hi, max(1, 64 // a.itemsize)):
        prefetch(a, q)


@numba.njit(cache=True)
def event_flags(x):
    """A bool copy of the events of a vector ``x`` with one more entry, ``False``: ``flags[min(j, n)]`` tests ``j``."""
    n = x.shape[0]
    flags = empty_vector(n + 1, np.bool_)
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


@numba.njit(cache=True, fastmath=FASTMATH, inline='always')
def row_plus_entry(out, i, B, j, w, binary):
    """``out[i, :] += w * B[j, :]`` (binary: ``w`` where ``B[j, :]`` is an event): one stored entry of an mm gather."""
    zero = out.dtype.type(0)
    for c in range(out.shape[1]):
        if binary:
            out[i, c] += w if B[j, c] > 0 else zero
        else:
            out[i, c] += w * B[j, c]


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


@numba.njit(cache=True)
def trusted_indptr(indptr, nnz):
    """``indptr`` itself when it is valid, else its repair ``cummax(clip(indptr, 0, nnz))`` (a copy).

    The other backends get the same repair in JAX before their kernel
    (``checks.repair_indptr``); here it costs one pass over ``indptr`` and
    no XLA op before the custom call.
    """
    valid = indptr.shape[0] == 0 or (indptr[0] >= 0 and indptr[indptr.shape[0] - 1] <= nnz)
    for i in range(indptr.shape[0] - 1):
        valid &= indptr[i] <= indptr[i + 1]
    if valid:
        return indptr
    # comparisons, not min/max or np.empty: each of those is a compile of its own on a first call
    fixed = empty_vector(indptr.shape[0], indptr.dtype)
    hi = np.int64(0)
    for i in range(indptr.shape[0]):
        v = np.int64(indptr[i])
        if v > hi:
            hi = v if v < nnz else np.int64(nnz)
        fixed[i] = hi
    return fixed
