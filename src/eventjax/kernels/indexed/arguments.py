"""Argument checks of the index-list products: CSR structure, the weight permutation and the index list."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from eventjax.kernels.common.checks import (
    check_csr_operands,
    check_events,
    check_index_array,
    check_length,
    check_rank,
    check_shape,
    check_transpose,
    check_weights,
    dtype_of,
    is_concrete,
    repair_indptr,
    validate_csr_structure,
)
from eventjax.kernels.common.narrowing import host_integers, narrow_clipped, narrow_in_range
from eventjax.kernels.indexed.compaction import compact_events

__all__ = ['check_indexed_call', 'check_indexed_mm_call', 'check_structure', 'narrow_index_list']


def _check_perm(who, perm, data, nnz, index_dtype, validate):
    """``perm`` as an index array of length ``nnz``, or shape ``(0,)`` for no permutation."""
    if perm is None:
        return jnp.zeros((0,), index_dtype)
    perm = check_index_array(who, 'perm', perm).astype(index_dtype)
    check_length(who, 'perm', perm, nnz, 'one canonical weight position per entry of indices')
    if validate and is_concrete(perm) and data.shape[0] != 1 and nnz:
        p = np.asarray(perm)
        bad = (p < 0) | (p >= data.shape[0])
        if bad.any():
            k = int(np.flatnonzero(bad)[0])
            raise ValueError(f'{who}: perm[{k}] = {p[k]} is outside [0, {data.shape[0]}) (the positions of data); '
                             f'fix the permutation. validate=False skips this check and drops such entries.')
    return perm


def narrow_index_list(who, name, x, size):
    """An int32/int64 rank-1 list of indices into ``size`` as int32, each one outside ``[0, size)`` as -1.

    Decided before narrowing, so a wide index (``2**32 + 1``) is ignored as
    out of range instead of wrapping onto index 1, whatever ``jax_enable_x64``.
    """
    wide = host_integers(x)
    dtype = wide.dtype if wide is not None else dtype_of(x, who, name)
    if dtype.name not in ('int32', 'int64'):
        raise TypeError(f'{who}: {name} must be an int32 or int64 array, got {dtype.name}; '
                        f'cast it, e.g. {name}.astype(jnp.int32).')
    check_rank(who, name, x, (1,))
    return narrow_in_range(x, 0, size, -1)


def _check_index_list(who, events, size):
    """``(ids, count)``: the events given as an index list, or compacted from a spike vector."""
    if isinstance(events, tuple):
        if len(events) != 2:
            raise TypeError(f'{who}: an index list is a pair (ids, count), got a tuple of {len(events)}.')
        ids, count = events
        ids = narrow_index_list(who, 'ids', ids, size)
        wide = host_integers(count)
        shown = jnp.asarray(count) if wide is None else wide
        if shown.shape not in ((), (1,)) or not jnp.issubdtype(shown.dtype, jnp.integer):
            raise TypeError(f'{who}: count must be an integer scalar (the number of events), '
                            f'got {shown.dtype.name}{list(shown.shape)}.')
        if is_concrete(jnp.asarray(shown)) and int(np.asarray(shown).reshape(())) > ids.shape[0]:
            raise ValueError(f'{who}: count = {int(np.asarray(shown).reshape(()))} events do not fit in the '
                             f'{ids.shape[0]} slots of ids; compact with a larger capacity.')
        # Clipped before narrowing: a wide count past the list stays past it (NaN), never wraps onto a small one.
        count = narrow_clipped(count, 0, ids.shape[0] + 1).reshape(())
        return ids, count
    spikes = jnp.asarray(events)
    check_rank(who, 'spikes', spikes, (1,))
    check_length(who, 'spikes', spikes, size, 'the event side of shape')
    return compact_events(spikes)


def check_indexed_call(who, data, indices, indptr, perm, events, *, shape, transpose, validate):
    """Validate an index-list product's operands; returns ``(data, indices, indptr, perm, ids, count, shape)``.

    ``events`` is ``(ids, count)`` or a spike vector of length ``shape[0]``
    (``transpose``) or ``shape[1]``; ``perm`` None means no permutation.
    """
    check_transpose(who, transpose)
    data, indices, indptr, (m, n) = check_structure(who, data, indices, indptr, shape=shape, validate=validate,
                                                    any_data_length=perm is not None)
    perm = _check_perm(who, perm, data, indices.shape[0], indices.dtype, validate)
    ids, count = _check_index_list(who, events, m if transpose else n)
    return data, indices, indptr, perm, ids, count, (m, n)


def check_indexed_mm_call(who, data, indices, indptr, perm, events, *, shape, transpose, validate):
    """Validate a matrix index-list product; returns ``(data, indices, indptr, perm, ids, count, B, shape)``.

    ``events`` is an event matrix ``B`` (``(m, k)`` with ``transpose``, else
    ``(n, k)``), compacted to its rows with an event in any column, or
    ``(ids, count, B)`` with that list given.
    """
    check_transpose(who, transpose)
    data, indices, indptr, (m, n) = check_structure(who, data, indices, indptr, shape=shape, validate=validate,
                                                    any_data_length=perm is not None)
    perm = _check_perm(who, perm, data, indices.shape[0], indices.dtype, validate)
    size = m if transpose else n
    listed = isinstance(events, tuple)
    if listed and len(events) != 3:
        raise TypeError(f'{who}: events are an event matrix B or a triple (ids, count, B), '
                        f'got a tuple of {len(events)}.')
    B = check_events(who, 'B', events[2] if listed else events)
    check_rank(who, 'B', B, (2,))
    check_length(who, 'B', B, size, 'the event side of shape')
    # Unlisted: the rows of B with an event in any column.
    ids, count = _check_index_list(who, events[:2], size) if listed else compact_events(B)
    return data, indices, indptr, perm, ids, count, B, (m, n)


def check_structure(who, data, indices, indptr, *, shape, validate, any_data_length=False):
    """Check weights and CSR structure; returns ``(data, indices, indptr, shape)``.

    Concrete structure is validated by value when ``validate``; traced
    structure is then repaired (``repair_indptr``); ``validate=False`` trusts it.
    """
    m, n = check_shape(who, shape)
    if any_data_length:
        # Read through a permutation, data may have any length: the structure is checked beside one weight.
        data = check_weights(who, 'data', data)
        check_rank(who, 'data', data, (1,))
        _, indices, indptr = check_csr_operands(who, jnp.zeros((1,), data.dtype), indices, indptr, (m, n))
    else:
        data, indices, indptr = check_csr_operands(who, data, indices, indptr, (m, n))
    nnz = indices.shape[0]
    if validate and is_concrete(indices, indptr):
        validate_csr_structure(who, indices, indptr, n)
    elif validate:
        indptr = repair_indptr(indptr, nnz)
    return data, indices, indptr, (m, n)
