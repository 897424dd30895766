"""``binary_densemv``: a dense weight matrix times a vector of events."""

from __future__ import annotations

import jax

from eventjax.backends import XLACustomKernel
from eventjax.kernels.common import LinearOp, register_rules
from eventjax.kernels.common.registration import register_numba, register_warp
from eventjax.kernels.dense import reference
from eventjax.kernels.dense.arguments import check_dense_call
from eventjax.kernels.dense.binary_densemm import bind_binary_densemm

__all__ = ['binary_densemv', 'bind_binary_densemv']


def binary_densemv(weights, spikes, *, transpose=False, backend=None, validate=True):
    """Multiply a dense ``(m, n)`` weight matrix by a vector of events.

    An entry of ``spikes`` is an event when it is ``True`` or ``> 0``; the
    product sums the weight columns (rows, when ``transpose``) of the events.
    With ``transpose=True`` the CPU kernels visit only the event rows.

    Events, dtypes and bad indices follow the contract in :doc:`/semantics`.

    Args:
        weights: ``(m, n)`` float weights.
        spikes: length ``n`` (``m`` when ``transpose``), bool or numeric.
        transpose: compute ``spikes @ weights``.
        backend: per-call backend, or None.
        validate: accepted for a uniform signature (dense weights have no
            index structure to check).

    Returns:
        Length ``m`` (``n`` when ``transpose``) in ``weights``' dtype.

    Example:
        >>> import jax.numpy as jnp
        >>> import eventjax as ej
        >>> ej.binary_densemv(jnp.array([[1., 2.], [3., 4.]]), jnp.array([0.0, 5.0]))
        Array([2., 4.], dtype=float32)
    """
    weights, spikes = check_dense_call('binary_densemv()', weights, spikes, transpose=transpose, matrix=False,
        validate=validate)
    return bind_binary_densemv(weights, spikes, transpose=transpose, backend=backend)


def bind_binary_densemv(weights, spikes, *, transpose, backend=None):
    """Bind the primitive on checked operands (what rules call)."""
    out = jax.ShapeDtypeStruct((weights.shape[1] if transpose else weights.shape[0],), weights.dtype)
    return _binary_densemv_p(weights, spikes, outs=(out,), backend=backend, transpose=transpose)[0]


def _numba_kernel(*, transpose, outs):
    from eventjax.kernels.dense import numba_impl
    return numba_impl.binary_densemv_kernel(transpose=transpose)


def _warp_kernel(dtypes, *, transpose, outs):
    from eventjax.kernels.dense import warp_impl
    return warp_impl.binary_densemv_kernel(dtypes, transpose=transpose, outs=outs)


_binary_densemv_p = XLACustomKernel('binary_densemv')
_binary_densemv_p.def_jax_kernel(reference.binary_densemv_kernel)
register_numba(_binary_densemv_p, _numba_kernel)
register_warp(_binary_densemv_p, _warp_kernel)
register_rules(_binary_densemv_p, LinearOp(
    operands=('weights', 'spikes'), events=True, call=bind_binary_densemv, float_call=reference.float_product,
    weight_cotangent=reference.weight_cotangent, mm_call=bind_binary_densemm, is_mm=False))
