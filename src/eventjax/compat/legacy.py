"""brainevent's functions that eventjax's top level still serves, until the next release.

These have no eventjax function of the same signature (``jitsmv_dt2t`` & co,
``update_fixed_pre_conn_on_binary_post``): the top level serves them with a
warning that says how eventjax writes the same
(:data:`eventjax.compat.spellings.REPLACED`); here they do not warn.

:mod:`eventjax.compat.brainevent` has all of brainevent's names with its
signatures.
"""

from __future__ import annotations

from eventjax.containers.jitc_matrix import JITCMatrix
from eventjax.kernels.common.checks import check_shape
from eventjax.kernels.plasticity import fcn_on_pre

__all__ = ['jitnmv_dt2t', 'jitsmv_dt2t', 'jitumv_dt2t', 'update_fixed_pre_conn_on_binary_post']


def _dt2t(weights, prob, y, seed, *, shape, law, transpose, backend):
    A = JITCMatrix(weights, prob=prob, seed=seed, shape=shape, law=law)
    return A.dt2t_transposed(y, backend=backend) if transpose else A.dt2t(y, backend=backend)


def jitsmv_dt2t(weight, prob, y, seed, *, shape, transpose=False, corder=True, backend=None):
    """Per-connection ``weight * y[row]`` (``y[col]`` when ``transpose``) of a homogeneous JITC matrix.

    ``corder`` is accepted for brainevent's signature; the connections do
    not depend on it here. eventjax writes it
    ``JITCMatrix(weight, prob=prob, seed=seed, shape=shape).dt2t(y)``
    (``.dt2t_transposed(y)`` for ``transpose``).

    Example:
        >>> import jax.numpy as jnp
        >>> from eventjax.compat.legacy import jitsmv_dt2t
        >>> jitsmv_dt2t(0.5, 1.0, jnp.array([1., 10.]), 0, shape=(2, 2))
        Array([0.5, 0.5, 5. , 5. ], dtype=float32)
    """
    return _dt2t(weight, prob, y, seed, shape=shape, law='homo', transpose=transpose, backend=backend)


def jitumv_dt2t(w_low, w_high, prob, y, seed, *, shape, transpose=False, corder=True, backend=None):
    """Per-connection ``w * y[row]`` (``y[col]`` transposed), ``w`` uniform on ``[w_low, w_high)``.

    Example:
        >>> import jax.numpy as jnp
        >>> from eventjax.compat.legacy import jitumv_dt2t
        >>> jitumv_dt2t(1.0, 1.0, 1.0, jnp.array([1., 10.]), 0, shape=(2, 2))
        Array([ 1.,  1., 10., 10.], dtype=float32)
    """
    return _dt2t((w_low, w_high), prob, y, seed, shape=shape, law='uniform', transpose=transpose, backend=backend)


def jitnmv_dt2t(w_loc, w_scale, prob, y, seed, *, shape, transpose=False, corder=True, backend=None):
    """Per-connection ``w * y[row]`` (``y[col]`` transposed), ``w`` normal with ``w_loc`` and ``w_scale``.

    Example:
        >>> import jax.numpy as jnp
        >>> import eventjax as ej
        >>> from eventjax.compat.legacy import jitnmv_dt2t
        >>> y = jnp.array([1., 10.])
        >>> jitnmv_dt2t(2.0, 0.0, 1.0, y, 0, shape=(2, 2))
        Array([ 2.,  2., 20., 20.], dtype=float32)
        >>> ej.JITCMatrix((2.0, 0.0), prob=1.0, seed=0, shape=(2, 2), law='normal').dt2t(y)  # eventjax's spelling
        Array([ 2.,  2., 20., 20.], dtype=float32)
    """
    return _dt2t((w_loc, w_scale), prob, y, seed, shape=shape, law='normal', transpose=transpose, backend=backend)


def update_fixed_pre_conn_on_binary_post(weight, indices, pre_trace, post_spike, w_min=None, w_max=None, *, shape,
                                         backend=None, validate=True):
    """brainevent's name: update a fixed-number-of-presynaptic-partners layout on postsynaptic events.

    ``weight`` and ``indices`` have shape ``(n_post, k)``: postsynaptic
    neuron ``j`` receives from the presynaptic neurons ``indices[j]``. On an
    event of ``j``, ``W[j, c] += pre_trace[indices[j, c]]``. ``shape`` is
    ``(n_pre, n_post)``. eventjax writes it as :func:`eventjax.fcn_on_pre`
    with the roles swapped:
    ``fcn_on_pre(weight, indices, post_spike, pre_trace, w_min, w_max, shape=(n_post, n_pre))``.

    Example:
        >>> import jax.numpy as jnp
        >>> w, idx = jnp.zeros((2, 1)), jnp.array([[2], [0]])
        >>> update_fixed_pre_conn_on_binary_post(w, idx, jnp.array([.1, .2, .3]), jnp.array([True, False]),
        ...                                      shape=(3, 2))
        Array([[0.3],
               [0. ]], dtype=float32)
    """
    n_pre, n_post = check_shape('update_fixed_pre_conn_on_binary_post()', shape)
    return fcn_on_pre(weight, indices, post_spike, pre_trace, w_min, w_max, shape=(n_post, n_pre), backend=backend,
                      validate=validate)
