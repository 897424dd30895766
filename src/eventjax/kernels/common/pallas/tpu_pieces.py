"""The work list of the TPU kernels that visit the event rows of a CSR structure in 128-wide pieces.

A CSR structure's entries, laid out 128 to a row of an ``(R, 128)`` array,
are visited piece by piece: a piece is one of those aligned rows, so a row
of any length is the pieces from ``indptr[i] // 128`` to ``(indptr[i + 1]
- 1) // 128``, each entry masked to ``[indptr[i], indptr[i + 1])``. The
work list is built on the chip's scalar core, in SMEM: for every event row
in order, each piece it spans and the row. Pieces come in non-decreasing
order, so the rows that share a piece are next to each other in the list.
"""

from __future__ import annotations

import jax.numpy as jnp
from jax import lax

__all__ = ['collect_pieces', 'max_pieces']


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
