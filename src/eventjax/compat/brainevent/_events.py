"""brainevent's event arrays: its event rule (an entry is an event when ``!= 0``) and its array API.

eventjax counts ``x > 0`` as an event; brainevent counts ``x != 0`` (negative
values and NaN too). Code moved over from brainevent keeps its numbers
because everything here maps its operand with :func:`events`, which gives 1
where brainevent sees an event and 0 elsewhere, and passes gradients through
unchanged (brainevent differentiates a binary product as the product with the
event values, and so does eventjax). A :class:`BinaryArray` hands that map to
eventjax as its ``_operand``, so its products, ``compact()``,
``compact_bitpack()``, ``bitpack()`` and a delivery with delays all apply it.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

import eventjax as ej
from eventjax.compat.brainevent._errors import MathError, brainevent_errors

__all__ = ['BinaryArray', 'CompactBinary', 'EventRepresentation', 'active', 'bitpack', 'events']


@jax.custom_jvp
def _nonzero(x):
    return (x != 0).astype(x.dtype)


@_nonzero.defjvp
def _nonzero_jvp(primals, tangents):
    (x,), (dx,) = primals, tangents
    return _nonzero(x), dx


def _mantissa(x):
    # A brainunit Quantity's events are its mantissa's (the unit does not make an event).
    return getattr(x, 'mantissa', x)


def events(x):
    """brainevent's events of ``x`` as eventjax reads them: 1 where ``x != 0`` (or ``True``), 0 elsewhere.

    Bool arrays pass unchanged; a numeric array keeps its dtype, and its
    gradient passes through (the binary products differentiate as products
    with the values).

    Example:
        >>> import jax.numpy as jnp
        >>> events(jnp.array([2., -1., 0., 1.]))
        Array([1., 1., 0., 1.], dtype=float32)
    """
    x = _mantissa(x.value if isinstance(x, ej.EventArray) else x)
    x = x if isinstance(x, jax.Array) else jnp.asarray(x)
    if x.dtype == jnp.bool_:
        return x
    if jnp.issubdtype(x.dtype, jnp.floating) or jnp.issubdtype(x.dtype, jnp.complexfloating):
        return _nonzero(x)
    return (x != 0).astype(x.dtype)


def active(x):
    """brainevent's events of ``x`` as a bool array (``x != 0``, or ``x`` itself when bool)."""
    e = events(x)
    return e if e.dtype == jnp.bool_ else e != jnp.zeros((), e.dtype)


def _plain(index):
    # brainevent unwraps event arrays used as indices.
    if isinstance(index, tuple):
        return tuple(_plain(i) for i in index)
    return index.value if isinstance(index, ej.EventArray) else index


class EventRepresentation:
    """brainevent's base of the event arrays: the array API on ``.value``.

    Example:
        >>> import jax.numpy as jnp
        >>> b = BinaryArray(jnp.array([True, False, True]))
        >>> b.size, len(b), b[0].item(), isinstance(b, EventRepresentation)
        (3, 3, True, True)
    """

    __array_priority__ = 100
    size = property(lambda self: int(np.prod(self.shape)))

    def with_value(self, value):
        """The same kind of event array holding ``value``."""
        return type(self)(value)

    def __len__(self) -> int:
        return len(self.value)

    def __iter__(self):
        for i in range(self.value.shape[0]):
            yield self.value[i]

    def __getitem__(self, index):
        return self.value[_plain(index)]

    def __array__(self, dtype=None, copy=None):
        out = np.asarray(_mantissa(self.value))
        return out if dtype is None else out.astype(dtype)


@jax.tree_util.register_pytree_node_class
class BinaryArray(EventRepresentation, ej.EventArray):
    """brainevent's ``BinaryArray``: :class:`eventjax.EventArray` with brainevent's rule, an entry is an event
    when ``!= 0`` (negative values and NaN too), and its array API.

    Example:
        >>> import jax.numpy as jnp
        >>> W = jnp.ones((4, 2))
        >>> BinaryArray(jnp.array([2., -1., 0., 1.])) @ W     # three events
        Array([3., 3.], dtype=float32)
    """

    _operand = property(lambda self: events(self.value))

    def __init__(self, value):
        if isinstance(value, (list, tuple, np.ndarray)):
            value = jnp.asarray(value)
        super().__init__(value)

    def __repr__(self) -> str:
        return f'BinaryArray(value={self.value!r})'

    @property
    def T(self):  # noqa: N802 (NumPy's name)
        return type(self)(self.value.T)

    def transpose(self, *axes):
        """The transposed events (``axes`` as for ``jnp.transpose``)."""
        return type(self)(jnp.transpose(self.value, axes or None))

    def _product(self, other, left: bool):
        # brainevent refuses a 0-d or 3-d event array with MathError; shapes that do not fit
        # come as OperandError (its AssertionError, eventjax's ValueError).
        if self.ndim not in (1, 2):
            raise MathError(f'BinaryArray @: the events must be 1-D or 2-D, got shape {tuple(self.shape)}.')
        return ej.EventArray.__matmul__(self, other) if left else ej.EventArray.__rmatmul__(self, other)

    @brainevent_errors
    def __matmul__(self, other):
        return self._product(other, left=True)

    @brainevent_errors
    def __rmatmul__(self, other):
        return self._product(other, left=False)


def bitpack(arr, axis: int = 0):
    """brainevent's ``bitpack``: bit ``b`` of word ``w`` is entry ``32 w + b`` along ``axis`` (``!= 0`` events).

    Example:
        >>> import jax.numpy as jnp
        >>> bitpack(jnp.array([1., 0., -1.]), axis=0)
        Array([5], dtype=uint32)
    """
    return ej.bitpack(active(arr), axis=axis)


@jax.tree_util.register_pytree_node_class
class CompactBinary(ej.CompactEvents):
    """:class:`eventjax.CompactEvents` whose ``from_array`` applies brainevent's rule (``!= 0`` is an event).

    Example:
        >>> import jax.numpy as jnp
        >>> CompactBinary.from_array(jnp.array([-1., 0., 2.])).todense()
        Array([ True, False,  True], dtype=bool)
    """

    @classmethod
    def from_array(cls, spikes, capacity: int | None = None) -> CompactBinary:
        """Both forms of the events ``spikes != 0`` (``capacity``: of the index list)."""
        return super().from_array(active(spikes), capacity)
