""":class:`CompactEvents`: events both bit-packed and as an index list, each product using the form that reads least."""

from __future__ import annotations

import jax

from eventjax.containers.bit_packed_events import BitPackedEvents
from eventjax.containers.event_array import EventArray
from eventjax.containers.indexed_events import IndexedEvents
from eventjax.containers.operands import is_csr, is_fcn

__all__ = ['CompactEvents']


@jax.tree_util.register_pytree_node_class
class CompactEvents:
    """Events of ``size`` neurons both bit-packed and as an index list (brainevent's ``CompactBinary``).

    ``@`` uses the form that reads least: the index list where the events
    index the matrix's stored rows (the scatter visits only their rows), the
    packed words where they index its stored columns (each entry tests a
    bit) or with a ``FixedNumConn`` (whose packed scatter skips empty words),
    the unpacked events with a dense matrix. Under ``jit`` an overflowed list
    makes the row-side products NaN (see :func:`~eventjax.compact_events`).

    Example:
        >>> import jax.numpy as jnp
        >>> import eventjax as ej
        >>> ev = ej.CompactEvents.from_array(jnp.array([False, True, True]), 2)
        >>> A = ej.CSR.fromdense(jnp.array([[1., 0.], [0., 2.], [3., 0.]]))
        >>> ev @ A, A.T @ ev
        (Array([3., 2.], dtype=float32), Array([3., 2.], dtype=float32))
    """

    _eventjax_container = True
    __array_ufunc__ = None

    def __init__(self, packed: BitPackedEvents, indexed: IndexedEvents):
        if packed.size != indexed.size:
            raise ValueError(f'CompactEvents(): the packed events hold {packed.size} neurons and the index list '
                             f'{indexed.size}; build both from one spike vector with CompactEvents.from_array().')
        self.packed, self.indexed = packed, indexed

    @classmethod
    def from_array(cls, spikes, capacity: int | None = None) -> CompactEvents:
        """Both forms of a spike vector (``capacity``: of the index list, see :func:`~eventjax.compact_events`)."""
        return cls(EventArray(spikes).bitpack(), IndexedEvents.from_array(spikes, capacity))

    size = property(lambda self: self.packed.size)
    shape = property(lambda self: (self.size,))
    ndim = 1
    words = property(lambda self: self.packed.words)
    ids = property(lambda self: self.indexed.ids)
    count = property(lambda self: self.indexed.count)

    def __repr__(self) -> str:
        return f'CompactEvents(size={self.size}, capacity={self.indexed.capacity}, count={self.count!r})'

    def tree_flatten(self):
        return (self.packed, self.indexed), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        obj = object.__new__(cls)
        obj.packed, obj.indexed = children
        return obj

    def todense(self):
        """The bool spike vector (from the packed words)."""
        return self.packed.todense()

    def to_event_array(self) -> EventArray:
        return EventArray(self.todense())

    def _form(self, other, events_are_rows: bool):
        if is_csr(other) and events_are_rows:
            return self.indexed
        return self.packed

    def __matmul__(self, other):
        if is_csr(other) or is_fcn(other):
            return self._form(other, not other.transposed) @ other
        return self.to_event_array() @ other

    def __rmatmul__(self, other):
        if is_csr(other) or is_fcn(other):
            return other @ self._form(other, other.transposed)
        return other @ self.to_event_array()
