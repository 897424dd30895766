"""``binary_csrmm``: a CSR sparse matrix times a dense matrix of events."""

from __future__ import annotations

from eventjax.kernels.common import Operator
from eventjax.kernels.csr import reference
from eventjax.kernels.csr.arguments import check_csr_call

__all__ = ['binary_csrmm', 'bind_binary_csrmm']


def binary_csrmm(data, indices, indptr, B, *, shape, transpose=False, backend=None):
    """Multiply a CSR matrix ``A`` (``shape=(m, n)``) by a matrix of events.

    An entry of ``B`` is an event when it is ``True`` or ``> 0``; its value is
    otherwise ignored, so the product sums the weights of event entries. The
    derivative with respect to ``B`` is that of :func:`csrmm`.

    Args:
        data: float weights, one per stored entry, or one shared scalar.
        indices: column index of each stored entry (int32/int64).
        indptr: row pointers, length ``m + 1``.
        B: ``(n, k)`` events (``(m, k)`` when ``transpose``), bool or numeric.
        shape: ``(m, n)``.
        transpose: compute ``A.T @ B`` instead of ``A @ B``.
        backend: per-call backend (``'jax'``, ``'numba'``, ...), or None.

    Returns:
        ``(m, k)`` (``(n, k)`` when ``transpose``) in ``data``'s dtype.

    Example:
        >>> import jax.numpy as jnp
        >>> import eventjax as ej
        >>> data, indices, indptr = jnp.array([1., 2.]), jnp.array([0, 1]), jnp.array([0, 1, 2])
        >>> ej.binary_csrmm(data, indices, indptr, jnp.array([[True, False], [True, True]]), shape=(2, 2))
        Array([[1., 0.],
               [2., 2.]], dtype=float32)
    """
    data, indices, indptr, B, shape = check_csr_call(
        'binary_csrmm()', data, indices, indptr, B, shape=shape, transpose=transpose, matrix=True, events=True)
    return bind_binary_csrmm(data, indices, indptr, B, shape=shape, transpose=transpose, backend=backend)


_binary_csrmm = Operator(
    'binary_csrmm', __package__, operands=('data', 'indices', 'indptr', 'B'), events=True, matrix=True,
    reference=reference.binary_csrmm_kernel, weight_cotangent=reference.entry_cotangent,
    float_op='csrmm', mm_op='binary_csrmm')
bind_binary_csrmm = _binary_csrmm.bind
