"""``binary_densemm``: a dense weight matrix times a matrix of events."""

from __future__ import annotations

import jax

from eventjax.backends import XLACustomKernel
from eventjax.kernels.common import LinearOp, register_rules
from eventjax.kernels.common.registration import register_numba, register_warp
from eventjax.kernels.dense import reference
from eventjax.kernels.dense.arguments import check_dense_call

__all__ = ['binary_densemm', 'bind_binary_densemm']


def binary_densemm(weights, spikes, *, transpose=False, backend=None, validate=True):
    """Multiply a dense ``(m, n)`` weight matrix by a matrix of events.

    An entry of ``spikes`` is an event when it is ``True`` or ``> 0``.

    Events, dtypes and bad indices follow the contract in :doc:`/semantics`.

    Args:
        weights: ``(m, n)`` float weights.
        spikes: ``(n, k)`` events (``(m, k)`` when ``transpose``), bool or numeric.
        transpose: compute ``weights.T @ spikes``.
        backend: per-call backend, or None.
        validate: accepted for a uniform signature (dense weights have no
            index structure to check).

    Returns:
        ``(m, k)`` (``(n, k)`` when ``transpose``) in ``weights``' dtype.

    Example:
        >>> import jax.numpy as jnp
        >>> import eventjax as ej
        >>> ej.binary_densemm(jnp.eye(2), jnp.array([[True, False], [False, False]]))
        Array([[1., 0.],
               [0., 0.]], dtype=float32)
    """
    weights, spikes = check_dense_call('binary_densemm()', weights, spikes, transpose=transpose, matrix=True,
        validate=validate)
    return bind_binary_densemm(weights, spikes, transpose=transpose, backend=backend)


def bind_binary_densemm(weights, spikes, *, transpose, backend=None):
    """Bind the primitive on checked operands (what rules call)."""
    rows = weights.shape[1] if transpose else weights.shape[0]
    out = jax.ShapeDtypeStruct((rows, spikes.shape[1]), weights.dtype)
    return _binary_densemm_p(weights, spikes, outs=(out,), backend=backend, transpose=transpose)[0]


def _numba_kernel(*, transpose, outs):
    from eventjax.kernels.dense import numba_impl
    return numba_impl.binary_densemm_kernel(transpose=transpose)


def _warp_kernel(dtypes, *, transpose, outs):
    from eventjax.kernels.dense import warp_impl
    return warp_impl.binary_densemm_kernel(dtypes, transpose=transpose, outs=outs)


_binary_densemm_p = XLACustomKernel('binary_densemm')
_binary_densemm_p.def_jax_kernel(reference.binary_densemm_kernel)
register_numba(_binary_densemm_p, _numba_kernel)
register_warp(_binary_densemm_p, _warp_kernel)
register_rules(_binary_densemm_p, LinearOp(
    operands=('weights', 'spikes'), events=True, call=bind_binary_densemm, float_call=reference.float_product,
    weight_cotangent=reference.weight_cotangent, mm_call=bind_binary_densemm, is_mm=True))
