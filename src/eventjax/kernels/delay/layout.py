"""``CSRDelayLayout``: a CSR structure with its delays, checked once and sorted by delay within each row.

Sorting a row's synapses by delay makes one row's deliveries land in one
ring slot after another; the result is the same as delivering in stored
order, up to float rounding of sums. The layout records the ring length it
needs (``max(delays) + 1``), so :func:`csr_delay_deliver_layout` checks the
ring by shape, never by value, and skips the per-call check of the
structure.

The layout also packs each synapse's delay and column into one int32
offset, ``delays[e] * n + indices[e]`` (``n`` the columns), which depends on
the shape alone, never on the ring's length: with the ring flattened, a
synapse lands at ``(t mod L) * n + offsets[e]``, wrapped once by ``L * n``,
and it is kept when ``n <= offsets[e] < L * n`` (its delay lies in
``[1, L)``). Its delivery (the primitive ``csr_delay_deliver_layout``) reads
two numbers per synapse instead of three and does no slot arithmetic, so
its kernels are faster than ``csr_delay_deliver``'s on the same arrays (the
delay page of the docs has the figures). A synapse that no ring could keep (a column outside
``[0, n)``, a delay below 1 or past ``(2**31 - 1) // n``, possible only in
a layout built from traced arrays) gets the offset -1 and is dropped, as
``csr_delay_deliver`` drops it.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from eventjax.kernels.common.checks import dtype_of, is_concrete
from eventjax.kernels.common.units import attach, mantissa, split
from eventjax.kernels.delay import reference
from eventjax.kernels.delay.arguments import check_delay_call, check_steps, repair_layout
from eventjax.kernels.delay.delivery import Delivery

__all__ = ['CSRDelayLayout', 'csr_delay_deliver_layout']


@jax.tree_util.register_pytree_node_class
class CSRDelayLayout:
    """A checked, delay-sorted CSR structure with one delay per synapse (a JAX pytree).

    Build it with :meth:`build`; ``ring_length`` is ``max(delays) + 1``
    (None when built from traced delays); ``offsets`` the packed int32
    ``delays * n + indices`` per synapse (-1: dropped) that delivery reads.
    :meth:`packed_only` drops ``indices`` and ``delays`` (None), which
    delivery never reads.

    Example:
        >>> import numpy as np
        >>> import eventjax as ej
        >>> lay = ej.CSRDelayLayout.build(np.array([1., 2.], np.float32), np.array([0, 1]), np.array([0, 2, 2]),
        ...                               np.array([3, 1]), shape=(2, 2))
        >>> lay.delays, lay.offsets, lay.ring_length
        (Array([1, 3], dtype=int32), Array([3, 6], dtype=int32), 4)
    """

    def __init__(self, data, indices, indptr, delays, offsets=None, *, shape, ring_length):
        self.shape = tuple(int(d) for d in shape)
        if offsets is None and (indices is None or delays is None):
            raise ValueError('CSRDelayLayout(): pass the offsets, or the indices and delays to pack them from.')
        if offsets is None:  # built by hand: pack them here (build() and unflattening pass them)
            offsets = reference.packed_offsets(jnp.asarray(indices), jnp.asarray(delays).reshape(-1), self.shape[1])
        self.data, self.indices, self.indptr, self.delays, self.offsets = data, indices, indptr, delays, offsets
        self.ring_length = ring_length

    @classmethod
    def build(cls, data, indices, indptr, delays, *, shape) -> CSRDelayLayout:
        """Check a CSR structure and its delays, sort each row's synapses by delay (stably), pack their offsets."""
        check_steps('CSRDelayLayout.build()', 'delays', delays)
        data, unit = split(data)  # the layout keeps the weights' unit; delivery converts it
        concrete = is_concrete(data, indices, indptr, delays)
        length = int(np.max(np.asarray(delays))) + 1 if concrete and np.size(delays) else (1 if concrete else None)
        n = int(shape[1])
        if length is not None and length * n >= 2 ** 31:
            raise ValueError(f'CSRDelayLayout.build(): the longest delay, {length - 1} steps, needs a ring of '
                             f'{length} x {n} entries, past 2**31; delays count steps (round(delay / dt)), '
                             'not time.')
        dtype = dtype_of(data, 'CSRDelayLayout.build()', 'data')
        # Only the ring's shape and dtype are checked: a shape, never an (L, n) array allocated for that.
        # Traced delays are checked against the longest ring any call may pass (L x n < 2**31): the ring
        # is not known yet, and a shorter placeholder would drop every delay past it.
        steps = length if length is not None else (2 ** 31 - 1) // max(n, 1)
        ring = jax.ShapeDtypeStruct((steps, n), dtype if jnp.issubdtype(dtype, jnp.floating) else jnp.float32)
        _, _, data, indices, indptr, delays, _, shape, _, _ = check_delay_call(
            'CSRDelayLayout.build()', ring, jnp.zeros(int(shape[0]), bool), data, indices, indptr, delays, 0,
            shape=shape, weighted=False, validate=concrete)
        nnz = indices.shape[0]
        if nnz:
            # Concrete structure sorts in NumPy: eager JAX would compile each op again for every new nnz.
            xp = np if concrete else jnp
            if concrete:
                data, indices, indptr, delays = (np.asarray(a) for a in (data, indices, indptr, delays))
                # Entries past indptr[m] belong to no row: they sort last, as row m (a traced searchsorted's too).
                owned = np.repeat(np.arange(int(shape[0])), np.diff(indptr))
                rows = np.concatenate([owned, np.full(nnz - owned.shape[0], int(shape[0]))])
            else:
                rows = jnp.searchsorted(indptr, jnp.arange(nnz, dtype=indptr.dtype), side='right')
            order = xp.lexsort((xp.broadcast_to(delays, (nnz,)), rows))
            indices = indices[order]
            data = data if data.shape[0] == 1 else data[order]
            delays = delays if delays.shape[0] == 1 else delays[order]
        offsets = reference.packed_offsets(indices, delays, shape[1], np if concrete and nnz else jnp)
        data, indices, indptr, delays, offsets = (jnp.asarray(a) for a in (data, indices, indptr, delays, offsets))
        return cls(attach(data, unit), indices, indptr, delays, offsets, shape=shape, ring_length=length)

    def packed_only(self) -> CSRDelayLayout:
        """The same layout without ``indices`` and ``delays`` (None): delivery reads the offsets alone.

        A large network then holds two arrays per synapse (weights, offsets)
        instead of four.

        Example:
            >>> import numpy as np
            >>> import eventjax as ej
            >>> lay = ej.CSRDelayLayout.build(np.array([1.], np.float32), np.array([1]), np.array([0, 1]),
            ...                               np.array([2]), shape=(1, 2)).packed_only()
            >>> lay.indices is None, lay.offsets
            (True, Array([5], dtype=int32))
        """
        return CSRDelayLayout(self.data, None, self.indptr, None, self.offsets, shape=self.shape,
                              ring_length=self.ring_length)

    def __repr__(self) -> str:
        return f'CSRDelayLayout(shape={self.shape}, nnz={np.shape(self.offsets)[0]}, ring_length={self.ring_length})'

    def tree_flatten(self):
        return (self.data, self.indices, self.indptr, self.delays, self.offsets), (self.shape, self.ring_length)

    @classmethod
    def tree_unflatten(cls, aux, children):
        shape, length = aux
        return cls(*children, shape=shape, ring_length=length)


