""":class:`GradedEvents`: events that carry a value, and its products with a dense weight matrix."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from eventjax.containers.event_array import EventArray
from eventjax.containers.graded import graded_dense_product
from eventjax.kernels.common.units import mantissa

__all__ = ['GradedEvents']


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

    def __init__(self, value):
        super().__init__(value)
        dtype = jnp.result_type(mantissa(self.value))
        if not (jnp.issubdtype(dtype, jnp.bool_) or jnp.issubdtype(dtype, jnp.integer)
                or jnp.issubdtype(dtype, jnp.floating)):
            raise TypeError(f'GradedEvents(): the values must be boolean, integer or floating-point, got {dtype}; '
                            'a complex value has no order for an event to be read from (split real and imaginary '
                            'parts into two products).')

    def __repr__(self) -> str:
        return f'GradedEvents({self.value!r})'

    @property
    def T(self) -> GradedEvents:  # noqa: N802 (NumPy's name)
        """The transposed events (2-D: one product per row becomes one per column)."""
        return GradedEvents(self.value.T)

    def transpose(self, *axes) -> GradedEvents:
        """The events with their axes permuted, as ``jnp.transpose``."""
        return GradedEvents(self.value.transpose(*axes))

    def _dense_product(self, weights, x, transpose: bool):
        _check_product_rank(self)
        return graded_dense_product(weights, x, transpose=transpose)


def _check_product_rank(events) -> None:
    if events.ndim not in (1, 2):
        raise ValueError(f'GradedEvents @ weights: the events must be 1-D (one vector) or 2-D (a batch), got shape '
                         f'{events.shape}; reshape them to (batch, neurons).')
