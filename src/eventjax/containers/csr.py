""":class:`CSR`: a sparse matrix in compressed sparse row form.

Concrete structure is checked once, when a container is built (``CSR(...,
validate=False)`` skips it for trusted structure); its products then skip the
per-call check.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from eventjax.containers.base import SparseMatrix
from eventjax.kernels.common.checks import is_concrete, validate_csr_structure
from eventjax.kernels.csr import binary_csrmm, binary_csrmv, csrmm, csrmv
from eventjax.kernels.csr.reference import entry_rows

__all__ = ['CSR']


@jax.tree_util.register_pytree_node_class
class CSR(SparseMatrix):
    """A sparse matrix in compressed sparse row form (a JAX pytree).

    ``data`` holds one weight per stored entry, or one shared weight (a
    scalar or shape ``(1,)``). ``.T`` is a lazy view: it flips which operator
    ``@`` calls and copies nothing. Concrete structure is checked when built
    (``ValueError`` naming the first bad entry); ``validate=False`` skips the
    check for trusted structure. See :doc:`/semantics`.

    Example:
        >>> import jax.numpy as jnp
        >>> import eventjax as ej
        >>> A = ej.CSR.fromdense(jnp.array([[0., 2.], [3., 0.]]))
        >>> A @ ej.EventArray(jnp.array([True, True]))
        Array([2., 3.], dtype=float32)
        >>> A.T.todense()
        Array([[0., 3.],
               [2., 0.]], dtype=float32)
    """

    def __init__(self, args, *, shape, transposed: bool = False, validate: bool = True):
        data, indices, indptr = args
        self.data, self.indices, self.indptr = data, indices, indptr
        self.stored_shape = tuple(int(d) for d in shape)
        self.transposed = bool(transposed)
        if validate and is_concrete(indices, indptr):
            self._check('CSR()')

    @property
    def dtype(self):
        return jnp.result_type(self.data)

    @property
    def T(self) -> CSR:
        return CSR((self.data, self.indices, self.indptr), shape=self.stored_shape,
                   transposed=not self.transposed, validate=False)

    def __repr__(self) -> str:
        view = ', transposed' if self.transposed else ''
        return f'CSR(shape={self.shape}, nnz={jnp.shape(self.indices)[0]}, dtype={self.dtype}{view})'

    def tree_flatten(self):
        return (self.data, self.indices, self.indptr), (self.stored_shape, self.transposed)

    @classmethod
    def tree_unflatten(cls, aux, children):
        shape, transposed = aux
        return cls(tuple(children), shape=shape, transposed=transposed, validate=False)

    # -- conversion ---------------------------------------------------------

    @classmethod
    def fromdense(cls, dense, *, index_dtype=jnp.int32) -> CSR:
        """The CSR form of a concrete dense matrix (its nonzero entries).

        Example:
            >>> import numpy as np
            >>> CSR.fromdense(np.eye(3, dtype=np.float32)).indptr
            Array([0, 1, 2, 3], dtype=int32)
        """
        dense = np.asarray(dense)
        if dense.ndim != 2:
            raise ValueError(f'CSR.fromdense(): dense must be a 2-D matrix, got shape {dense.shape}.')
        rows, cols = np.nonzero(dense)
        indptr = np.zeros(dense.shape[0] + 1, np.int64)
        np.cumsum(np.bincount(rows, minlength=dense.shape[0]), out=indptr[1:])
        return cls((jnp.asarray(dense[rows, cols]), jnp.asarray(cols, index_dtype),
                    jnp.asarray(indptr, index_dtype)), shape=dense.shape, validate=False)

    @classmethod
    def from_fixed_num_conn(cls, fcn) -> CSR:
        """The CSR form of a :class:`FixedNumConn` (traceable; same as ``fcn.tocsr()``)."""
        return fcn.tocsr()

    def todense(self):
        """The dense matrix, ``self.shape``; duplicate entries add up (differentiable in ``data``)."""
        m, n = self.stored_shape
        data = jnp.asarray(self.data)
        nnz = jnp.shape(self.indices)[0]
        rows = entry_rows(jnp.asarray(self.indptr), nnz)
        # Entries outside the rows' ranges go past the end, where the scatter drops them.
        rows = jnp.where((rows >= 0) & (rows < m), rows, m)
        values = jnp.broadcast_to(data.reshape(-1) if data.size == 1 else data, (nnz,))
        dense = jnp.zeros((m, n), data.dtype).at[rows, self.indices].add(values, mode='drop')
        return dense.T if self.transposed else dense

    def validate(self) -> CSR:
        """Check the structure of concrete arrays; returns ``self``.

        Construction already runs this check unless ``validate=False``.

        Raises:
            ValueError: ``indptr`` has the wrong length, does not start at 0,
                decreases, or ends past ``len(indices)``; a column index of a
                stored entry is outside ``[0, n)``.
        """
        self._check('CSR.validate()')
        return self

    def _check(self, who):
        m, n = self.stored_shape
        indptr = np.asarray(self.indptr)
        if indptr.shape != (m + 1,):
            raise ValueError(f'{who}: indptr must have length {m + 1} (rows + 1), got shape {indptr.shape}.')
        validate_csr_structure(who, np.asarray(self.indices), indptr, n)

    # -- products -----------------------------------------------------------

    _ops = (csrmv, csrmm, binary_csrmv, binary_csrmm)

    def _operands(self):
        return self.data, self.indices, self.indptr
