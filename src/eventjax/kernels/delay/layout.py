"""``CSRDelayLayout``: a CSR structure with its delays, checked once and sorted by delay within each row.

Sorting a row's synapses by delay makes one row's deliveries land in one
ring slot after another (fewer cache lines touched per event); the result
is the same as delivering in stored order, up to float rounding of sums.
The layout records the ring length it needs (``max(delays) + 1``), so
:func:`csr_delay_deliver_layout` checks the ring by shape, never by value,
and skips the per-call check of the structure.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from eventjax.kernels.common.checks import dtype_of, is_concrete
from eventjax.kernels.common.units import attach, mantissa, split
from eventjax.kernels.delay.arguments import check_delay_call, check_steps
from eventjax.kernels.delay.csr_delay_deliver import _csr_delay_deliver

__all__ = ['CSRDelayLayout', 'csr_delay_deliver_layout']


@jax.tree_util.register_pytree_node_class
class CSRDelayLayout:
    """A checked, delay-sorted CSR structure with one delay per synapse (a JAX pytree).

    Build it with :meth:`build`; ``ring_length`` is ``max(delays) + 1``
    (None when built from traced delays).

    Example:
        >>> import numpy as np
        >>> import eventjax as ej
        >>> lay = ej.CSRDelayLayout.build(np.array([1., 2.], np.float32), np.array([0, 1]), np.array([0, 2, 2]),
        ...                               np.array([3, 1]), shape=(2, 2))
        >>> lay.delays, lay.ring_length
        (Array([1, 3], dtype=int32), 4)
    """

    def __init__(self, data, indices, indptr, delays, *, shape, ring_length):
        self.data, self.indices, self.indptr, self.delays = data, indices, indptr, delays
        self.shape = tuple(int(d) for d in shape)
        self.ring_length = ring_length

    @classmethod
    def build(cls, data, indices, indptr, delays, *, shape) -> CSRDelayLayout:
        """Check a CSR structure and its delays, and sort each row's synapses by delay (stably)."""
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
        ring = jax.ShapeDtypeStruct((length or 1, n), dtype if jnp.issubdtype(dtype, jnp.floating) else jnp.float32)
        _, _, data, indices, indptr, delays, _, shape, _, _ = check_delay_call(
            'CSRDelayLayout.build()', ring, jnp.zeros(int(shape[0]), bool), data, indices, indptr, delays, 0,
            shape=shape, weighted=False, validate=concrete)
        nnz = indices.shape[0]
        if nnz:
            # Concrete structure sorts in NumPy: eager JAX would compile each op again for every new nnz.
            xp = np if concrete else jnp
            if concrete:
                data, indices, indptr, delays = (np.asarray(a) for a in (data, indices, indptr, delays))
                rows = np.repeat(np.arange(int(shape[0])), np.diff(indptr))
            else:
                rows = jnp.searchsorted(indptr, jnp.arange(nnz, dtype=indptr.dtype), side='right')
            order = xp.lexsort((xp.broadcast_to(delays, (nnz,)), rows))
            indices = indices[order]
            data = data if data.shape[0] == 1 else data[order]
            delays = delays if delays.shape[0] == 1 else delays[order]
            data, indices, indptr, delays = (jnp.asarray(a) for a in (data, indices, indptr, delays))
        return cls(attach(data, unit), indices, indptr, delays, shape=shape, ring_length=length)

    def __repr__(self) -> str:
        return f'CSRDelayLayout(shape={self.shape}, nnz={np.shape(self.indices)[0]}, ring_length={self.ring_length})'

    def tree_flatten(self):
        return (self.data, self.indices, self.indptr, self.delays), (self.shape, self.ring_length)

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
    ring, events, data, indices, indptr, delays, t, shape, weighted, unit = check_delay_call(
        'csr_delay_deliver_layout()', ring, events, layout.data, layout.indices, layout.indptr, layout.delays, t,
        shape=layout.shape, weighted=weighted, validate=False)
    return attach(_csr_delay_deliver.bind(ring, events, data, indices, indptr, delays, t, shape=shape,
                                          weighted=weighted, backend=backend), unit)
