"""``csrmv``: a CSR sparse matrix times a dense float vector."""

from __future__ import annotations

from eventjax.kernels.common import Operator
from eventjax.kernels.csr import reference
from eventjax.kernels.csr.arguments import checked_call, repair_structure

__all__ = ['csrmv']


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
    return checked_call(_csrmv, data, indices, indptr, v,
                        shape=shape, transpose=transpose, backend=backend, validate=validate)


_csrmv = Operator('csrmv', __package__, ('data', 'indices', 'indptr', 'v'),
                  events=False, matrix=False, weight_cotangent=reference.entry_cotangent, mm_op='csrmm',
                  kernels=('numba', 'warp', 'pallas', 'cpp', 'cuda'), prepare=repair_structure)
