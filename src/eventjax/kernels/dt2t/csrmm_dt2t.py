"""``csrmm_dt2t``: a batch of ``csrmv_dt2t``, one row of values per row of ``y``."""

from __future__ import annotations

from eventjax.kernels.dt2t.csr_dt2t import per_entry

__all__ = ['csrmm_dt2t']


def csrmm_dt2t(y, w, indices, indptr, *, shape, transpose=False, backend=None, validate=True):
    """A batch of :func:`csrmv_dt2t`: ``out[b, e] = w[b, e] * y[b, row(e)]`` (``y[b, indices[e]]`` transposed).

    Args:
        y: ``(batch, m)`` (``(batch, n)`` when ``transpose``), float or bool.
        w: ``(batch, nnz)``, or ``(nnz,)`` / a scalar shared by the batch.
        indices, indptr, shape, transpose, backend, validate: as in :func:`~eventjax.csrmv_dt2t`.

    Returns:
        ``(batch, nnz)``.

    Example:
        >>> import jax.numpy as jnp
        >>> import eventjax as ej
        >>> w, indices, indptr = jnp.array([1., 2., 3.]), jnp.array([0, 1, 1]), jnp.array([0, 2, 3])
        >>> ej.csrmm_dt2t(jnp.array([[1., 0.], [0., 1.]]), w, indices, indptr, shape=(2, 2))
        Array([[1., 2., 0.],
               [0., 0., 3.]], dtype=float32)
    """
    return per_entry('csrmm_dt2t()', y, w, indices, indptr, shape=shape, transpose=transpose, matrix=True,
                     backend=backend, validate=validate)
