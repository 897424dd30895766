"""Any per-edge rule, applied only to the edges of the neurons that fired: ``*_apply_on_pre`` / ``*_apply_on_post``.

A rule ``rule(edge, pre, post, params) -> new_edge`` maps the state of one
edge (a pytree of scalars: a weight, an eligibility trace...) and the values
of its two neurons to the edge's new state. The functions here gather the
edges of the neurons with an event a chunk of neurons at a time (as the
event-driven ``jax`` kernels do, in a loop whose carry is the edge state,
so XLA updates it in place), apply the rule to those edges with ``vmap``
and scatter the results back, so a step costs events x connections per
neuron, not the number of edges. Everything is JAX: ``params`` (and the
states and values) are differentiable, and the calls compose with ``jit``,
``vmap`` and ``lax.scan``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from eventjax.kernels.common.checks import check_events, is_concrete
from eventjax.kernels.common.compaction import by_event_pieces, event_mask, piece_width
from eventjax.kernels.plasticity.arguments import check_csr_structure, check_fcn_structure, check_shape
from eventjax.kernels.plasticity.column_view import csr_column_view

__all__ = ['csr_apply_on_post', 'csr_apply_on_pre', 'dense_apply_on_post', 'dense_apply_on_pre',
           'fcn_apply_on_pre']


def _leaves_shaped(who: str, name: str, tree, shape: tuple[int, ...]):
    for leaf in jax.tree.leaves(tree):
        if jnp.shape(leaf) != shape:
            raise ValueError(f'{who}: every leaf of {name} must have shape {shape}, got {jnp.shape(leaf)}.')


def _take(tree, idx):
    return jax.tree.map(lambda a: jnp.asarray(a)[idx], tree)


def _rule_on(rule, edges, pre, post, params, who):
    new = jax.vmap(rule, in_axes=(0, 0, 0, None))(edges, pre, post, params)
    if jax.tree.structure(new) != jax.tree.structure(edges):
        raise TypeError(f'{who}: the rule must return the edge state with the structure it was given '
                        f'({jax.tree.structure(edges)}), got {jax.tree.structure(new)}.')
    return jax.tree.map(lambda n, e: n.astype(e.dtype), new, edges)


def _segments(who, rule, edge_state, spikes, starts, lens, max_len, pre_vals, post_vals, post_of, partners,
              params, position_of=lambda pos: pos):
    """The rule on the edges ``[starts[i], starts[i] + lens[i])`` of every neuron ``i`` with an event.

    ``post_of(positions)`` gives the partner neuron of those edges (one of
    ``partners``; an edge whose partner is out of range, from unvalidated
    structure, is left alone, as the fixed updates drop it) and
    ``position_of`` where an edge's state is stored.
    """
    size = jax.tree.leaves(edge_state)[0].shape[0]
    m = spikes.shape[0]
    if max_len == 0 or m == 0 or size == 0 or partners == 0:
        return edge_state
    width = piece_width(size, m, max_len)

    def one_pass(neuron, valid, skip, slots, edge_state):
        slot = jnp.asarray(skip).astype(starts.dtype) + jnp.arange(slots, dtype=starts.dtype)[None, :]
        ok = (slot < jnp.where(valid, lens[neuron], 0)[:, None]) & (slot < max_len)
        at = jnp.where(ok, starts[neuron][:, None] + slot, 0).reshape(-1)
        partner = post_of(at)
        ok = ok.reshape(-1) & (partner >= 0) & (partner < partners)
        stored = jnp.where(ok, position_of(at), size)
        edges = _take(edge_state, jnp.minimum(stored, size - 1))
        pre = _take(pre_vals, jnp.repeat(neuron, slots))
        new = _rule_on(rule, edges, pre, _take(post_vals, jnp.clip(partner, 0, max(partners - 1, 0))), params, who)
        # A neuron with more edges than max_len (a broken promise under jit) gets NaN in the edges this
        # pass reaches, never a silently partial update.
        broken = jnp.repeat(valid & (lens[neuron] > max_len), slots)
        new = jax.tree.map(lambda v: jnp.where(broken, jnp.nan, v) if jnp.issubdtype(v.dtype, jnp.inexact) else v,
                           new)
        return jax.tree.map(lambda a, v: a.at[stored].set(v, mode='drop'), edge_state, new)

    # The edge state is the loop's carry: XLA updates it in place (no copy under donation or in a scan).
    # Rows are read in pieces: a long row costs its own pieces, not its length in slots for every row.
    return by_event_pieces(event_mask(spikes), lens, width, max_len, one_pass, edge_state, past_longest=False)


def _max_len(who, ptr, given, keyword):
    """The most edges one neuron has: ``given`` (checked against concrete pointers), or read from them."""
    if given is None and not is_concrete(ptr):
        raise ValueError(f'{who}: the structure is traced, so the longest row is unknown; pass '
                         f'{keyword}= (a Python int, at least the most edges any neuron has).')
    longest = int(np.max(np.diff(np.asarray(ptr)), initial=0)) if is_concrete(ptr) else None
    if given is None:
        return longest
    if longest is not None and longest > int(given):
        raise ValueError(f'{who}: {keyword}={int(given)}, but a neuron has {longest} edges; pass at least '
                         f'{keyword}={longest} (or leave it out while the structure is concrete).')
    return int(given)


def csr_apply_on_pre(rule: Callable, edge_state: Any, indices, indptr, spikes, *, pre_vals=None, post_vals=None,
                     params=None, shape, max_row_length: int | None = None):
    """Apply ``rule`` to the edges of every presynaptic neuron with an event (CSR rows).

    Args:
        rule: ``rule(edge, pre, post, params) -> new_edge``, one edge at a time
            (it is vmapped): ``edge`` has the structure of ``edge_state`` with
            scalar leaves, ``pre`` / ``post`` those of ``pre_vals`` / ``post_vals``.
        edge_state: a pytree of arrays of length ``nnz`` (CSR order).
        indices, indptr: the CSR structure of ``shape=(m, n)``.
        spikes: length ``m``; ``True`` or ``> 0`` is an event.
        pre_vals: a pytree of arrays of length ``m`` (or None).
        post_vals: a pytree of arrays of length ``n`` (or None).
        params: anything the rule reads; differentiable.
        max_row_length: the most edges a row has (needed when the structure is traced; checked when
            it is concrete). Under ``jit`` a firing row with more edges gets NaN in the floating
            leaves of its edges: a broken promise is never a silently partial update.

    Returns:
        ``edge_state`` with the edges of the firing rows replaced by the rule's result.

    Example:
        >>> import jax.numpy as jnp
        >>> rule = lambda e, pre, post, p: {'w': e['w'] + p * post}
        >>> out = csr_apply_on_pre(rule, {'w': jnp.zeros(3)}, jnp.array([0, 1, 1]), jnp.array([0, 2, 3]),
        ...                        jnp.array([True, False]), post_vals=jnp.array([1., 2.]), params=0.5, shape=(2, 2))
        >>> out['w']
        Array([0.5, 1. , 0. ], dtype=float32)
    """
    who = 'csr_apply_on_pre()'
    m, n = check_shape(who, shape)
    given_ptr = indptr
    indices, indptr = check_csr_structure(who, indices, indptr, m, n, True)
    _leaves_shaped(who, 'edge_state', edge_state, (indices.shape[0],))
    spikes = check_events(who, 'spikes', spikes)
    max_len = _max_len(who, given_ptr, max_row_length, 'max_row_length')
    lens = indptr[1:] - indptr[:-1]
    return _segments(who, rule, edge_state, spikes, indptr[:-1], lens, max_len, pre_vals, post_vals,
                     lambda at: indices[at], n, params)


def csr_apply_on_post(rule: Callable, edge_state: Any, indices, indptr, spikes, *, pre_vals=None, post_vals=None,
                      params=None, shape, column_view=None, max_col_length: int | None = None):
    """Apply ``rule`` to the edges of every postsynaptic neuron with an event (CSR columns).

    The edges of a column are found through the column view
    (:func:`csr_column_view`; pass ``column_view=`` to reuse one, e.g.
    ``CSR.column_view()``). Arguments as in :func:`csr_apply_on_pre`, with
    ``spikes`` of length ``n`` and ``max_col_length`` the most edges a column has.

    Example:
        >>> import jax.numpy as jnp
        >>> rule = lambda e, pre, post, p: e + p * pre
        >>> csr_apply_on_post(rule, jnp.zeros(3), jnp.array([0, 1, 1]), jnp.array([0, 2, 3]),
        ...                   jnp.array([False, True]), pre_vals=jnp.array([1., 2.]), params=1.0, shape=(2, 2))
        Array([0., 1., 2.], dtype=float32)
    """
    who = 'csr_apply_on_post()'
    m, n = check_shape(who, shape)
    indices, indptr = check_csr_structure(who, indices, indptr, m, n, True)
    _leaves_shaped(who, 'edge_state', edge_state, (indices.shape[0],))
    spikes = check_events(who, 'spikes', spikes)
    rows, col_ptr, pos = column_view if column_view is not None else csr_column_view(indices, indptr, shape=(m, n))
    max_len = _max_len(who, col_ptr, max_col_length, 'max_col_length')
    lens = col_ptr[1:] - col_ptr[:-1]
    # Swap the roles: the rule still gets (edge, pre, post).
    swapped = lambda e, post, pre, p: rule(e, pre, post, p)
    return _segments(who, swapped, edge_state, spikes, col_ptr[:-1], lens, max_len, post_vals, pre_vals,
                     lambda at: rows[at], m, params, position_of=lambda at: pos[at])


def fcn_apply_on_pre(rule: Callable, edge_state: Any, indices, spikes, *, pre_vals=None, post_vals=None,
                     params=None, shape):
    """Apply ``rule`` to the ``k`` edges of every row with an event of a fixed-number-of-connections layout.

    ``edge_state`` leaves and ``indices`` have shape ``(m, k)``; other
    arguments as in :func:`csr_apply_on_pre`.

    Example:
        >>> import jax.numpy as jnp
        >>> fcn_apply_on_pre(lambda e, pre, post, p: e + post, jnp.zeros((2, 1)), jnp.array([[1], [0]]),
        ...                  jnp.array([True, False]), post_vals=jnp.array([1., 2.]), shape=(2, 2))
        Array([[2.],
               [0.]], dtype=float32)
    """
    who = 'fcn_apply_on_pre()'
    m, n = check_shape(who, shape)
    indices = check_fcn_structure(who, indices, m, n, True)
    k = indices.shape[1]
    _leaves_shaped(who, 'edge_state', edge_state, (m, k))
    return _full_segments(who, rule, edge_state, spikes, (m, k), (m, k), lambda at: indices.reshape(-1)[at], n,
                          pre_vals, post_vals, params)


def dense_apply_on_pre(rule: Callable, edge_state: Any, spikes, *, pre_vals=None, post_vals=None, params=None):
    """Apply ``rule`` to row ``i`` of a dense ``(m, n)`` edge state for every presynaptic event ``i``.

    Example:
        >>> import jax.numpy as jnp
        >>> dense_apply_on_pre(lambda e, pre, post, p: e + post, jnp.zeros((2, 2)), jnp.array([False, True]),
        ...                    post_vals=jnp.array([1., 2.]))
        Array([[0., 0.],
               [1., 2.]], dtype=float32)
    """
    who = 'dense_apply_on_pre()'
    m, n = _dense_shape(who, edge_state)
    return _full_segments(who, rule, edge_state, spikes, (m, n), (m, n), lambda at: at % max(n, 1), n, pre_vals,
                          post_vals, params)


def _full_segments(who, rule, edge_state, spikes, shape, segments, column_of, n, pre_vals, post_vals, params,
                   position_of=lambda pos: pos):
    """:func:`_segments` over an edge state of ``shape`` read as ``segments = (count, length)``, all full."""
    count, length = segments
    spikes = check_events(who, 'spikes', spikes)
    flat = jax.tree.map(lambda a: jnp.reshape(a, (count * length,)), edge_state)
    starts = jnp.arange(count, dtype=jnp.int32) * length
    out = _segments(who, rule, flat, spikes, starts, jnp.full((count,), length, jnp.int32), length, pre_vals,
                    post_vals, column_of, n, params, position_of=position_of)
    return jax.tree.map(lambda a: a.reshape(shape), out)


def _dense_shape(who, edge_state):
    leaves = jax.tree.leaves(edge_state)
    if not leaves or jnp.ndim(leaves[0]) != 2:
        raise ValueError(f'{who}: edge_state must hold (m, n) arrays.')
    m, n = jnp.shape(leaves[0])
    _leaves_shaped(who, 'edge_state', edge_state, (m, n))
    return m, n


def dense_apply_on_post(rule: Callable, edge_state: Any, spikes, *, pre_vals=None, post_vals=None, params=None):
    """Apply ``rule`` to column ``j`` of a dense ``(m, n)`` edge state for every postsynaptic event ``j``.

    Example:
        >>> import jax.numpy as jnp
        >>> dense_apply_on_post(lambda e, pre, post, p: e + pre, jnp.zeros((2, 2)), jnp.array([False, True]),
        ...                     pre_vals=jnp.array([1., 2.]))
        Array([[0., 1.],
               [0., 2.]], dtype=float32)
    """
    who = 'dense_apply_on_post()'
    m, n = _dense_shape(who, edge_state)
    # Column j's slots are virtual positions j * m + i; edge (i, j) is stored at i * n + j (no transposed copy).
    swapped = lambda e, post, pre, p: rule(e, pre, post, p)
    return _full_segments(who, swapped, edge_state, spikes, (m, n), (n, m), lambda at: at % max(m, 1), m, post_vals,
                          pre_vals, params, position_of=lambda at: (at % max(m, 1)) * n + at // max(m, 1))
