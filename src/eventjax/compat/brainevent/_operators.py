"""brainevent's operators with brainevent's signatures, keyword names and event rule, on eventjax's kernels.

Binary operators count an entry as an event when it is ``!= 0`` (brainevent's
rule); ``weighted=True`` multiplies the weights by the event values (the
exact product); ``workspace=`` is accepted and ignored (eventjax's kernels
plan their own work). Errors come as brainevent's classes, each a subclass
of the eventjax class or builtin eventjax raises.
"""

from __future__ import annotations

import jax.numpy as jnp

import eventjax as ej
from eventjax.compat import legacy
from eventjax.compat.brainevent._containers import seed_or_draw
from eventjax.compat.brainevent._errors import MathError, brainevent_errors
from eventjax.compat.brainevent._events import active, events

__all__ = [
    'binary_csrmm', 'binary_csrmm_indexed', 'binary_csrmv', 'binary_csrmv_indexed', 'binary_densemm',
    'binary_densemv', 'binary_fcnmm', 'binary_fcnmv', 'binary_jitnmm', 'binary_jitnmv', 'binary_jitsmm',
    'binary_jitsmv', 'binary_jitumm', 'binary_jitumv', 'coo2csr', 'coo_to_csc_index', 'csc_to_csr_index',
    'csr_apply_on_post', 'csr_apply_on_pre', 'csr_delay_deliver', 'csr_delay_deliver_layout', 'csr_slice_rows',
    'csr_to_coo_index', 'csr_to_csc_index', 'cscmm_dt2t', 'cscmv_dt2t', 'csrmm', 'csrmm_dt2t', 'csrmv',
    'csrmv_dt2t', 'fcnmm', 'fcnmm_dt2t', 'fcnmv', 'fcnmv_dt2t', 'jitn', 'jitnmm', 'jitnmv', 'jitnmv_dt2t', 'jits',
    'jitsmm', 'jitsmv', 'jitsmv_dt2t', 'jitu', 'jitumm', 'jitumv', 'jitumv_dt2t',
]


def _rank(who: str, x, ranks: tuple[int, ...]):
    # brainevent refuses 0-d and 3-d operands with MathError.
    if jnp.ndim(getattr(x, 'mantissa', x)) not in ranks:
        raise MathError(f'{who}: the event operand must be {" or ".join(f"{r}-D" for r in ranks)}, got shape '
                        f'{jnp.shape(getattr(x, "mantissa", x))}.')


# -- CSR --------------------------------------------------------------------------------------------

def _product(who, rank, float_op, binary_op, operands, x, *, weighted, **kw):
    # weighted=True is the exact product with the values; else the entries x != 0 are the events.
    if rank:
        _rank(who, x, (rank,))
    if weighted:
        return float_op(*operands, x, **kw)
    return binary_op(*operands, events(x), **kw)


def _permuted(data, perm):
    return data if jnp.size(data) == 1 or perm is None else jnp.asarray(data)[perm]


@brainevent_errors
def binary_csrmv(data, indices, indptr, v, *, shape, workspace=None, transpose: bool = False, backend=None,
                 weighted: bool = False):
    """brainevent's ``binary_csrmv``: ``A @ v`` with ``v != 0`` as events (``weighted=True``: ``A @ v``)."""
    return _product('binary_csrmv()', 1, ej.csrmv, ej.binary_csrmv, (data, indices, indptr), v, shape=shape,
                    transpose=transpose, backend=backend, weighted=weighted)


@brainevent_errors
def binary_csrmm(data, indices, indptr, B, *, shape, workspace=None, transpose: bool = False, backend=None,
                 weighted: bool = False):
    """brainevent's ``binary_csrmm``: ``A @ B`` with ``B != 0`` as events (``weighted=True``: ``A @ B``)."""
    return _product('binary_csrmm()', 2, ej.csrmm, ej.binary_csrmm, (data, indices, indptr), B, shape=shape,
                    transpose=transpose, backend=backend, weighted=weighted)


