"""Per-synapse products on the containers: ``dt2t``, ``dt2t_transposed`` and ``sddmm``.

A container stores a matrix ``S`` and shows ``A = S`` or ``S.T`` (its
``transposed`` view; a CSC is the ``.T`` view of a CSR). ``dt2t`` reads
``y`` at each entry's row of ``A``, ``dt2t_transposed`` at its column, and
``sddmm`` samples ``a @ b`` at ``A``'s entries; each maps to the stored
matrix's row or column side, so the result is in stored entry order.
"""

from __future__ import annotations

import jax.numpy as jnp

from eventjax.kernels.common.units import mantissa
from eventjax.kernels.dt2t import csr_sddmm, csrmm_dt2t, csrmv_dt2t, fcnmm_dt2t, fcnmv_dt2t

__all__ = ['PerSynapseOps']


class PerSynapseOps:
    """Mixed into :class:`~eventjax.CSR` (and so :class:`~eventjax.CSC`) and :class:`~eventjax.FixedNumConn`."""

    __slots__ = ()

    def dt2t(self, y, w=None, *, backend=None):
        """One value per stored entry: ``w`` (default: the weights) times ``y`` at the entry's row.

        ``y`` is a vector (length ``shape[0]``) or a batch ``(batch,
        shape[0])``; a bool ``y`` is events. See :func:`eventjax.csrmv_dt2t`.

        Example:
            >>> import jax.numpy as jnp
            >>> import eventjax as ej
            >>> A = ej.CSR.fromdense(jnp.array([[0., 2.], [3., 4.]]))
            >>> A.dt2t(jnp.array([10., 100.]))
            Array([ 20., 300., 400.], dtype=float32)
        """
        return self._dt2t(y, self.data if w is None else w, by_row=True, backend=backend)

    def dt2t_transposed(self, y, w=None, *, backend=None):
        """One value per stored entry: ``w`` (default: the weights) times ``y`` at the entry's column.

        Example:
            >>> import jax.numpy as jnp
            >>> import eventjax as ej
            >>> A, y = ej.CSR.fromdense(jnp.array([[0., 2.], [3., 4.]])), jnp.array([10., 100.])
            >>> A.dt2t_transposed(y), A.T.dt2t(y)  # the same: the rows of A.T are the columns of A
            (Array([200.,  30., 400.], dtype=float32), Array([200.,  30., 400.], dtype=float32))
        """
        return self._dt2t(y, self.data if w is None else w, by_row=False, backend=backend)

    def sddmm(self, a, b, *, backend=None):
        """This structure with weights ``(a @ b)`` at its entries (:func:`eventjax.csr_sddmm`).

        Example:
            >>> import jax.numpy as jnp
            >>> import eventjax as ej
            >>> A = ej.CSR.fromdense(jnp.array([[0., 1.], [1., 0.]]))
            >>> A.sddmm(jnp.array([[1., 2.], [3., 4.]]), jnp.eye(2)).todense()
            Array([[0., 2.],
                   [3., 0.]], dtype=float32)
        """
        if self.transposed:
            a, b = b.T, a.T  # (a @ b) at A's entries is (b.T @ a.T) at the stored ones
        indices, indptr = self._entry_structure()
        values = csr_sddmm(a, b, indices, indptr, shape=self.stored_shape, backend=backend, validate=False)
        return self.with_data(values.reshape(jnp.shape(self.indices)))

    def _dt2t(self, y, w, *, by_row, backend):
        transpose = by_row == self.transposed  # A's rows are the stored columns in a transposed view
        matrix = jnp.ndim(mantissa(y)) == 2
        if jnp.ndim(self.indices) == 2:  # fixed number of connections: indices (m, k)
            op = fcnmm_dt2t if matrix else fcnmv_dt2t
            return op(w, self.indices, y, shape=self.stored_shape, transpose=transpose, backend=backend,
                      validate=False)
        op = csrmm_dt2t if matrix else csrmv_dt2t
        return op(y, w, self.indices, self.indptr, shape=self.stored_shape, transpose=transpose, backend=backend,
                  validate=False)

    def _entry_structure(self):
        """``(indices, indptr)`` of the stored entries as CSR (FCN rows have a fixed length)."""
        indices = self.indices
        if indices.ndim == 1:
            return indices, self.indptr
        m, k = indices.shape
        return indices.reshape(-1), jnp.arange(m + 1, dtype=indices.dtype) * k
