"""``fcnmm_dt2t``: a batch of :func:`~eventjax.kernels.dt2t.fcnmv_dt2t.fcnmv_dt2t`, one value per stored connection."""

from __future__ import annotations

from eventjax.kernels.dt2t.fcnmv_dt2t import fcn_per_entry

__all__ = ['fcnmm_dt2t']


def fcnmm_dt2t(weights, indices, y, *, shape, transpose=False, backend=None, validate=True):
    """A batch of :func:`fcnmv_dt2t`: ``y`` is ``(batch, m)`` (``(batch, n)`` transposed).

    ``weights`` is ``(batch, m, k)``, or ``(m, k)`` / a scalar shared by
    the batch; the result is ``(batch, m, k)``.

    Example:
        >>> import jax.numpy as jnp
        >>> import eventjax as ej
        >>> weights, indices = jnp.ones((2, 2)), jnp.array([[0, 1], [1, 2]])
        >>> ej.fcnmm_dt2t(weights, indices, jnp.array([[1., 2.], [3., 4.]]), shape=(2, 3))
        Array([[[1., 1.],
                [2., 2.]],
        <BLANKLINE>
               [[3., 3.],
                [4., 4.]]], dtype=float32)
    """
    return fcn_per_entry('fcnmm_dt2t()', weights, indices, y, shape=shape, transpose=transpose, matrix=True,
                         backend=backend, validate=validate)