@brainevent_errors
def binary_csrmv_indexed(data, indices, indptr, perm, v, *, shape, workspace=None, transpose: bool = False,
                         backend=None, weighted: bool = False):
    """brainevent's ``binary_csrmv_indexed``: :func:`binary_csrmv` of ``data[perm]``."""
    return _indexed(ej.csrmv, ej.binary_csrmv_indexed, data, indices, indptr, perm, v, shape=shape,
                    transpose=transpose, backend=backend, weighted=weighted)


@brainevent_errors
def binary_csrmm_indexed(data, indices, indptr, perm, B, *, shape, workspace=None, transpose: bool = False,
                         backend=None, weighted: bool = False):
    """brainevent's ``binary_csrmm_indexed``: :func:`binary_csrmm` of ``data[perm]``."""
    return _indexed(ej.csrmm, ej.binary_csrmm_indexed, data, indices, indptr, perm, B, shape=shape,
                    transpose=transpose, backend=backend, weighted=weighted)


def _indexed(float_op, binary_op, data, indices, indptr, perm, x, *, shape, transpose, backend, weighted):
    """``weighted``: the float product of ``data[perm]``; else the indexed event product of ``x != 0``."""
    if weighted:
        return float_op(_permuted(data, perm), indices, indptr, x, shape=shape, transpose=transpose, backend=backend)
    return binary_op(data, indices, indptr, perm, events(x), shape=shape, transpose=transpose, backend=backend)


csrmv, csrmm = brainevent_errors(ej.csrmv), brainevent_errors(ej.csrmm)
csrmv_dt2t, csrmm_dt2t = brainevent_errors(ej.csrmv_dt2t), brainevent_errors(ej.csrmm_dt2t)
cscmv_dt2t, cscmm_dt2t = brainevent_errors(ej.cscmv_dt2t), brainevent_errors(ej.cscmm_dt2t)
csr_slice_rows = brainevent_errors(ej.csr_slice_rows)


def _delay_events(x, weighted):
    # Binary delivery counts x != 0 as an event; weighted delivery (and an event array, which
    # carries its own rule) passes unchanged.
    if weighted or getattr(x, '_eventjax_container', False):
        return x
    return events(x)


@brainevent_errors
def csr_delay_deliver(ring, events, data, indices, indptr, delays, t, *, shape, weighted=None, backend=None):
    """brainevent's ``csr_delay_deliver``: :func:`eventjax.csr_delay_deliver` with ``events != 0`` as events.

    Example:
        >>> import jax.numpy as jnp
        >>> out = csr_delay_deliver(jnp.zeros((3, 2)), jnp.array([-1., 0.]), jnp.array([1., 2.]), jnp.array([0, 1]),
        ...                         jnp.array([0, 2, 2]), jnp.array([1, 2]), 0, shape=(2, 2))
        >>> out[1:].tolist()
        [[1.0, 0.0], [0.0, 2.0]]
    """
    return ej.csr_delay_deliver(ring, _delay_events(events, weighted), data, indices, indptr, delays, t, shape=shape,
                                weighted=weighted, backend=backend)


@brainevent_errors
def csr_delay_deliver_layout(ring, events, layout, t, *, weighted=None, backend=None):
    """brainevent's ``csr_delay_deliver_layout``: :func:`eventjax.csr_delay_deliver_layout`, ``!= 0`` events."""
    return ej.csr_delay_deliver_layout(ring, _delay_events(events, weighted), layout, t, weighted=weighted,
                                       backend=backend)
coo2csr, csr_to_coo_index, coo_to_csc_index = ej.coo2csr, ej.csr_to_coo_index, ej.coo_to_csc_index


