""":class:`COO`: a sparse matrix as its list of entries; its products go through its CSR form.

``CSR.tocoo`` and ``COO.tocsr`` name each other's class, so this module
imports the CSR one where the conversion is called.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from eventjax.containers.base import SparseMatrix
from eventjax.kernels.common.checks import is_concrete

__all__ = ['COO']


@jax.tree_util.register_pytree_node_class
class COO(SparseMatrix):
    """A sparse matrix as a list of entries: ``dense[row[i], col[i]] += data[i]`` (a JAX pytree).

    The form users build matrices in (edge lists, NetworkX, ``scipy.sparse``):
    ``todense``, ``.T`` (swaps ``row`` and ``col``), ``tocsr``; its products
    (``@``) go through :meth:`tocsr`, which sorts the entries by row. ``data``
    may be one shared weight. Concrete coordinates are checked when built.

    Example:
        >>> import jax.numpy as jnp
        >>> import eventjax as ej
        >>> A = ej.COO((jnp.array([1., 2.]), jnp.array([1, 0]), jnp.array([0, 1])), shape=(2, 3))
        >>> A.T.todense()
        Array([[0., 1.],
               [2., 0.],
               [0., 0.]], dtype=float32)
        >>> A @ ej.EventArray(jnp.array([True, True, False]))
        Array([2., 1.], dtype=float32)
    """

    transposed = False

    def __init__(self, args, *, shape, validate: bool = True):
        data, row, col = args
        self.data, self.row, self.col = data, row, col
        self.stored_shape = tuple(int(d) for d in shape)
        if validate and is_concrete(row, col):
            m, n = self.stored_shape
            for name, coords, bound in (('row', row, m), ('col', col, n)):
                c = np.asarray(coords)
                bad = np.flatnonzero((c < 0) | (c >= bound))
                if bad.size:
                    raise ValueError(f'COO(): {name}[{bad[0]}] = {c[bad[0]]} is outside [0, {bound}); '
                                     f'drop that entry or enlarge shape.')
            if np.shape(row) != np.shape(col) or np.size(data) not in (1, np.shape(row)[0]):
                raise ValueError(f'COO(): row and col must have the same length and data that length or 1, got '
                                 f'{np.shape(row)}, {np.shape(col)} and {np.shape(data)}.')

    @property
    def dtype(self):
        return jnp.result_type(self.data)

    @property
    def nnz(self) -> int:
        return np.shape(self.row)[0]

    @property
    def T(self) -> COO:
        m, n = self.stored_shape
        return COO((self.data, self.col, self.row), shape=(n, m), validate=False)

    def __repr__(self) -> str:
        return f'COO(shape={self.shape}, nnz={self.nnz}, dtype={self.dtype})'

    def tree_flatten(self):
        return (self.data, self.row, self.col), self.stored_shape

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(tuple(children), shape=aux, validate=False)

    def todense(self):
        """The dense matrix; duplicate entries add up (differentiable in ``data``).

        Unchecked coordinates (``validate=False``, or traced) follow the products' rules: an entry
        with a row outside ``[0, m)`` or a column outside ``[0, n)`` is dropped.
        """
        m, n = self.stored_shape
        data = jnp.asarray(self.data)
        values = jnp.broadcast_to(data.reshape(-1), (self.nnz,)) if data.size == 1 else data
        row, col = jnp.asarray(self.row), jnp.asarray(self.col)
        # Dropped entries go past the last row, where the scatter drops them; a negative
        # coordinate would otherwise wrap to the last row or column.
        kept = (row >= 0) & (row < m) & (col >= 0) & (col < n)
        return jnp.zeros((m, n), data.dtype).at[jnp.where(kept, row, m), col].add(values, mode='drop')

    def tocsr(self):
        """The same matrix as a :class:`CSR` (entries keep their order within a row; traceable)."""
        from eventjax.containers.csr import CSR

        return CSR.fromcoo(self)

    def tocoo(self) -> COO:
        return self

    def _product(self, x, transpose: bool):
        return self.tocsr()._product(x, transpose)
