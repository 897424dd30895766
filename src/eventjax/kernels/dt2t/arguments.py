"""Argument checks of the per-synapse products: structure, the per-synapse values and the neuron vector."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from eventjax.kernels.common.checks import (
    check_csr_operands,
    check_float_operand,
    check_length,
    check_rank,
    check_shape,
    check_transpose,
    dtype_of,
    float_result_dtype,
    is_concrete,
    repair_indptr,
    validate_csr_structure,
)

__all__ = ['check_dt2t_call', 'check_structure']


def check_structure(who, indices, indptr, *, shape, validate):
    """``(indices, indptr, shape)`` checked by dtype and shape, by value when concrete and ``validate``.

    ``indptr`` comes back repaired (:func:`~eventjax.kernels.common.checks.repair_indptr`),
    so every backend drops the same entries of unvalidated structure.
    """
    m, n = check_shape(who, shape)
    _, indices, indptr = check_csr_operands(who, jnp.zeros((1,), jnp.float32), indices, indptr, (m, n))
    if validate and is_concrete(indices, indptr):
        validate_csr_structure(who, indices, indptr, n)
    return indices, repair_indptr(indptr, indices.shape[0]), (m, n)


def check_dt2t_call(who, w, indices, indptr, y, *, shape, transpose, matrix, validate):
    """Validate a per-synapse product; returns ``(w, indices, indptr, y, events, shape)``.

    ``w`` comes back as ``(batch, nnz)`` (a scalar, ``(1,)`` or ``(nnz,)``
    broadcast) and ``y`` as ``(batch, size)``; a bool ``y`` is events and
    keeps its dtype, any other is cast with ``w`` to their promoted float dtype.
    """
    check_transpose(who, transpose)
    indices, indptr, (m, n) = check_structure(who, indices, indptr, shape=shape, validate=validate)
    nnz = indices.shape[0]
    check_rank(who, 'y', y, (2,) if matrix else (1,))
    y = jnp.asarray(y)
    events = dtype_of(y) == np.bool_
    wd = dtype_of(w)
    if wd.name not in ('float16', 'float32', 'float64'):
        raise TypeError(f'{who}: w must be a float16, float32 or float64 array, got {wd.name}; '
                        f'cast it, e.g. w.astype(jnp.float32).')
    if events:
        w = jnp.asarray(w)
    else:
        dtype = float_result_dtype(who, 'y', w, y)
        w, y = jnp.asarray(w).astype(dtype), check_float_operand(who, 'y', y, dtype)
    size, what = (n, 'columns of shape, as transpose=True') if transpose else (m, 'rows of shape')
    check_length(who, 'y', y, size, what, axis=y.ndim - 1)
    batch = y.shape[0] if matrix else 1
    allowed = [(), (1,), (nnz,)] + ([(batch, nnz)] if matrix else [])
    if w.shape not in allowed:
        want = f'({batch}, {nnz}) (batch, entries), ' if matrix else ''
        raise ValueError(f'{who}: w must have shape {want}({nnz},) (one value per stored entry) or be a scalar, '
                         f'got {w.shape}.')
    w = jnp.broadcast_to(w.reshape(-1) if w.shape == (1,) else w, (batch, nnz))
    return w, indices, indptr, y.reshape(batch, size), events, (m, n)