def csr_to_csc_index(csr_indptr, csr_indices, *, shape, include_perm: bool = True, method: str = 'coo',
                     column_block_size: int = 4096):
    """brainevent's ``csr_to_csc_index``: ``(indptr, indices[, perm])`` of the CSC structure (``method`` ignored)."""
    out = ej.csr_to_csc_index(csr_indptr, csr_indices, shape=shape)
    return out if include_perm else out[:2]


def csc_to_csr_index(csc_indptr, csc_indices, *, shape, include_perm: bool = True):
    """brainevent's ``csc_to_csr_index``: ``(indptr, indices[, perm])`` of the CSR structure."""
    out = ej.csc_to_csr_index(csc_indptr, csc_indices, shape=shape)
    return out if include_perm else out[:2]


def csr_apply_on_pre(rule, edge_state, indices, indptr, pre_spike, *, pre_vals=None, post_vals=None, params=None,
                     shape):
    """brainevent's ``csr_apply_on_pre``: :func:`eventjax.csr_apply_on_pre` with ``pre_spike != 0`` as events."""
    return ej.csr_apply_on_pre(rule, edge_state, indices, indptr, active(pre_spike), pre_vals=pre_vals,
                               post_vals=post_vals, params=params, shape=shape)


def csr_apply_on_post(rule, edge_state, indices, indptr, post_spike, *, pre_vals=None, post_vals=None, params=None,
                      shape):
    """brainevent's ``csr_apply_on_post``: :func:`eventjax.csr_apply_on_post` with ``post_spike != 0`` as events."""
    return ej.csr_apply_on_post(rule, edge_state, indices, indptr, active(post_spike), pre_vals=pre_vals,
                                post_vals=post_vals, params=params, shape=shape)


# -- dense ------------------------------------------------------------------------------------------

def _dense_product(weights, x, *, transpose, backend):
    return x @ weights if transpose else weights @ x


@brainevent_errors
def binary_densemv(weights, spikes, *, transpose, backend=None, weighted: bool = False):
    """brainevent's ``binary_densemv``: ``W @ s`` (``transpose``: ``s @ W``) with ``s != 0`` as events."""
    return _product('binary_densemv()', 1, _dense_product, ej.binary_densemv, (weights,), spikes,
                    transpose=transpose, backend=backend, weighted=weighted)


@brainevent_errors
def binary_densemm(weights, spikes, *, transpose, backend=None, weighted: bool = False):
    """brainevent's ``binary_densemm``: ``W @ S`` (``transpose``: ``S @ W``) with ``S != 0`` as events."""
    return _product('binary_densemm()', 2, _dense_product, ej.binary_densemm, (weights,), spikes,
                    transpose=transpose, backend=backend, weighted=weighted)


# -- fixed number of connections ----------------------------------------------------------------------

@brainevent_errors
def binary_fcnmv(weights, indices, spikes, *, shape, transpose: bool = False, backend=None, weighted: bool = False):
    """brainevent's ``binary_fcnmv``: the fixed-connection product with ``spikes != 0`` as events."""
    return _product('binary_fcnmv()', 1, ej.fcnmv, ej.binary_fcnmv, (weights, indices), spikes, shape=shape,
                    transpose=transpose, backend=backend, weighted=weighted)


@brainevent_errors
def binary_fcnmm(weights, indices, matrix, *, shape, transpose: bool = False, backend=None, weighted: bool = False):
    """brainevent's ``binary_fcnmm``: the fixed-connection product with ``matrix != 0`` as events."""
    return _product('binary_fcnmm()', 2, ej.fcnmm, ej.binary_fcnmm, (weights, indices), matrix, shape=shape,
                    transpose=transpose, backend=backend, weighted=weighted)


@brainevent_errors
def fcnmv(weights, indices, vector, *, shape, transpose: bool = False, backend=None):
    """brainevent's ``fcnmv`` (the vector is ``vector=``)."""
    return ej.fcnmv(weights, indices, vector, shape=shape, transpose=transpose, backend=backend)


