"""Fast pure-JAX dense event kernels: the ``jax`` backend (``reference.py`` stays the readable oracle).

``s @ W`` (``transpose=True``) gathers only the rows of ``W`` that hold an
event and adds them up (:mod:`~eventjax.kernels.common.compaction`; for a
matrix ``s``, per column, so a batch costs its events): no product, so a
weight without an event contributes nothing, NaN or inf included. ``W @ s``
with a vector ``s`` of at most ``n / 128`` events gathers, per row, the
weights at the event columns the same way. Each of those weights pulls its
own cache line, so with more events (and for a matrix ``s``) reading every
weight is as fast: one matrix product with the 0/1 events; a non-finite
weight, selected or not, makes that result non-finite, and only then does
the reference's exact (three-product) path run. A full pass to check the
weights first, or a select over all of them, cost XLA:CPU several times the
product itself.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp

from eventjax.kernels.common import accumulation_dtype
from eventjax.kernels.common.compaction import by_event_count, capacities, compact, event_count_prefix, event_mask
from eventjax.kernels.common.events import product_kernels
from eventjax.kernels.dense import reference

__all__ = ['SMALL', 'binary_densemm_kernel', 'binary_densemv_kernel', 'binary_product']


# Below this many weights a product takes microseconds any way it is done, and the
# capacities' branches would only add compile time.
SMALL = 65536


def _event_rows(weights, spikes, acc):
    """``s @ W``: the sum of the event rows of ``W`` (per column of ``s`` for a matrix)."""
    events = event_mask(spikes)
    exact = lambda: reference.binary_product(weights, spikes, transpose=True).astype(acc)
    if spikes.ndim == 1:
        return by_event_count(events, lambda idx: _sum_rows(weights, idx, acc), exact)
    return _event_rows_per_column(weights, events, acc, exact)


def _sum_rows(weights, idx, acc):
    """The sum of the rows ``idx`` of ``weights``; an index past the last row (padding) adds nothing."""
    m = weights.shape[0]
    rows = weights[jnp.minimum(idx, m - 1)].astype(acc)
    return jnp.where((idx < m)[:, None], rows, jnp.zeros((), acc)).sum(axis=0)


# Temporaries of the batched row gather are kept under this many entries (8 MiB of float32):
# XLA:CPU gives a larger one fresh memory at every call, and first touching it cost more than
# the gather (20 ms against 5.5 at 4,000 x 4,000 x 16, and a branch not taken counts too).
_GATHER_ENTRIES = 1 << 19


def _event_rows_per_column(weights, events, acc, exact):
    """``s @ W`` for an event matrix: per column of ``s``, the sum of its event rows.

    Every column's events are compacted to the capacity that holds the
    busiest column; the columns are batched (with ``lax.map`` in chunks when
    the gathered rows would pass ``_GATHER_ENTRIES``); past ``m / 2`` events
    in a column, ``exact()``.
    """
    m, n = weights.shape
    prefix = jax.vmap(event_count_prefix, in_axes=1, out_axes=1)(events)
    caps = capacities(m)

    def rows_of(cap, prefix):
        def column(args):
            col, p = args
            return _sum_rows(weights, compact(col, cap, p), acc)
        columns = (events.T, prefix.T)
        if events.shape[1] * cap * n <= _GATHER_ENTRIES:
            return jax.vmap(column)(columns).T
        return jax.lax.map(column, columns, batch_size=max(1, _GATHER_ENTRIES // max(1, cap * n))).T

    branches = [functools.partial(rows_of, c) for c in caps] + [lambda p: exact()]
    which = jnp.sum(jnp.max(prefix[-1]) > jnp.asarray(caps, jnp.int32)).astype(jnp.int32)
    return jax.lax.switch(which, branches, prefix)


# The event-column gather of ``W @ s`` holds at most this many weights (64 MiB of float32).
# Each gathered weight pulls its own cache line: at n/32 columns (the next capacity up from
# n/128) the gather with its compaction already took longer than a product over every weight.
_COLUMN_ENTRIES = 1 << 24


def _event_columns(weights, spikes, acc):
    """``W @ s`` for an event vector: per row, the weights at the event columns (compacted), summed.

    Up to ``n / 128`` events (3-4x faster than the product at 0.5% events,
    n = 4,000 and 10,000); past that, or where the gather would hold more
    than ``_COLUMN_ENTRIES`` weights, one product (:func:`_checked_product`).
    """
    m, n = weights.shape
    cap = n // 128  # the smallest of compaction.capacities(n)
    if cap < 8 or m * cap > _COLUMN_ENTRIES:
        return _checked_product(weights, spikes, acc)
    mask = event_mask(spikes)

    def columns():
        idx = compact(mask, cap)
        at = jnp.broadcast_to(jnp.minimum(idx, n - 1), (m, cap))
        taken = jnp.take_along_axis(weights, at, axis=1, mode='clip').astype(acc)
        return jnp.where(idx < n, taken, jnp.zeros((), acc)).sum(axis=1)

    # One capacity, chosen by a plain count (a prefix count for by_event_count's ladder cost
    # 3-5% of the product it was not taken for). The finiteness check follows instead of
    # nesting in the product branch, which XLA:CPU also ran slower. A gathered sum is exact
    # already, so recomputing a non-finite one exactly changes nothing.
    y = jax.lax.cond(jnp.sum(mask, dtype=jnp.int32) <= cap, columns, lambda: _product(weights, spikes, acc))
    return _exact_unless_finite(y, weights, spikes, acc)


def _product(weights, spikes, acc):
    """``W @ s`` as one product with the 0/1 events."""
    # HIGHEST: a TPU otherwise multiplies float32 in one bfloat16 pass (errors near 1e-3); a no-op on the CPU.
    return jax.lax.dot_general(weights.astype(acc), event_mask(spikes).astype(acc), (((1,), (0,)), ((), ())),
                               precision=jax.lax.Precision.HIGHEST)


def _exact_unless_finite(y, weights, spikes, acc):
    """``y``, or the reference's exact (select) ``W @ s`` when ``y`` holds a NaN or inf."""
    exact = lambda: reference.binary_product(weights, spikes, transpose=False).astype(acc)
    return jax.lax.cond(jnp.all(jnp.isfinite(y)), lambda: y, exact)


