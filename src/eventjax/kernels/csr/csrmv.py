"""``csrmv``: a CSR sparse matrix times a dense float vector."""

from __future__ import annotations

import jax

from eventjax.backends import XLACustomKernel
from eventjax.kernels.common import LinearOp, register_rules
from eventjax.kernels.common.registration import register_numba, register_warp
from eventjax.kernels.csr import reference
from eventjax.kernels.csr.arguments import check_csr_call
from eventjax.kernels.csr.csrmm import bind_csrmm

__all__ = ['bind_csrmv', 'csrmv']


def csrmv(data, indices, indptr, v, *, shape, transpose=False, backend=None, validate=True):
    """Multiply a CSR matrix ``A`` (``shape=(m, n)``) by a vector.

    Events, dtypes and bad indices follow the contract in :doc:`/semantics`.

    Args:
        data: float weights, one per stored entry, or one shared scalar.
        indices: column index of each stored entry (int32/int64).
        indptr: row pointers, length ``m + 1``.
        v: length ``n`` (``m`` when ``transpose``); cast to ``data``'s dtype.
        shape: ``(m, n)``.
        transpose: compute ``v @ A`` instead of ``A @ v``.
        backend: per-call backend (``'jax'``, ``'numba'``, ...), or None.
        validate: check concrete index structure by value (False skips it for
            trusted structure; bad entries are then dropped).

    Returns:
        Length ``m`` (``n`` when ``transpose``), in ``data``'s dtype.

    Example:
        >>> import jax.numpy as jnp
        >>> import eventjax as ej
        >>> data, indices, indptr = jnp.array([1., 2., 3.]), jnp.array([0, 1, 1]), jnp.array([0, 2, 3])
        >>> ej.csrmv(data, indices, indptr, jnp.array([1., 10.]), shape=(2, 2))
        Array([21., 30.], dtype=float32)
    """
    data, indices, indptr, v, shape = check_csr_call(
        'csrmv()', data, indices, indptr, v, shape=shape, transpose=transpose, matrix=False, events=False,
        validate=validate)
    return bind_csrmv(data, indices, indptr, v, shape=shape, transpose=transpose, backend=backend)


def bind_csrmv(data, indices, indptr, v, *, shape, transpose, backend=None):
    """Bind the primitive on checked operands (what rules call)."""
    out = jax.ShapeDtypeStruct((shape[1] if transpose else shape[0],), data.dtype)
    return _csrmv_p(data, indices, indptr, v, outs=(out,), backend=backend,
                    shape=shape, transpose=transpose)[0]


def _numba_kernel(*, shape, transpose, outs):
    from eventjax.kernels.csr import numba_impl
    return numba_impl.csrmv_kernel(transpose=transpose)


def _warp_kernel(dtypes, *, shape, transpose, outs):
    from eventjax.kernels.csr import warp_impl
    return warp_impl.csrmv_kernel(dtypes, shape=shape, transpose=transpose, outs=outs)


_csrmv_p = XLACustomKernel('csrmv')
_csrmv_p.def_jax_kernel(reference.csrmv_kernel)
register_numba(_csrmv_p, _numba_kernel)
register_warp(_csrmv_p, _warp_kernel)
register_rules(_csrmv_p, LinearOp(
    operands=('data', 'indices', 'indptr', 'v'), events=False, call=bind_csrmv, float_call=bind_csrmv,
    weight_cotangent=reference.entry_cotangent, mm_call=bind_csrmm, is_mm=False))
