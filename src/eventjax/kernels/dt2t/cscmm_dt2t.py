"""``cscmm_dt2t``: a batch of :func:`~eventjax.kernels.dt2t.cscmv_dt2t.cscmv_dt2t`."""

from __future__ import annotations

from eventjax.kernels.dt2t.csr_dt2t import per_entry

__all__ = ['cscmm_dt2t']


def cscmm_dt2t(y, w, indices, indptr, *, shape, transpose=False, backend=None, validate=True):
    """A batch of :func:`cscmv_dt2t`: ``y`` is ``(batch, m)`` (``(batch, n)`` transposed), ``w`` ``(batch, nnz)``.

    Example:
        >>> import jax.numpy as jnp
        >>> import eventjax as ej
        >>> w, rows, indptr = jnp.array([1., 2., 3.]), jnp.array([1, 0, 1]), jnp.array([0, 1, 3])
        >>> ej.cscmm_dt2t(jnp.array([[1., 0.]]), w, rows, indptr, shape=(2, 2))
        Array([[0., 2., 0.]], dtype=float32)
    """
    return per_entry('cscmm_dt2t()', y, w, indices, indptr, shape=tuple(shape)[::-1], transpose=not transpose,
                     matrix=True, backend=backend, validate=validate)
