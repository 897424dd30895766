"""brainevent's event arrays: its event rule (an entry is an event when ``!= 0``) and its array API.

eventjax counts ``x > 0`` as an event; brainevent counts ``x != 0`` (negative
values and NaN too). Code moved over from brainevent keeps its numbers
because everything here maps its operand with :func:`events`, which gives 1
where brainevent sees an event and 0 elsewhere, and passes gradients through
unchanged (brainevent differentiates a binary product as the product with the
event values, and so does eventjax).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

import eventjax as ej

__all__ = ['BinaryArray', 'EventRepresentation', 'active', 'bitpack', 'events']


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
    x = _mantissa(x)
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

    def bitpack(self):
        """These events packed 32 per uint32 word along the first axis, brainevent's ``!= 0`` rule applied."""
        return ej.EventArray(active(self.value)).bitpack()


def bitpack(arr, axis: int = 0):
    """brainevent's ``bitpack``: bit ``b`` of word ``w`` is entry ``32 w + b`` along ``axis`` (``!= 0`` events).

    Example:
        >>> import jax.numpy as jnp
        >>> bitpack(jnp.array([1., 0., -1.]), axis=0)
        Array([5], dtype=uint32)
    """
    return ej.bitpack(active(arr), axis=axis)