@brainevent_errors
def fcnmm(weights, indices, matrix, *, shape, transpose: bool = False, backend=None):
    """brainevent's ``fcnmm`` (the matrix is ``matrix=``)."""
    return ej.fcnmm(weights, indices, matrix, shape=shape, transpose=transpose, backend=backend)


fcnmv_dt2t, fcnmm_dt2t = brainevent_errors(ej.fcnmv_dt2t), brainevent_errors(ej.fcnmm_dt2t)


# -- just-in-time connectivity ------------------------------------------------------------------------

def _jitc_op(name: str, law: str, fn, binary: bool):
    pair = law != 'homo'

    def op(*args, seed=None, shape, transpose: bool = False, corder: bool = True, backend=None):
        # brainevent: (weight, prob, x[, seed]) or (w1, w2, prob, x[, seed]).
        k = 3 if pair else 2
        if len(args) not in (k + 1, k + 2):
            raise TypeError(f'{name}(): takes {"(w1, w2, prob, x[, seed])" if pair else "(weight, prob, x[, seed])"}'
                            f', got {len(args)} positional argument(s).')
        weights = tuple(args[:2]) if pair else args[0]
        prob, x = args[k - 1], args[k]
        seed = args[k + 1] if len(args) == k + 2 else seed
        return fn(weights, events(x) if binary else x, seed=seed_or_draw(seed), prob=prob, shape=shape, law=law,
                  transpose=transpose, backend=backend)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f'brainevent\'s ``{name}`` on :func:`eventjax.{fn.__name__}` with ``law={law!r}``.'
    return brainevent_errors(op)


def _jitc_dense(name: str, law: str):
    def dense(*args, shape, transpose: bool = False, corder: bool = True, backend=None):
        pair = law != 'homo'
        if len(args) != (4 if pair else 3):
            raise TypeError(f'{name}(): takes {"(w1, w2, prob, seed)" if pair else "(weight, prob, seed)"}, '
                            f'got {len(args)} positional argument(s).')
        weights = tuple(args[:2]) if pair else args[0]
        A = ej.JITCMatrix(weights, prob=args[-2], seed=seed_or_draw(args[-1]), shape=shape, law=law, backend=backend)
        return A.T.todense() if transpose else A.todense()

    dense.__name__ = dense.__qualname__ = name
    dense.__doc__ = f'brainevent\'s ``{name}``: the dense form of an :class:`eventjax.JITCMatrix` (law {law!r}).'
    return dense


jitsmv, jitsmm = _jitc_op('jitsmv', 'homo', ej.jitcmv, False), _jitc_op('jitsmm', 'homo', ej.jitcmm, False)
jitumv, jitumm = _jitc_op('jitumv', 'uniform', ej.jitcmv, False), _jitc_op('jitumm', 'uniform', ej.jitcmm, False)
jitnmv, jitnmm = _jitc_op('jitnmv', 'normal', ej.jitcmv, False), _jitc_op('jitnmm', 'normal', ej.jitcmm, False)
binary_jitsmv = _jitc_op('binary_jitsmv', 'homo', ej.binary_jitcmv, True)
binary_jitsmm = _jitc_op('binary_jitsmm', 'homo', ej.binary_jitcmm, True)
binary_jitumv = _jitc_op('binary_jitumv', 'uniform', ej.binary_jitcmv, True)
binary_jitumm = _jitc_op('binary_jitumm', 'uniform', ej.binary_jitcmm, True)
binary_jitnmv = _jitc_op('binary_jitnmv', 'normal', ej.binary_jitcmv, True)
binary_jitnmm = _jitc_op('binary_jitnmm', 'normal', ej.binary_jitcmm, True)
jits, jitu, jitn = _jitc_dense('jits', 'homo'), _jitc_dense('jitu', 'uniform'), _jitc_dense('jitn', 'normal')
jitsmv_dt2t, jitumv_dt2t, jitnmv_dt2t = legacy.jitsmv_dt2t, legacy.jitumv_dt2t, legacy.jitnmv_dt2t
