"""Argument checks shared by the plasticity updates: weights, events, traces, bounds and structure."""

from __future__ import annotations

import numbers

import jax
import jax.numpy as jnp
import numpy as np

from eventjax.kernels.common.checks import (
    check_events,
    check_index_array,
    check_index_capacity,
    check_length,
    check_rank,
    check_shape,
    check_weights,
    is_concrete,
    repair_indptr,
    validate_csr_structure,
    validate_fcn_indices,
)

__all__ = ['check_bounds', 'check_csr_structure', 'check_dense_weight', 'check_fcn_structure',
           'check_plastic_weights', 'check_positions_weight', 'check_shape', 'check_spikes', 'check_trace',
           'longest_segment', 'repair_structure']


def check_plastic_weights(who: str, weight, shape: tuple[int, ...], what: str):
    """Per-synapse float weights of exactly ``shape``; one shared (homogeneous) weight is refused."""
    weight = check_weights(who, 'weight', weight)
    n_stored = int(np.prod(shape))
    if weight.shape != tuple(shape) and weight.size == 1 and n_stored != 1:
        raise ValueError(
            f'{who}: weight is one homogeneous value, but a plasticity update changes each synapse on its own, '
            f'so it needs one weight per synapse ({what}, shape {tuple(shape)}); materialise them first, e.g. '
            f'jnp.full({tuple(shape)}, w).')
    if weight.shape != tuple(shape):
        raise ValueError(f'{who}: weight must have shape {tuple(shape)} ({what}), got {weight.shape}.')
    return weight


def check_positions_weight(who: str, weight, entries: int):
    """CSR weights reached through ``weight_indices``: rank 1 (its length is the CSR's, not the view's)."""
    if np.ndim(weight) == 0 or (np.size(weight) == 1 and entries > 1):
        raise ValueError(f'{who}: weight is one homogeneous value, but a plasticity update changes each synapse '
                         f'on its own, so it needs one weight per stored entry; materialise them first.')
    weight = check_weights(who, 'weight', weight)
    check_rank(who, 'weight', weight, (1,))
    return weight


def check_dense_weight(who: str, weight):
    """A float ``(m, n)`` weight matrix; one shared (homogeneous) weight is refused."""
    weight = check_weights(who, 'weight', weight)
    if weight.ndim != 2 and weight.size == 1:
        raise ValueError(f'{who}: weight is one homogeneous value, but a plasticity update changes each synapse '
                         f'on its own; pass the (m, n) matrix of weights.')
    check_rank(who, 'weight', weight, (2,))
    return weight


def check_spikes(who: str, name: str, spikes, length: int, what: str):
    """Events (``True`` or ``> 0``) of rank 1 and the given length."""
    spikes = check_events(who, name, spikes)
    check_rank(who, name, spikes, (1,))
    check_length(who, name, spikes, length, what)
    return spikes


def check_trace(who: str, name: str, trace, length: int, what: str, dtype):
    """A float trace of rank 1 and the given length, in the weights' dtype (the update's dtype)."""
    trace = jnp.asarray(trace)
    if not (jnp.issubdtype(trace.dtype, jnp.floating) or jnp.issubdtype(trace.dtype, jnp.integer)):
        raise TypeError(f'{who}: {name} must be a float array, got {trace.dtype.name}.')
    check_rank(who, name, trace, (1,))
    check_length(who, name, trace, length, what)
    return trace.astype(dtype)


def _bound(who: str, name: str, value):
    if value is None:
        return None
    if isinstance(value, jax.core.Tracer):
        raise TypeError(f'{who}: {name} must be a Python number or a concrete scalar array (a static '
                        f'parameter of the update), got a traced value; pass it outside jit, or clip yourself after '
                        f'the update.')
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return float(value)
    arr = np.asarray(value)
    if arr.size != 1 or not (np.issubdtype(arr.dtype, np.floating) or np.issubdtype(arr.dtype, np.integer)):
        raise TypeError(f'{who}: {name} must be None or one real number, got {value!r}.')
    return float(arr.reshape(()))


def check_bounds(who: str, w_min, w_max) -> tuple[float | None, float | None]:
    """``(w_min, w_max)`` as Python floats or None; ``w_min <= w_max``."""
    lo, hi = _bound(who, 'w_min', w_min), _bound(who, 'w_max', w_max)
    if lo is not None and hi is not None and not lo <= hi:
        raise ValueError(f'{who}: w_min = {lo} must not exceed w_max = {hi}.')
    return lo, hi


def check_csr_structure(who: str, indices, indptr, rows: int, cols: int, validate: bool, what=('rows', 'columns'),
                        repair: bool = True):
    """CSR (or column view) structure: checked by value when concrete and ``validate``, else repaired.

    Returns ``(indices, indptr)``; unchecked ``indptr`` goes through
    ``repair_indptr`` (``repair=False``: left to the operator's ``prepare``
    step, :func:`repair_structure`), and kernels skip entries whose index is
    outside ``[0, cols)``, so bad structure is dropped the same way everywhere.
    """
    indices = check_index_array(who, 'indices', indices)
    indptr = check_index_array(who, 'indptr', indptr).astype(indices.dtype)
    check_index_capacity(who, (rows, cols), indices.dtype)
    check_length(who, 'indptr', indptr, rows + 1, f'{what[0]} + 1')
    if validate and is_concrete(indices, indptr):
        validate_csr_structure(who, indices, indptr, cols)
    elif repair:
        indptr = repair_indptr(indptr, indices.shape[0])
    return indices, indptr


def repair_structure(weight, indices, indptr, *rest):
    """The CSR updates' ``prepare`` step: ``indptr`` repaired, so every kernel drops the same entries.

    The numba kernels repair inside (``numba.events.trusted_indptr``): an
    XLA check and conditional before their custom call cost more than a
    small update.
    """
    return (weight, indices, repair_indptr(indptr, indices.shape[0]), *rest)


def check_fcn_structure(who: str, indices, rows: int, cols: int, validate: bool):
    """FCN ``indices`` of shape ``(rows, k)``, checked by value when concrete and ``validate``."""
    indices = check_index_array(who, 'indices', indices, rank=2)
    check_index_capacity(who, (rows, cols), indices.dtype)
    check_length(who, 'indices', indices, rows, 'rows of shape')
    if validate and is_concrete(indices):
        validate_fcn_indices(who, indices, cols)
    return indices


def longest_segment(who: str, ptr, given, keyword: str):
    """The most entries one row (column) holds: ``given``, else read from concrete pointers, else None.

    The event-driven ``jax`` kernels give each event that many slots; None
    makes them fall back to visiting every stored entry.
    """
    if given is not None:
        if not isinstance(given, int) or given < 0:
            raise TypeError(f'{who}: {keyword} must be a non-negative Python int, got {given!r}.')
        return given
    if not is_concrete(ptr) or np.shape(ptr)[0] < 2:
        return None
    p = np.asarray(ptr)
    return int(max(np.max(np.diff(p)), 0))
