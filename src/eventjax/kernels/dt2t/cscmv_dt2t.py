"""``cscmv_dt2t``: the per-synapse product of a CSC matrix, the CSR one of its transpose."""

from __future__ import annotations

from eventjax.kernels.dt2t.csr_dt2t import per_entry

__all__ = ['cscmv_dt2t']


def cscmv_dt2t(y, w, indices, indptr, *, shape, transpose=False, backend=None, validate=True):
    """One value per stored entry of a CSC matrix ``A`` (``shape=(m, n)``): ``w[e] * y[row(e)]``.

    ``indices`` holds each entry's row and ``indptr`` the column pointers
    (length ``n + 1``). ``transpose=False`` reads ``y`` (length ``m``) at
    each entry's row, ``transpose=True`` (length ``n``) at its column: the
    arrays are those of the CSR matrix ``A.T``, read the other way, so
    everything else is :func:`csrmv_dt2t`'s.

    Example:
        >>> import jax.numpy as jnp
        >>> import eventjax as ej
        >>> w, rows, indptr = jnp.array([1., 2., 3.]), jnp.array([1, 0, 1]), jnp.array([0, 1, 3])
        >>> y = jnp.array([10., 100.])
        >>> ej.cscmv_dt2t(y, w, rows, indptr, shape=(2, 2))
        Array([100.,  20., 300.], dtype=float32)
        >>> ej.csrmv_dt2t(y, w, rows, indptr, shape=(2, 2), transpose=True)  # the same arrays as A.T's CSR
        Array([100.,  20., 300.], dtype=float32)
    """
    return per_entry('cscmv_dt2t()', y, w, indices, indptr, shape=tuple(shape)[::-1], transpose=not transpose,
                     matrix=False, backend=backend, validate=validate)

