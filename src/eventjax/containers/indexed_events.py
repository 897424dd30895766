""":class:`IndexedEvents`: events as an index list, and its products that visit only the listed rows.

With a ``CSR`` (or ``CSC``) whose stored rows are the event side (``events @
A`` for a ``CSR``, ``A @ events`` for a ``CSC``) ``@`` is
``binary_csrmv_indexed`` over the listed rows only; any other pairing
multiplies the expanded spike vector (reading every neuron, as the bool form
does).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from eventjax.containers.event_array import EventArray
from eventjax.containers.operands import check_side, is_csr, is_fcn
from eventjax.kernels.indexed import binary_csrmv_indexed, compact_events, expand_events

__all__ = ['IndexedEvents']


@jax.tree_util.register_pytree_node_class
class IndexedEvents:
    """Events of ``size`` neurons as an index list: ``ids`` (the static capacity) and the true ``count``.

    Slots past ``count`` are ignored. Under ``jit`` more events than the
    capacity holds leave ``overflowed`` True and make every product NaN
    (see :func:`~eventjax.compact_events`); eagerly they raise.

    Example:
        >>> import jax.numpy as jnp
        >>> import eventjax as ej
        >>> ev = ej.EventArray(jnp.array([False, True, True])).compact(2)
        >>> ev.ids, ev.count
        (Array([1, 2], dtype=int32), Array(2, dtype=int32))
        >>> ev @ ej.CSR.fromdense(jnp.array([[1., 0.], [0., 2.], [3., 0.]]))
        Array([3., 2.], dtype=float32)
    """

    _eventjax_container = True
    __array_ufunc__ = None  # NumPy arrays defer ``ndarray @ events`` to __rmatmul__

    def __init__(self, ids, count, size: int):
        self.ids, self.count, self.size = jnp.asarray(ids), jnp.asarray(count), int(size)

    @classmethod
    def from_array(cls, spikes, capacity: int | None = None) -> IndexedEvents:
        """The index list of a spike vector (see :func:`~eventjax.compact_events`)."""
        ids, count = compact_events(spikes, capacity)
        return cls(ids, count, jnp.shape(spikes)[0])

    shape = property(lambda self: (self.size,))
    ndim = 1
    capacity = property(lambda self: self.ids.shape[0])
    overflowed = property(lambda self: self.count > self.capacity)

    def __repr__(self) -> str:
        return f'IndexedEvents(size={self.size}, capacity={self.capacity}, count={self.count!r})'

    def tree_flatten(self):
        return (self.ids, self.count), self.size

    @classmethod
    def tree_unflatten(cls, size, children):
        obj = object.__new__(cls)
        obj.ids, obj.count = children
        obj.size = size
        return obj

    def todense(self):
        """The bool spike vector (see :func:`~eventjax.expand_events`)."""
        return expand_events(self.ids, self.count, self.size)

    def to_event_array(self) -> EventArray:
        """The :class:`~eventjax.EventArray` of the bool spike vector."""
        return EventArray(self.todense())

    def bitpack(self):
        """These events packed 32 per word (:class:`~eventjax.BitPackedEvents`); a neuron listed twice is one event."""
        return self.to_event_array().bitpack()

    def _times(self, A, events_are_rows: bool):
        """``A``'s product with these events, which index its stored rows (or its stored columns)."""
        check_side('IndexedEvents', self.size, A, events_are_rows)
        if is_fcn(A):
            A = A.tocsr()  # its row pointers are one iota: the list visits the same rows
        return binary_csrmv_indexed(A.data, A.indices, A.indptr, None, (self.ids, self.count),
                                    shape=A.stored_shape, transpose=events_are_rows, validate=False)

    def __matmul__(self, other):
        # events @ A == A.T @ events: the events index A's rows, the stored rows unless A is a .T view.
        if is_csr(other) or is_fcn(other):
            return self._times(other, not other.transposed)
        return self.to_event_array() @ other

    def __rmatmul__(self, other):
        # A @ events: the events index A's columns, the stored rows of a .T view (a CSC is one).
        if is_csr(other) or is_fcn(other):
            return self._times(other, other.transposed)
        return other @ self.to_event_array()

