"""The pure-JAX oracle of the bit-packed products (also their ``jax`` kernel: it unpacks first).

Entry ``e`` of row ``r`` (``indptr[r] <= e < indptr[r + 1]``, or
``r * k <= e < (r + 1) * k`` for a FCN matrix of ``k`` per row) has column
``indices[e]``. ``transpose=True`` adds ``w(e)`` into ``y[indices[e]]``
where bit ``r`` is set; ``transpose=False`` adds ``w(e)`` into ``y[r]``
where bit ``indices[e]`` is set. Columns outside ``[0, n)`` drop their
entry; an entry without an event adds nothing whatever its weight.
"""

from __future__ import annotations

import jax.numpy as jnp

from eventjax.kernels.common import accumulation_dtype

__all__ = ['binary_csrmv_packed_kernel', 'bits', 'weight_cotangent']


def bits(words, size: int):
    """The bool events of ``size`` neurons packed in ``words`` (bit ``b`` of word ``w``: neuron ``32 w + b``)."""
    flat = (words[:, None] >> jnp.arange(32, dtype=jnp.uint32)) & jnp.uint32(1)
    return flat.reshape(-1)[:size].astype(bool)


def _terms(indices, indptr, words, *, shape, fixed, transpose):
    """Per stored entry: ``(out_index, kept)``; kept entries have a column in range and an event."""
    m, n = shape
    nnz = indices.shape[0]
    e = jnp.arange(nnz, dtype=indices.dtype)
    rows = e // fixed if fixed else jnp.searchsorted(indptr, e, side='right').astype(indices.dtype) - 1
    ok = (rows >= 0) & (rows < m) & (indices >= 0) & (indices < n)
    src, dst = (rows, indices) if transpose else (indices, rows)
    ev = bits(words, m if transpose else n)
    return dst, ok & ev[jnp.clip(src, 0, ev.shape[0] - 1)]


def binary_csrmv_packed_kernel(*, shape, fixed, transpose, outs):
    """The ``jax`` kernel generator: unpack, then add every kept entry (touches every stored entry)."""
    out = outs[0]

    def kernel(data, indices, indptr, words, sizes):
        acc = accumulation_dtype(out.dtype)
        dst, kept = _terms(indices, indptr, words, shape=shape, fixed=fixed, transpose=transpose)
        w = jnp.broadcast_to(data[0], kept.shape) if data.shape[0] == 1 else data
        terms = jnp.where(kept, w.astype(acc), jnp.zeros((), acc))
        size = out.shape[0]
        return (jnp.zeros((size,), acc).at[jnp.where(kept, dst, size)].add(terms, mode='drop').astype(out.dtype),)

    return kernel


def weight_cotangent(ct, n_weights: int, indices, indptr, words, *, shape, fixed, transpose):
    """The weights' cotangent: ``ct[out(e)]`` at each entry with an event."""
    dst, kept = _terms(indices, indptr, words, shape=shape, fixed=fixed, transpose=transpose)
    term = jnp.where(kept, ct[jnp.clip(dst, 0, ct.shape[0] - 1)], jnp.zeros((), ct.dtype))
    return term.sum().reshape(1) if n_weights == 1 else term
