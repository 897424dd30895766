"""What every sparse container can do to its weights without touching its structure.

Mixed into :class:`~eventjax.CSR` and :class:`~eventjax.FixedNumConn` (and the
classes built on them): ``with_data`` swaps the weights, scalar arithmetic
(``A * 2.0``, ``2.0 * A``, ``A / 2``, ``-A``) maps the weights, ``transpose()``
is ``.T``, and ``tocoo()`` lists the stored entries. A container's pytree
children start with its weights, which is what these rely on.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from eventjax.kernels.common.checks import is_concrete
from eventjax.kernels.common.units import attach, is_quantity, split
from eventjax.kernels.csr.reference import kept_entries

__all__ = ['COO', 'WeightOps']


class COO(NamedTuple):
    """The stored entries of a sparse matrix: ``dense[row[i], col[i]] += data[i]``."""

    data: jax.Array
    row: jax.Array
    col: jax.Array
    shape: tuple[int, int]


def _scalar(who: str, value):
    if isinstance(value, (int, float, np.number)) or (hasattr(value, 'shape') and jnp.ndim(value) == 0):
        return value
    raise TypeError(f'{who}: a sparse container combines with a scalar only (its structure stays fixed); got '
                    f'{type(value).__name__} of shape {jnp.shape(value)}. Use A.with_data(f(A.data)) to change '
                    'the weights one by one, or A.todense() for a dense result.')


class WeightOps:
    """``with_data``, scalar arithmetic, ``transpose()`` and ``tocoo()`` for a sparse container."""

    __slots__ = ()

    def with_data(self, data):
        """The same structure with new weights (one per stored entry, or one shared weight).

        Example:
            >>> import jax.numpy as jnp
            >>> import eventjax as ej
            >>> A = ej.CSR.fromdense(jnp.array([[0., 2.], [3., 0.]]))
            >>> A.with_data(jnp.array([5., 7.])).todense()
            Array([[0., 5.],
                   [7., 0.]], dtype=float32)
        """
        children, aux = self.tree_flatten()
        return type(self).tree_unflatten(aux, (data, *children[1:]))

    def _map(self, who: str, other, fn):
        weights = self.tree_flatten()[0][0]
        # A Quantity keeps its unit through the arithmetic (brainunit checks it).
        return self.with_data(fn(weights if is_quantity(weights) else jnp.asarray(weights), _scalar(who, other)))

    def __mul__(self, other):
        return self._map(f'{type(self).__name__} * x', other, lambda w, s: w * s)

    def __rmul__(self, other):
        return self._map(f'x * {type(self).__name__}', other, lambda w, s: s * w)

    def __truediv__(self, other):
        return self._map(f'{type(self).__name__} / x', other, lambda w, s: w / s)

    def __neg__(self):
        weights = self.tree_flatten()[0][0]
        return self.with_data(-(weights if is_quantity(weights) else jnp.asarray(weights)))

    def transpose(self, axes=None):
        """The transposed matrix, a view like ``.T`` (``axes`` only as ``None`` or ``(1, 0)``)."""
        if axes is not None and tuple(axes) != (1, 0):
            raise ValueError(f'{type(self).__name__}.transpose(): a matrix has two axes; axes must be None or '
                             f'(1, 0), got {axes!r}.')
        return self.T

    def tocoo(self) -> COO:
        """The stored entries as ``(data, row, col, shape)`` of the matrix this object stands for.

        Entries the products drop (a column outside ``[0, n)``, no row under the repaired
        ``indptr``, padding past ``indptr[-1]``) are left out; traced, where the count is
        fixed, they stay as weight-0 entries at ``(0, 0)``.

        Example:
            >>> import numpy as np
            >>> import eventjax as ej
            >>> ej.CSR.fromdense(np.array([[0., 2.], [3., 0.]], np.float32)).tocoo().col
            Array([1, 0], dtype=int32)
        """
        csr = self.tocsr() if hasattr(self, 'tocsr') else self
        (data, unit), indices, indptr = split(csr.data), jnp.asarray(csr.indices), jnp.asarray(csr.indptr)
        nnz = jnp.shape(indices)[0]
        rows, kept = kept_entries(indices, indptr, csr.stored_shape)
        rows = rows.astype(indices.dtype)
        data = jnp.broadcast_to(jnp.asarray(data).reshape(-1), (nnz,)) if jnp.size(data) == 1 else jnp.asarray(data)
        if is_concrete(kept):
            keep = np.flatnonzero(np.asarray(kept))
            if keep.size < nnz:
                data, rows, indices = data[keep], rows[keep], indices[keep]
        else:
            # Traced, the count is fixed: a dropped entry stays, with weight 0 at (0, 0).
            data = jnp.where(kept, data, jnp.zeros((), data.dtype))
            rows, indices = jnp.where(kept, rows, 0), jnp.where(kept, indices, 0)
        data = attach(data, unit)
        if csr.transposed:
            return COO(data, indices, rows, csr.shape)
        return COO(data, rows, indices, csr.shape)


class WeightsAsData:
    """``data`` as another name for ``weights``, as on every other container."""

    __slots__ = ()

    @property
    def data(self):
        """The weights (``weights``): one per connection, or one shared weight."""
        return self.weights
