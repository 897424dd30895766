""":class:`CSC`: a sparse matrix in compressed sparse column form.

A ``CSC`` of shape ``(m, n)`` is the ``.T`` view of a ``CSR`` of shape
``(n, m)`` over the same three arrays, so it reuses every kernel; ``.T``
returns the ``CSR``.
"""

from __future__ import annotations

import jax
import numpy as np

from eventjax.containers.csr import CSR
from eventjax.kernels.common.units import attach, split

__all__ = ['CSC']


@jax.tree_util.register_pytree_node_class
class CSC(CSR):
    """A sparse matrix in compressed sparse column form (a JAX pytree).

    ``indptr`` has ``n + 1`` entries (one per column, plus one) and
    ``indices`` holds row numbers. It multiplies with ``@`` like a
    :class:`~eventjax.CSR`; ``.T`` is the ``CSR`` of the transpose.

    Example:
        >>> import jax.numpy as jnp
        >>> import eventjax as ej
        >>> A = ej.CSC.fromdense(jnp.array([[0., 2.], [3., 0.]]))
        >>> A.indptr, A.indices
        (Array([0, 1, 2], dtype=int32), Array([1, 0], dtype=int32))
        >>> A @ jnp.array([1., 1.])
        Array([2., 3.], dtype=float32)
    """

    _indptr_counts = 'columns'
    _as_transpose = True

    def __init__(self, args, *, shape, transposed: bool = False, validate: bool = True):
        m, n = (int(d) for d in shape)
        super().__init__(args, shape=(n, m), transposed=not transposed, validate=validate)

    def _summary(self) -> tuple[str, str]:
        return 'CSC', f'nnz={np.shape(self.indices)[0]}'

    @classmethod
    def fromdense(cls, dense, *, index_dtype=np.int32) -> CSC:
        """The CSC form of a concrete dense matrix (its nonzero entries, column by column; units kept)."""
        dense, unit = split(dense)
        dense = np.asarray(dense)
        if dense.ndim != 2:
            raise ValueError(f'CSC.fromdense(): dense must be a 2-D matrix, got shape {dense.shape}.')
        by_col = CSR.fromdense(dense.T, index_dtype=index_dtype)
        return cls((attach(by_col.data, unit), by_col.indices, by_col.indptr), shape=dense.shape)