def _checked_product(weights, spikes, acc):
    """``W @ s`` as one product with the 0/1 events, exact (select) only when the result is not finite."""
    return _exact_unless_finite(_product(weights, spikes, acc), weights, spikes, acc)


def binary_product(weights, spikes, *, transpose):
    """The sum of the weights of the events (rows of them when ``transpose``).

    Example:
        >>> w = jnp.array([[jnp.nan, 1.0], [2.0, 3.0]])
        >>> binary_product(w, jnp.array([False, True]), transpose=False)
        Array([1., 3.], dtype=float32)
    """
    if weights.size < SMALL or 0 in spikes.shape:
        return reference.binary_product(weights, spikes, transpose=transpose)
    acc = accumulation_dtype(weights.dtype)
    if not transpose:
        y = _event_columns(weights, spikes, acc) if spikes.ndim == 1 else _checked_product(weights, spikes, acc)
    elif weights.shape[0] < jnp.iinfo(jnp.int32).max:  # compacted row indices are int32
        y = _event_rows(weights, spikes, acc)
    else:
        y = reference.binary_product(weights, spikes, transpose=True)
    return y.astype(weights.dtype)


# ``W @ s`` (or ``s @ W``) with events ``s``: sums the event columns (rows); the mm kernel is the same.
_, binary_densemv_kernel = product_kernels(lambda w, s, *, transpose, out_dtype, binary:
                                           binary_product(w, s, transpose=transpose))
binary_densemm_kernel = binary_densemv_kernel
