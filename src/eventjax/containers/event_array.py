""":class:`EventArray`: an array marked as events, and what ``@`` does with a dense weight matrix.

``EventArray @ weights`` / ``weights @ EventArray`` with a dense weight
matrix route to ``binary_densemv`` / ``binary_densemm``. ``EventArray``
defers to any operand that is not a plain array, so a sparse container
handles events in its own ``__matmul__``/``__rmatmul__`` and a new container
type plugs in without touching this class. ``compact()``, ``bitpack()`` and
``compact_bitpack()`` give the same events in the compact forms
(:mod:`~eventjax.containers.indexed_events`,
:mod:`~eventjax.containers.bit_packed_events`,
:mod:`~eventjax.containers.compact_events`), which convert back with
``to_event_array()``: the two directions name each other, so the forms are
imported where a conversion is called, after every module has loaded.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from eventjax.containers.operands import is_plain_array
from eventjax.kernels.common.units import is_quantity
from eventjax.kernels.dense import binary_densemm, binary_densemv
from eventjax.kernels.indexed import bitpack

__all__ = ['EventArray']


@jax.tree_util.register_pytree_node_class
class EventArray:
    """A bool or numeric array marked as events (``True`` or ``> 0``).

    Example:
        >>> import jax.numpy as jnp
        >>> import eventjax as ej
        >>> s = ej.EventArray(jnp.array([True, False]))
        >>> s @ jnp.array([[1., 2.], [3., 4.]])
        Array([1., 2.], dtype=float32)
    """

    _eventjax_container = True
    __array_ufunc__ = None  # NumPy arrays defer ``ndarray @ events`` to __rmatmul__

    def __init__(self, value):
        # A brainunit Quantity keeps its unit; the operators split it off.
        self.value = value if isinstance(value, jax.Array) or is_quantity(value) else jnp.asarray(value)

    shape = property(lambda self: self.value.shape)
    dtype = property(lambda self: self.value.dtype)
    ndim = property(lambda self: self.value.ndim)
    # What the binary kernels, compact() and bitpack() receive; a subclass with another
    # event rule (brainevent's ``!= 0`` in eventjax.compat) maps its value here.
    _operand = property(lambda self: self.value)

    def __repr__(self) -> str:
        return f'EventArray({self.value!r})'

    def tree_flatten(self):
        return (self.value,), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        obj = object.__new__(cls)
        obj.value = children[0]
        return obj

    def compact(self, capacity: int | None = None):
        """These events as an index list of static length ``capacity`` (:class:`~eventjax.IndexedEvents`).

        Example:
            >>> import jax.numpy as jnp
            >>> import eventjax as ej
            >>> ej.EventArray(jnp.array([0., 1., 1.])).compact(2).to_event_array()
            EventArray(Array([False,  True,  True], dtype=bool))
        """
        from eventjax.containers.indexed_events import IndexedEvents

        return IndexedEvents.from_array(self._operand, capacity)

    def compact_bitpack(self, capacity: int | None = None):
        """These events both bit-packed and as an index list (:class:`~eventjax.CompactEvents`)."""
        from eventjax.containers.compact_events import CompactEvents

        return CompactEvents.from_array(self._operand, capacity)

    def bitpack(self):
        """These events packed 32 neurons per uint32 word along the neuron axis (:class:`~eventjax.BitPackedEvents`).

        Example:
            >>> import jax.numpy as jnp
            >>> import eventjax as ej
            >>> ej.EventArray(jnp.array([True, False, True])).bitpack().words
            Array([5], dtype=uint32)
        """
        from eventjax.containers.bit_packed_events import BitPackedEvents

        return BitPackedEvents(bitpack(self._operand, axis=0), self.shape[0])

    def _dense_product(self, weights, x, transpose: bool):
        """``weights.T @ x`` (``transpose``) or ``weights @ x``; a subclass with other products changes this only."""
        if jnp.ndim(x) == 1:
            return binary_densemv(weights, x, transpose=transpose)
        return binary_densemm(weights, x, transpose=transpose)

    def __matmul__(self, other):
        if not is_plain_array(other):
            return NotImplemented
        # s @ W == W.T @ s; for 2-D events (k, m) @ W (m, n) == (W.T @ S.T).T (.T leaves 1-D arrays as they are).
        return self._dense_product(other, self._operand.T, transpose=True).T

    def __rmatmul__(self, other):
        if not is_plain_array(other):
            return NotImplemented
        return self._dense_product(other, self._operand, transpose=False)
