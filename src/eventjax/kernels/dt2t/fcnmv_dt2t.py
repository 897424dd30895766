"""``fcnmv_dt2t``: one value per stored connection of a fixed-number-of-connections matrix.

An FCN matrix's rows are CSR rows of one length ``k``: the products run on
the ``csr_dt2t`` primitive with row pointers ``0, k, 2k, ...`` (``m + 1``
integers, next to ``m * k`` values).
"""

from __future__ import annotations

import jax.numpy as jnp

from eventjax.kernels.common.checks import check_index_array, check_shape, is_concrete, validate_fcn_indices
from eventjax.kernels.dt2t.csr_dt2t import per_entry

__all__ = ['fcn_per_entry', 'fcnmv_dt2t']


def fcn_per_entry(who, weights, indices, y, *, shape, transpose, matrix, backend, validate):
    """The checks of the FCN forms, then :func:`.csr_dt2t.per_entry` on rows of length ``k``; ``(..., m, k)``."""
    m, n = check_shape(who, shape)
    indices = check_index_array(who, 'indices', indices, rank=2)
    if indices.shape[0] != m:
        raise ValueError(f'{who}: indices must have shape ({m}, k) (one row per row of shape), '
                         f'got {indices.shape}.')
    if validate and is_concrete(indices):
        validate_fcn_indices(who, indices, n)
    k = indices.shape[1]
    w = jnp.asarray(getattr(weights, 'mantissa', weights))
    lead = w.ndim - 2
    if w.ndim >= 2 and w.shape[lead:] != indices.shape and w.shape[-1] != m * k:
        raise ValueError(f'{who}: weights must have the shape of indices, {indices.shape}, or be one shared '
                         f'scalar, got {w.shape}.')
    if w.ndim >= 2 and w.shape[lead:] == indices.shape:
        weights = weights.reshape((*w.shape[:lead], m * k))
    indptr = jnp.arange(m + 1, dtype=indices.dtype) * k
    out = per_entry(who, y, weights, indices.reshape(-1), indptr, shape=(m, n), transpose=transpose, matrix=matrix,
                    backend=backend, validate=False)
    return out.reshape((*out.shape[:-1], m, k))


def fcnmv_dt2t(weights, indices, y, *, shape, transpose=False, backend=None, validate=True):
    """One value per stored connection of an FCN matrix ``A`` (``shape=(m, n)``, ``indices`` ``(m, k)``).

    ``out[i, s] = weights[i, s] * y[i]``, or ``weights[i, s] *
    y[indices[i, s]]`` when ``transpose`` (brainevent's convention for this
    operator, the opposite of :func:`eventjax.fcnmv`'s flag). A bool ``y``
    is events (``weights`` where there is one, 0 elsewhere); units multiply;
    everything else is :func:`eventjax.csrmv_dt2t`'s.

    Args:
        weights: ``(m, k)``, or one shared scalar.
        indices: ``(m, k)`` column indices.
        y: length ``m`` (``n`` when ``transpose``), float or bool.
        shape: ``(m, n)``.
        transpose: read ``y`` at each connection's column instead of its row.
        backend, validate: as in :func:`eventjax.fcnmv`.

    Returns:
        ``(m, k)``.

    Example:
        >>> import jax.numpy as jnp
        >>> import eventjax as ej
        >>> weights, indices = jnp.array([[0.5, 1.0], [1.5, 2.0]]), jnp.array([[0, 1], [1, 2]])
        >>> ej.fcnmv_dt2t(weights, indices, jnp.array([10., 20.]), shape=(2, 3))
        Array([[ 5., 10.],
               [30., 40.]], dtype=float32)
        >>> ej.fcnmv_dt2t(weights, indices, jnp.array([1., 2., 3.]), shape=(2, 3), transpose=True)
        Array([[0.5, 2. ],
               [3. , 6. ]], dtype=float32)
    """
    return fcn_per_entry('fcnmv_dt2t()', weights, indices, y, shape=shape, transpose=transpose, matrix=False,
                         backend=backend, validate=validate)

