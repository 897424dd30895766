"""``binary_csrmv``: a CSR sparse matrix times a vector of events."""

from __future__ import annotations

import jax

from eventjax.backends import XLACustomKernel
from eventjax.kernels.common import LinearOp, register_rules
from eventjax.kernels.common.registration import register_numba, register_warp
from eventjax.kernels.csr import reference
from eventjax.kernels.csr.arguments import check_csr_call
from eventjax.kernels.csr.binary_csrmm import bind_binary_csrmm
from eventjax.kernels.csr.csrmv import bind_csrmv

__all__ = ['binary_csrmv', 'bind_binary_csrmv']


def binary_csrmv(data, indices, indptr, spikes, *, shape, transpose=False, backend=None, validate=True):
    """Multiply a CSR matrix ``A`` (``shape=(m, n)``) by a vector of events.

    An entry of ``spikes`` is an event when it is ``True`` or ``> 0``; its
    value is otherwise ignored. With ``transpose=True`` (presynaptic events
    into postsynaptic currents) the CPU kernels visit only the rows of the
    events, so the cost grows with events x connections per row. The
    derivative with respect to ``spikes`` is that of :func:`csrmv`.

    Events, dtypes and bad indices follow the contract in :doc:`/semantics`.

    Args:
        data: float weights, one per stored entry, or one shared scalar.
        indices: column index of each stored entry (int32/int64).
        indptr: row pointers, length ``m + 1``.
        spikes: length ``n`` (``m`` when ``transpose``), bool or numeric.
        shape: ``(m, n)``.
        transpose: compute ``spikes @ A`` instead of ``A @ spikes``.
        backend: per-call backend (``'jax'``, ``'numba'``, ...), or None.
        validate: check concrete index structure by value (False skips it for
            trusted structure; bad entries are then dropped).

    Returns:
        Length ``m`` (``n`` when ``transpose``), in ``data``'s dtype.

    Example:
        >>> import jax.numpy as jnp
        >>> import eventjax as ej
        >>> data, indices, indptr = jnp.array([1., 2., 3.]), jnp.array([0, 1, 1]), jnp.array([0, 2, 3])
        >>> ej.binary_csrmv(data, indices, indptr, jnp.array([True, False]), shape=(2, 2), transpose=True)
        Array([1., 2.], dtype=float32)
    """
    data, indices, indptr, spikes, shape = check_csr_call(
        'binary_csrmv()', data, indices, indptr, spikes, shape=shape, transpose=transpose,
        matrix=False, events=True, validate=validate)
    return bind_binary_csrmv(data, indices, indptr, spikes, shape=shape, transpose=transpose, backend=backend)


def bind_binary_csrmv(data, indices, indptr, spikes, *, shape, transpose, backend=None):
    """Bind the primitive on checked operands (what rules call)."""
    out = jax.ShapeDtypeStruct((shape[1] if transpose else shape[0],), data.dtype)
    return _binary_csrmv_p(data, indices, indptr, spikes, outs=(out,), backend=backend,
                           shape=shape, transpose=transpose)[0]


def _numba_kernel(*, shape, transpose, outs):
    from eventjax.kernels.csr import numba_impl
    return numba_impl.binary_csrmv_kernel(transpose=transpose)


def _warp_kernel(dtypes, *, shape, transpose, outs):
    from eventjax.kernels.csr import warp_impl
    return warp_impl.binary_csrmv_kernel(dtypes, shape=shape, transpose=transpose, outs=outs)


_binary_csrmv_p = XLACustomKernel('binary_csrmv')
_binary_csrmv_p.def_jax_kernel(reference.binary_csrmv_kernel)
register_numba(_binary_csrmv_p, _numba_kernel)
register_warp(_binary_csrmv_p, _warp_kernel)
register_rules(_binary_csrmv_p, LinearOp(
    operands=('data', 'indices', 'indptr', 'spikes'), events=True, call=bind_binary_csrmv,
    float_call=bind_csrmv, weight_cotangent=reference.entry_cotangent, mm_call=bind_binary_csrmm, is_mm=False))
