"""The fast pure-JAX delivery: the ``jax`` backend (``reference.py`` stays the readable oracle).

The reference touches every stored entry each step and finds each entry's
row with a binary search over ``indptr``. Here only the rows that hold an
event are visited, a chunk of rows at a time
(:func:`~eventjax.kernels.common.compaction.by_event_chunks`): each row is
read through a static number of slots (``width``, a little above the mean
row length) and its synapses scattered into the flattened ring. The ring is
the loops' carry, so XLA adds into it in place: donated, or as a
``lax.scan`` carry, it is never copied (a ``lax.switch`` between layouts
would hand each branch a copy on XLA:CPU). A row longer than ``width`` is
read in pieces of ``width`` slots: one more pass over the rows still that
long per piece, so a skewed graph costs more passes, never a wrong result.
Semantics are the reference's. The layout form reads one packed offset per
synapse (``reference.packed_offsets``) where the plain form reads a column
and a delay.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from eventjax.kernels.common import accumulation_dtype
from eventjax.kernels.common.compaction import by_event_chunks
from eventjax.kernels.delay import reference

__all__ = ['add_pass', 'csr_delay_deliver_kernel', 'csr_delay_deliver_layout_kernel', 'layout_target',
           'plain_target']

# Below this many stored entries the chunked loops would only add compile time.
SMALL = 32768


def _per_entry(a, window, shape):
    return jnp.broadcast_to(a[0], shape) if a.shape[0] == 1 else window(a)


class Scatter:
    """Where a pass's terms go: XLA's scatter into the flattened ring (the ``jax`` kernel's sink).

    A sink turns the flattened ring (accumulation dtype) into its carry
    (``start``), adds a pass's ``(rows, width)`` flat targets (``L * n``:
    none) and terms into it (``add``), and gives the flattened ring back
    (``finish``); ``rows(width)`` is how many event rows a pass of ``width``
    entries a row takes (None: as many as ``CHUNK_SLOTS`` entries hold, with
    a narrow first pass).
    """

    def rows(self, width):
        return None

    def width(self, mean):
        """The slots a pass reads a row through: 1.25x the mean row length, a multiple of 8, so the rows of a
        random graph take one piece."""
        return -(-(5 * mean) // 32) * 8

    def start(self, flat_ring):
        return flat_ring

    def add(self, out, flat, terms):
        return out.at[flat.reshape(-1)].add(terms.reshape(-1), mode='drop')

    def finish(self, out):
        return out


def _by_event_rows(ring, events, data, indptr, t, nnz, target, *, shape, weighted, sink=None):
    """The chunked loops over the event rows; ``target(window, ok, now)``: each entry's flat position, kept flag,
    with ``window(a)`` the ``(rows, width)`` entries of a per-synapse array ``a`` that the pass reads; ``sink``:
    where the terms go (:class:`Scatter` by default)."""
    sink = Scatter() if sink is None else sink
    m, n = shape
    length = ring.shape[0]
    acc = accumulation_dtype(ring.dtype)
    active, value = reference.event_values(events, acc, weighted)
    lengths = jnp.maximum(indptr[1:] - indptr[:-1], 0)  # indptr comes repaired (non-decreasing)
    width = min(sink.width(-(-nnz // m)), nnz)
    pieces = (jnp.max(jnp.where(active, lengths, 0)) + width - 1) // width
    now = jnp.mod(t.reshape(()).astype(jnp.int32), length)
    slot = jnp.arange(width, dtype=jnp.int32)

    def piece(p, flat_ring):
        offset = p * width

        def one_pass(rows, valid, out):
            count = jnp.where(valid, lengths[rows] - offset, 0)
            start = indptr[rows] + offset
            # Each row's entries are one contiguous window (moved back where it would pass the end): a
            # slice per row, where a gather per entry cost a TPU most of a step.
            first = jnp.clip(start, 0, nnz - width)
            pos = first[:, None] + slot
            ok = (pos >= start[:, None]) & (pos < (start + count)[:, None])

            def window(a):
                return jax.vmap(lambda f: jax.lax.dynamic_slice(a, (f,), (width,)))(first)

            return add_pass(sink, out, target, window, ok, now, data, value[rows][:, None] if weighted else None,
                            size=length * n, acc=acc)

        return by_event_chunks(active & (lengths > offset), width, one_pass, flat_ring, chunk=sink.rows(width))

    out = jax.lax.fori_loop(0, pieces, piece, sink.start(ring.astype(acc).reshape(-1)))
    return sink.finish(out).reshape(length, n).astype(ring.dtype)


def add_pass(sink, out, target, window, ok, now, data, value, *, size, acc):
    """``sink.add`` of a pass's read entries: their flat targets (``size``: none) and terms ``data * value``
    where ``target`` keeps them (``value`` None: binary events, each worth 1, so no value is read)."""
    flat, ok = target(window, ok, now)
    terms = _per_entry(data, window, ok.shape).astype(acc)
    if value is not None:
        terms = terms * value
    return sink.add(out, jnp.where(ok, flat, size), jnp.where(ok, terms, jnp.zeros((), acc)))


def _small(ring, nnz, m, sink):
    """Whether the reference is the delivery: nothing to deliver, or (XLA's scatter) too few synapses to chunk."""
    return (nnz < SMALL and sink is None) or nnz == 0 or m == 0 or 0 in ring.shape


def plain_target(indices, delays, n: int, length: int):
    """``target(window, ok, now)`` of the plain form: each read entry's flat ring position ``slot * n + column``
    and whether it is kept (column in ``[0, n)``, delay in ``[1, L)``); ``window(a)``: the entries read of a
    per-synapse array."""
    def target(window, ok, now):
        cols, d = window(indices), _per_entry(delays, window, ok.shape)
        ok &= (cols >= 0) & (cols < n) & (d >= 1) & (d < length)
        s = now + d
        s = jnp.where(s >= length, s - length, s)
        return s * n + cols.astype(jnp.int32), ok

    return target


def layout_target(offsets, n: int, length: int):
    """:func:`plain_target` of the layout form: one packed offset per synapse, no slot arithmetic."""
    def target(window, ok, now):
        off = window(offsets)
        ok &= (off >= n) & (off < length * n)
        flat = off - (length - now) * n  # now * n + off - L * n, without passing 2**31
        return jnp.where(flat < 0, flat + length * n, flat), ok

    return target


def _deliver(ring, events, data, indices, indptr, delays, t, *, shape, weighted, sink=None):
    m, n = shape
    length = ring.shape[0]
    if _small(ring, indices.shape[0], m, sink):
        return reference._deliver(ring, events, data, indices, indptr, delays, t, shape=shape, weighted=weighted)
    return _by_event_rows(ring, events, data, indptr, t, indices.shape[0], plain_target(indices, delays, n, length),
                          shape=shape, weighted=weighted, sink=sink)


def _deliver_layout(ring, events, data, offsets, indptr, t, *, shape, weighted, sink=None):
    """The layout form: one packed offset per synapse (``reference.packed_offsets``)."""
    m, n = shape
    length = ring.shape[0]
    if _small(ring, offsets.shape[0], m, sink):
        return reference._deliver_layout(ring, events, data, offsets, indptr, t, shape=shape, weighted=weighted)
    return _by_event_rows(ring, events, data, indptr, t, offsets.shape[0], layout_target(offsets, n, length),
                          shape=shape, weighted=weighted, sink=sink)


def csr_delay_deliver_kernel(*, shape, weighted, outs):
    return lambda *operands: (_deliver(*operands, shape=shape, weighted=weighted),)


def csr_delay_deliver_layout_kernel(*, shape, weighted, outs):
    return lambda *operands: (_deliver_layout(*operands, shape=shape, weighted=weighted),)
