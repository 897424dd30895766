"""``binary_csrmm``: a CSR sparse matrix times a dense matrix of events."""

from __future__ import annotations

import jax

from eventjax.backends import XLACustomKernel
from eventjax.kernels.common import LinearOp, register_rules
from eventjax.kernels.common.registration import register_numba, register_warp
from eventjax.kernels.csr import reference
from eventjax.kernels.csr.arguments import check_csr_call
from eventjax.kernels.csr.csrmm import bind_csrmm

__all__ = ['binary_csrmm', 'bind_binary_csrmm']


def binary_csrmm(data, indices, indptr, B, *, shape, transpose=False, backend=None, validate=True):
    """Multiply a CSR matrix ``A`` (``shape=(m, n)``) by a matrix of events.

    An entry of ``B`` is an event when it is ``True`` or ``> 0``; its value is
    otherwise ignored, so the product sums the weights of event entries. The
    derivative with respect to ``B`` is that of :func:`csrmm`.

    Events, dtypes and bad indices follow the contract in :doc:`/semantics`.

    Args:
        data: float weights, one per stored entry, or one shared scalar.
        indices: column index of each stored entry (int32/int64).
        indptr: row pointers, length ``m + 1``.
        B: ``(n, k)`` events (``(m, k)`` when ``transpose``), bool or numeric.
        shape: ``(m, n)``.
        transpose: compute ``A.T @ B`` instead of ``A @ B``.
        backend: per-call backend (``'jax'``, ``'numba'``, ...), or None.
        validate: check concrete index structure by value (False skips it for
            trusted structure; bad entries are then dropped).

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
        'binary_csrmm()', data, indices, indptr, B, shape=shape, transpose=transpose, matrix=True, events=True,
        validate=validate)
    return bind_binary_csrmm(data, indices, indptr, B, shape=shape, transpose=transpose, backend=backend)


def bind_binary_csrmm(data, indices, indptr, B, *, shape, transpose, backend=None):
    """Bind the primitive on checked operands (what rules call)."""
    rows = shape[1] if transpose else shape[0]
    out = jax.ShapeDtypeStruct((rows, B.shape[1]), data.dtype)
    return _binary_csrmm_p(data, indices, indptr, B, outs=(out,), backend=backend,
                           shape=shape, transpose=transpose)[0]


def _numba_kernel(*, shape, transpose, outs):
    from eventjax.kernels.csr import numba_impl
    return numba_impl.binary_csrmm_kernel(transpose=transpose)


def _warp_kernel(dtypes, *, shape, transpose, outs):
    from eventjax.kernels.csr import warp_impl
    return warp_impl.binary_csrmm_kernel(dtypes, shape=shape, transpose=transpose, outs=outs)


_binary_csrmm_p = XLACustomKernel('binary_csrmm')
_binary_csrmm_p.def_jax_kernel(reference.binary_csrmm_kernel)
register_numba(_binary_csrmm_p, _numba_kernel)
register_warp(_binary_csrmm_p, _warp_kernel)
register_rules(_binary_csrmm_p, LinearOp(
    operands=('data', 'indices', 'indptr', 'B'), events=True, call=bind_binary_csrmm, float_call=bind_csrmm,
    weight_cotangent=reference.entry_cotangent, mm_call=bind_binary_csrmm, is_mm=True))
