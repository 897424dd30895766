""":class:`EventArray`: an array marked as events, and what ``@`` does with a dense weight matrix.

``EventArray @ weights`` / ``weights @ EventArray`` with a dense weight
matrix route to ``binary_densemv`` / ``binary_densemm``. ``EventArray``
defers to any operand that is not a plain array, so a sparse container
handles events in its own ``__matmul__``/``__rmatmul__`` and a new container
type plugs in without touching this class.

:class:`IndexedEvents` is the same events as an index list
(``EventArray.compact(capacity)``, ``.to_event_array()`` back). With a
``CSR`` (or ``CSC``) whose stored rows are the event side (``events @ A``
for a ``CSR``, ``A @ events`` for a ``CSC``) ``@`` is
``binary_csrmv_indexed`` over the listed rows only; any other pairing
multiplies the expanded spike vector (reading every neuron, as the bool
form does).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from eventjax.kernels.common.units import is_quantity
from eventjax.kernels.dense import binary_densemm, binary_densemv
from eventjax.kernels.indexed import (
    binary_csrmv_indexed,
    binary_csrmv_packed,
    binary_fcnmv_packed,
    bitpack,
    bitunpack,
    compact_events,
    expand_events,
)

__all__ = ['BitPackedEvents', 'CompactEvents', 'EventArray', 'IndexedEvents', 'is_plain_array']


def is_plain_array(x) -> bool:
    """Whether ``x`` is an array operand rather than an eventjax container (which marks itself)."""
    return isinstance(x, (jax.Array, np.ndarray)) or (hasattr(x, 'shape') and hasattr(x, 'dtype')
                                                       and not getattr(x, '_eventjax_container', False))


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
        return IndexedEvents.from_array(self._operand, capacity)

    def compact_bitpack(self, capacity: int | None = None) -> CompactEvents:
        """These events both bit-packed and as an index list (:class:`~eventjax.CompactEvents`)."""
        return CompactEvents.from_array(self._operand, capacity)

    def bitpack(self) -> BitPackedEvents:
        """These events packed 32 neurons per uint32 word along the neuron axis (:class:`BitPackedEvents`).

        Example:
            >>> import jax.numpy as jnp
            >>> import eventjax as ej
            >>> ej.EventArray(jnp.array([True, False, True])).bitpack().words
            Array([5], dtype=uint32)
        """
        return BitPackedEvents(bitpack(self._operand, axis=0), self.shape[0])

    def __matmul__(self, other):
        if not is_plain_array(other):
            return NotImplemented
        # s @ W == W.T @ s; for 2-D events (k, m) @ W (m, n) == (W.T @ S.T).T.
        if self.ndim == 1:
            return binary_densemv(other, self._operand, transpose=True)
        return binary_densemm(other, self._operand.T, transpose=True).T

    def __rmatmul__(self, other):
        if not is_plain_array(other):
            return NotImplemented
        if self.ndim == 1:
            return binary_densemv(other, self._operand, transpose=False)
        return binary_densemm(other, self._operand, transpose=False)


def _is_csr(x) -> bool:
    """A CSR or CSC container (known by its arrays: the csr module imports this one)."""
    return all(hasattr(x, a) for a in ('data', 'indices', 'indptr', 'stored_shape', 'transposed'))


def _is_fcn(x) -> bool:
    """A FixedNumConn container (known by its arrays, as :func:`_is_csr`)."""
    return all(hasattr(x, a) for a in ('weights', 'indices', 'stored_shape', 'transposed', 'tocsr'))


def _check_side(form, size, A, events_are_rows):
    side = A.stored_shape[0 if events_are_rows else 1]
    if side != size:
        raise ValueError(f'{form} of {size} neurons cannot multiply a matrix of shape {A.shape} on the side of '
                         f'{side}; check the operand order or the matrix.')


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

    def bitpack(self) -> BitPackedEvents:
        """These events packed 32 per word (:class:`BitPackedEvents`); a neuron listed twice is one event."""
        return BitPackedEvents(bitpack(self.todense()), self.size)

    def _times(self, A, events_are_rows: bool):
        """``A``'s product with these events, which index its stored rows (or its stored columns)."""
        _check_side('IndexedEvents', self.size, A, events_are_rows)
        if _is_fcn(A):
            A = A.tocsr()  # its row pointers are one iota: the list visits the same rows
        return binary_csrmv_indexed(A.data, A.indices, A.indptr, None, (self.ids, self.count),
                                    shape=A.stored_shape, transpose=events_are_rows, validate=False)

    def __matmul__(self, other):
        # events @ A == A.T @ events: the events index A's rows, the stored rows unless A is a .T view.
        if _is_csr(other) or _is_fcn(other):
            return self._times(other, not other.transposed)
        return self.to_event_array() @ other

    def __rmatmul__(self, other):
        # A @ events: the events index A's columns, the stored rows of a .T view (a CSC is one).
        if _is_csr(other) or _is_fcn(other):
            return self._times(other, other.transposed)
        return other @ self.to_event_array()


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
        _check_side('BitPackedEvents', self.size, A, events_are_rows)
        if _is_fcn(A):
            return binary_fcnmv_packed(A.weights, A.indices, self.words, shape=A.stored_shape,
                                       transpose=events_are_rows, validate=False)
        return binary_csrmv_packed(A.data, A.indices, A.indptr, self.words, shape=A.stored_shape,
                                   transpose=events_are_rows, validate=False)

    def __matmul__(self, other):
        if self.ndim == 1 and (_is_csr(other) or _is_fcn(other)):
            return self._times(other, not other.transposed)
        return self.to_event_array() @ other

    def __rmatmul__(self, other):
        if self.ndim == 1 and (_is_csr(other) or _is_fcn(other)):
            return self._times(other, other.transposed)
        return other @ self.to_event_array()


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
        if _is_csr(other) and events_are_rows:
            return self.indexed
        return self.packed

    def __matmul__(self, other):
        if _is_csr(other) or _is_fcn(other):
            return self._form(other, not other.transposed) @ other
        return self.to_event_array() @ other

    def __rmatmul__(self, other):
        if _is_csr(other) or _is_fcn(other):
            return other @ self._form(other, other.transposed)
        return other @ self.to_event_array()
