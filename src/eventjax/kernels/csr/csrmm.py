"""``csrmm``: a CSR sparse matrix times a dense float matrix."""

from __future__ import annotations

from eventjax.kernels.common import Operator
from eventjax.kernels.csr import reference
from eventjax.kernels.csr.arguments import check_csr_call

__all__ = ['bind_csrmm', 'csrmm']


def csrmm(data, indices, indptr, B, *, shape, transpose=False, backend=None):
    """Multiply a CSR matrix ``A`` (``shape=(m, n)``) by a dense matrix.

    Args:
        data: float weights, one per stored entry, or one shared scalar.
        indices: column index of each stored entry (int32/int64).
        indptr: row pointers, length ``m + 1``.
        B: ``(n, k)`` matrix (``(m, k)`` when ``transpose``); cast to ``data``'s dtype.
        shape: ``(m, n)``.
        transpose: compute ``A.T @ B`` instead of ``A @ B``.
        backend: per-call backend (``'jax'``, ``'numba'``, ...), or None.

    Returns:
        ``(m, k)`` (``(n, k)`` when ``transpose``) in ``data``'s dtype.

    Example:
        >>> import jax.numpy as jnp
        >>> import eventjax as ej
        >>> data, indices, indptr = jnp.array([1., 2.]), jnp.array([0, 1]), jnp.array([0, 1, 2])
        >>> ej.csrmm(data, indices, indptr, jnp.ones((2, 3)), shape=(2, 2))
        Array([[1., 1., 1.],
               [2., 2., 2.]], dtype=float32)
    """
    data, indices, indptr, B, shape = check_csr_call(
        'csrmm()', data, indices, indptr, B, shape=shape, transpose=transpose, matrix=True, events=False)
    return bind_csrmm(data, indices, indptr, B, shape=shape, transpose=transpose, backend=backend)


_csrmm = Operator(
    'csrmm', __package__, operands=('data', 'indices', 'indptr', 'B'), events=False, matrix=True,
    reference=reference.csrmm_kernel, weight_cotangent=reference.entry_cotangent,
    float_op='csrmm', mm_op='csrmm')
bind_csrmm = _csrmm.bind