def csr_delay_deliver_layout(ring, events, layout: CSRDelayLayout, t, *, weighted=None, backend=None):
    """:func:`~eventjax.csr_delay_deliver` with a prebuilt :class:`CSRDelayLayout`.

    The ring must hold at least ``layout.ring_length`` steps (checked by shape).

    Example:
        >>> import jax.numpy as jnp
        >>> import numpy as np
        >>> import eventjax as ej
        >>> lay = ej.CSRDelayLayout.build(np.array([1.], np.float32), np.array([1]), np.array([0, 1]),
        ...                               np.array([2]), shape=(1, 2))
        >>> ej.csr_delay_deliver_layout(jnp.zeros((3, 2)), jnp.array([True]), lay, 0)[2]
        Array([0., 1.], dtype=float32)
    """
    if not isinstance(layout, CSRDelayLayout):
        raise TypeError(f'csr_delay_deliver_layout(): layout must be a CSRDelayLayout (CSRDelayLayout.build(...)), '
                        f'got {type(layout).__name__}.')
    length = np.shape(mantissa(ring))[0] if np.ndim(mantissa(ring)) == 2 else None
    if layout.ring_length is not None and length is not None and length < layout.ring_length:
        raise ValueError(f'csr_delay_deliver_layout(): the ring holds {length} steps, the layout needs '
                         f'{layout.ring_length} (max delay + 1); make the ring longer.')
    # A packed-only layout checks the offsets in place of the columns (same length and dtype) and one delay.
    indices = layout.offsets if layout.indices is None else layout.indices
    delays = np.ones(1, np.int32) if layout.delays is None else layout.delays
    ring, events, data, _, indptr, _, t, shape, weighted, unit = check_delay_call(
        'csr_delay_deliver_layout()', ring, events, layout.data, indices, layout.indptr, delays, t,
        shape=layout.shape, weighted=weighted, validate=False)
    return attach(_csr_delay_deliver_layout.bind(ring, events, data, layout.offsets, indptr, t, shape=shape,
                                                 weighted=weighted, backend=backend), unit)


_csr_delay_deliver_layout = Delivery('csr_delay_deliver_layout', __package__,
                                     ('ring', 'events', 'data', 'offsets', 'indptr', 't'),
                                     data_cotangent=reference.layout_data_cotangent,
                                     events_cotangent=reference.layout_events_cotangent, prepare=repair_layout,
                                     kernels=('numba', 'warp', 'pallas'))
