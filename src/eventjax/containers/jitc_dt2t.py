"""brainevent's per-synapse products of just-in-time matrices: ``jitsmv_dt2t``, ``jitumv_dt2t``, ``jitnmv_dt2t``.

Each generates the matrix's connections (a concrete seed: the number of
values is the number of connections) and returns one value per connection,
in row order and, within a row, by column: the connection's weight times
``y`` at its row (its column when ``transpose``). Gradients reach the law's
parameters and ``y``.
"""

from __future__ import annotations

from eventjax.containers.jitc import JITCMatrix

__all__ = ['jitnmv_dt2t', 'jitsmv_dt2t', 'jitumv_dt2t']


def _dt2t(weights, prob, y, seed, *, shape, law, transpose, backend):
    A = JITCMatrix(weights, prob=prob, seed=seed, shape=shape, law=law)
    return A.dt2t_transposed(y, backend=backend) if transpose else A.dt2t(y, backend=backend)


def jitsmv_dt2t(weight, prob, y, seed, *, shape, transpose=False, corder=True, backend=None):
    """Per-connection ``weight * y[row]`` (``y[col]`` when ``transpose``) of a homogeneous JITC matrix.

    ``corder`` is accepted for brainevent's signature; the connections do
    not depend on it here.

    Example:
        >>> import jax.numpy as jnp
        >>> import eventjax as ej
        >>> ej.jitsmv_dt2t(0.5, 1.0, jnp.array([1., 10.]), 0, shape=(2, 2))
        Array([0.5, 0.5, 5. , 5. ], dtype=float32)
    """
    return _dt2t(weight, prob, y, seed, shape=shape, law='homo', transpose=transpose, backend=backend)


def jitumv_dt2t(w_low, w_high, prob, y, seed, *, shape, transpose=False, corder=True, backend=None):
    """Per-connection ``w * y[row]`` (``y[col]`` transposed), ``w`` uniform on ``[w_low, w_high)``.

    Example:
        >>> import jax.numpy as jnp
        >>> import eventjax as ej
        >>> ej.jitumv_dt2t(1.0, 1.0, 1.0, jnp.array([1., 10.]), 0, shape=(2, 2))
        Array([ 1.,  1., 10., 10.], dtype=float32)
    """
    return _dt2t((w_low, w_high), prob, y, seed, shape=shape, law='uniform', transpose=transpose, backend=backend)


def jitnmv_dt2t(w_loc, w_scale, prob, y, seed, *, shape, transpose=False, corder=True, backend=None):
    """Per-connection ``w * y[row]`` (``y[col]`` transposed), ``w`` normal with ``w_loc`` and ``w_scale``.

    Example:
        >>> import jax.numpy as jnp
        >>> import eventjax as ej
        >>> ej.jitnmv_dt2t(2.0, 0.0, 1.0, jnp.array([1., 10.]), 0, shape=(2, 2))
        Array([ 2.,  2., 20., 20.], dtype=float32)
    """
    return _dt2t((w_loc, w_scale), prob, y, seed, shape=shape, law='normal', transpose=transpose, backend=backend)
