""":class:`EventArray`: an array marked as events, and what ``@`` does with a dense weight matrix.

``EventArray @ weights`` / ``weights @ EventArray`` with a dense weight
matrix route to ``binary_densemv`` / ``binary_densemm``. ``EventArray``
defers to any operand that is not a plain array, so a sparse container
handles events in its own ``__matmul__``/``__rmatmul__`` and a new container
type plugs in without touching this class.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from eventjax.containers.graded import graded_dense_product
from eventjax.kernels.common.units import is_quantity
from eventjax.kernels.dense import binary_densemm, binary_densemv

__all__ = ['EventArray', 'GradedEvents', 'is_plain_array']


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

    def __init__(self, value):
        # A brainunit Quantity keeps its unit; the operators split it off.
        self.value = value if isinstance(value, jax.Array) or is_quantity(value) else jnp.asarray(value)

    shape = property(lambda self: self.value.shape)
    dtype = property(lambda self: self.value.dtype)
    ndim = property(lambda self: self.value.ndim)

    def __repr__(self) -> str:
        return f'EventArray({self.value!r})'

    def tree_flatten(self):
        return (self.value,), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        obj = object.__new__(cls)
        obj.value = children[0]
        return obj

    def __matmul__(self, other):
        if not is_plain_array(other):
            return NotImplemented
        # s @ W == W.T @ s; for 2-D events (k, m) @ W (m, n) == (W.T @ S.T).T.
        if self.ndim == 1:
            return binary_densemv(other, self.value, transpose=True)
        return binary_densemm(other, self.value.T, transpose=True).T

    def __rmatmul__(self, other):
        if not is_plain_array(other):
            return NotImplemented
        if self.ndim == 1:
            return binary_densemv(other, self.value, transpose=False)
        return binary_densemm(other, self.value, transpose=False)


@jax.tree_util.register_pytree_node_class
class GradedEvents(EventArray):
    """Events that carry a value (spike counts, graded potentials): zeros are not events.

    Accepted wherever :class:`EventArray` is. A product multiplies like the
    float array ``value``, except that zero entries are skipped, never
    multiplied: the event direction (``x @ W``) visits only the rows of the
    non-zero entries, and a NaN or infinite weight meets no zero. Derivatives
    are exact (the linear map's). See :doc:`/semantics` and
    :mod:`eventjax.containers.graded`. brainevent calls it ``WeightedArray``.

    Example:
        >>> import jax.numpy as jnp
        >>> import eventjax as ej
        >>> x = ej.GradedEvents(jnp.array([0., 2.]))
        >>> x @ jnp.array([[jnp.nan, 1.], [3., 4.]])
        Array([6., 8.], dtype=float32)
    """

    _eventjax_graded = True

    def __repr__(self) -> str:
        return f'GradedEvents({self.value!r})'

    def __matmul__(self, other):
        if not is_plain_array(other):
            return NotImplemented
        if self.ndim == 1:
            return graded_dense_product(other, self.value, transpose=True)
        return graded_dense_product(other, self.value.T, transpose=True).T

    def __rmatmul__(self, other):
        if not is_plain_array(other):
            return NotImplemented
        return graded_dense_product(other, self.value, transpose=False)
