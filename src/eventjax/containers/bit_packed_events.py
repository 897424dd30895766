""":class:`BitPackedEvents`: events packed 32 per word, and its products that read the words directly."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from eventjax.containers.event_array import EventArray
from eventjax.containers.indexed_events import IndexedEvents
from eventjax.containers.operands import check_side, is_csr, is_fcn
from eventjax.kernels.indexed import binary_csrmv_packed, binary_fcnmv_packed, bitunpack

__all__ = ['BitPackedEvents']


@jax.tree_util.register_pytree_node_class
class BitPackedEvents:
    """Events of ``size`` neurons packed 32 per uint32 word along the first axis (see :func:`~eventjax.bitpack`).

    The compact form to store or send (the multi-process spike exchange sends
    its events so). ``@`` with a ``CSR``, ``CSC`` or ``FixedNumConn`` reads
    the words directly (:func:`~eventjax.binary_csrmv_packed`,
    :func:`~eventjax.binary_fcnmv_packed`); with anything else it multiplies
    the unpacked events, exactly as :class:`EventArray` does.

    Example:
        >>> import jax.numpy as jnp
        >>> import eventjax as ej
        >>> ev = ej.EventArray(jnp.array([False, True])).bitpack()
        >>> ev @ jnp.array([[1., 2.], [3., 4.]])
        Array([3., 4.], dtype=float32)
    """

    _eventjax_container = True
    __array_ufunc__ = None  # NumPy arrays defer ``ndarray @ events`` to __rmatmul__

    def __init__(self, words, size: int):
        self.words, self.size = jnp.asarray(words), int(size)
        if self.words.dtype != jnp.uint32 or self.words.ndim not in (1, 2) or \
                self.words.shape[0] != -(-self.size // 32):
            raise ValueError(f'BitPackedEvents(): words must be uint32 of shape (ceil(size / 32),) or '
                             f'(ceil(size / 32), k), {-(-self.size // 32)} words for size {self.size}; got '
                             f'{self.words.dtype.name}{list(self.words.shape)}.')

    shape = property(lambda self: (self.size, *self.words.shape[1:]))
    ndim = property(lambda self: self.words.ndim)

    def __repr__(self) -> str:
        return f'BitPackedEvents(size={self.size}, words={self.words!r})'

    def tree_flatten(self):
        return (self.words,), self.size

    @classmethod
    def tree_unflatten(cls, size, children):
        obj = object.__new__(cls)
        obj.words, obj.size = children[0], size
        return obj

    def todense(self):
        """The bool events (see :func:`~eventjax.bitunpack`)."""
        return bitunpack(self.words, self.size, axis=0)

    def to_event_array(self) -> EventArray:
        """The :class:`EventArray` of the unpacked events."""
        return EventArray(self.todense())

    def compact(self, capacity: int | None = None) -> IndexedEvents:
        """These events as an index list (:class:`IndexedEvents`, see :func:`~eventjax.compact_events`)."""
        return IndexedEvents.from_array(self.todense(), capacity)

    def _times(self, A, events_are_rows: bool):
        check_side('BitPackedEvents', self.size, A, events_are_rows)
        if is_fcn(A):
            return binary_fcnmv_packed(A.weights, A.indices, self.words, shape=A.stored_shape,
                                       transpose=events_are_rows, validate=False)
        return binary_csrmv_packed(A.data, A.indices, A.indptr, self.words, shape=A.stored_shape,
                                   transpose=events_are_rows, validate=False)

    def __matmul__(self, other):
        if self.ndim == 1 and (is_csr(other) or is_fcn(other)):
            return self._times(other, not other.transposed)
        return self.to_event_array() @ other

    def __rmatmul__(self, other):
        if self.ndim == 1 and (is_csr(other) or is_fcn(other)):
            return self._times(other, other.transposed)
        return other @ self.to_event_array()

