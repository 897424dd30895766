"""The work list of the TPU kernels that visit the event rows of a CSR structure in 128-wide pieces.

A CSR structure's entries, laid out 128 to a row of an ``(R, 128)`` array,
are visited piece by piece: a piece is one of those aligned rows, so a row
of any length is the pieces from ``indptr[i] // 128`` to ``(indptr[i + 1]
- 1) // 128``, each entry masked to ``[indptr[i], indptr[i + 1])``. The
work list is built on the chip's scalar core, in SMEM: for every event row
in order, each piece it spans and the row. Pieces come in non-decreasing
order, so the rows that share a piece are next to each other in the list.
The kernels then work through the list in batches (:func:`in_batches`).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl

__all__ = ['SMEM_WORDS', 'by_columns', 'collect_pieces', 'in_32_bits', 'in_batches', 'in_pieces', 'max_pieces',
           'search_sorted', 'store_and_wait']

# The int32 words a kernel may keep in SMEM (1 MiB): its row pointers, event flags and work list.
SMEM_WORDS = 240_000


def in_32_bits(body):
    """``body``, a TPU kernel body, traced with ``jax_enable_x64`` off.

    The kernels' operands are 32-bit, and Mosaic computes in 32 bits; under
    x64 a Python number in the body would become an int64 or float64 value,
    which lax's shifts and bit operations refuse to mix with the int32 ones.

    Example:
        >>> with jax.enable_x64(True):
        ...     in_32_bits(lambda: jnp.asarray(1).dtype)()
        dtype('int32')
    """
    @functools.wraps(body)
    def traced(*refs):
        with jax.enable_x64(False):
            return body(*refs)
    return traced


def by_columns(column, x):
    """``column(x)`` of a vector; of a matrix, ``column`` of each of its columns in turn, as columns (the
    TPU kernels run an mm product one column at a time).

    Example:
        >>> by_columns(lambda v: v * 2, jnp.ones((3, 2))).shape
        (3, 2)
    """
    return column(x) if x.ndim == 1 else lax.map(column, x.T).T


def in_pieces(a, fill, rows: int):
    """A flat array laid out 128 to a row, ``(rows, 128)``, padded with ``fill``; an array that needs no
    padding is only reshaped (no copy of, say, a network's synapses).

    Example:
        >>> in_pieces(jnp.arange(3), -1, 1)[0, :4]
        Array([ 0,  1,  2, -1], dtype=int32)
    """
    pad = rows * 128 - a.shape[0]
    if pad:
        a = jnp.pad(a, (0, pad), constant_values=fill)
    return a.reshape(rows, 128)


# The most comparisons search_sorted makes at once (queries x rows of 128); past it, jnp.searchsorted.
_SEARCH_COMPARES = 1 << 25


def search_sorted(a, q):
    """``jnp.searchsorted(a, q, side='left')`` for a sorted int32 ``a``, in three XLA operations a TPU runs
    quickly: ``a`` laid out 128 to a row, the rows that lie wholly below each query counted by comparing
    each query with every row's last value, then the one row the query falls in read whole (a gather of
    rows) and counted. XLA's binary search gathers one value per query per step, each step a few
    microseconds on a TPU.

    Example:
        >>> search_sorted(jnp.array([0, 3, 3, 7], jnp.int32), jnp.array([-1, 3, 4, 8], jnp.int32))
        Array([0, 1, 3, 4], dtype=int32)
    """
    n = a.shape[0]
    rows = max(1, -(-n // 128))
    if n == 0 or q.shape[0] * rows > _SEARCH_COMPARES:
        return jnp.searchsorted(a, q, side='left').astype(jnp.int32)
    a = in_pieces(a.astype(jnp.int32), jnp.iinfo(jnp.int32).max, rows)  # the fill is never below a query
    q = q.astype(jnp.int32)[:, None]
    whole = jnp.sum(a[:, -1] < q, axis=1, dtype=jnp.int32)
    # A query past every row reads the last, all of it below: the count passes n and is cut to it.
    inside = jnp.sum(a[jnp.minimum(whole, rows - 1)] < q, axis=1, dtype=jnp.int32)
    return jnp.minimum(whole * 128 + inside, n)


def max_pieces(m: int, nnz: int) -> int:
    """The most pieces ``m`` rows of ``nnz`` entries can span: each piece once, plus one shared per row.

    Example:
        >>> max_pieces(4, 300)
        7
    """
    return -(-nnz // 128) + m


def collect_pieces(m, indptr_ref, flags_ref, piece_ref, owner_ref):
    """Fill ``piece_ref`` / ``owner_ref`` (SMEM) with the pieces of the event rows and their row; returns the count.

    ``flags_ref`` holds the event flags packed 32 to an int32 word (bit ``i % 32`` of word ``i // 32``).
    """
    def row(i, count):
        word = flags_ref[lax.shift_right_logical(i, 5)]
        event = lax.bitwise_and(lax.shift_right_logical(word, lax.bitwise_and(i, 31)), 1)
        start, end = indptr_ref[i], indptr_ref[i + 1]
        first = lax.shift_right_logical(start, 7)
        spans = jnp.where((event == 1) & (end > start), lax.shift_right_logical(end - 1, 7) - first + 1, 0)

        def put(c, k):
            piece_ref[k] = first + c
            owner_ref[k] = i
            return k + 1
        return lax.fori_loop(0, spans, put, count)

    return lax.fori_loop(0, m, row, jnp.int32(0))


def in_batches(n_batches, fetches, work):
    """``work(r, slot)`` for ``r`` in ``[0, n_batches)`` once ``fetches(r, slot)``'s copies are in, two slots in turn.

    ``fetches(r, slot)`` returns the DMA copies of batch ``r`` into buffer
    ``slot``; the next batch's copies start before this batch's ``work``,
    so transfers overlap the work.
    """
    @pl.when(n_batches > 0)
    def _():
        for c in fetches(0, 0):
            c.start()

    def one_batch(r, carry):
        slot = lax.rem(r, 2)

        @pl.when(r + 1 < n_batches)
        def _():
            for c in fetches(r + 1, 1 - slot):
                c.start()

        for c in fetches(r, slot):
            c.wait()
        work(r, slot)
        return carry

    lax.fori_loop(0, n_batches, one_batch, 0)


def store_and_wait(stores):
    """Start, then wait for, each ``(condition, copy)`` whose condition holds (a batch's write-backs)."""
    for when, c in stores:
        @pl.when(when)
        def _(c=c):
            c.start()
    for when, c in stores:
        @pl.when(when)
        def _(c=c):
            c.wait()
