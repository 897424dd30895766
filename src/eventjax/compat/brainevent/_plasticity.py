"""brainevent's plasticity updates on eventjax's: its event rule, its units and its bounds.

Three things differ from eventjax's own updates, and each follows brainevent
0.3.0 here:

- an entry of a spike vector is an event when it is ``!= 0`` (negative and
  NaN too), not ``> 0``;
- the weights may be a brainunit ``Quantity``: the trace is converted into
  the weights' unit (brainunit's ``UnitMismatchError`` for another
  dimension), the update runs on the mantissas and the result comes back in
  the weights' unit;
- ``w_min`` / ``w_max`` bound **every** weight after the update,
  ``clip(W + dW, w_min, w_max)`` over the whole array, where eventjax bounds
  only the entries an event touched. Weights that start outside the bounds
  are pulled in by the first update, touched or not, as brainevent does. The
  bounds may be numbers, arrays or ``Quantity`` values (brainunit's ``clip``).
"""

from __future__ import annotations

import jax.numpy as jnp

import eventjax as ej
from eventjax.compat.brainevent._errors import MathError, brainevent_errors
from eventjax.compat.brainevent._events import active
from eventjax.kernels.common import units

__all__ = ['bounded_update', 'update_csc_on_binary_post', 'update_csc_on_binary_pre', 'update_csr_on_binary_post',
           'update_csr_on_binary_pre', 'update_dense_on_binary_post', 'update_dense_on_binary_pre',
           'update_fixed_post_conn_on_binary_pre', 'update_fixed_pre_conn_on_binary_post']


def _in_unit(x, unit):
    """The numbers of ``x`` expressed in ``unit`` (None: no unit); another dimension is brainunit's error."""
    mantissa, own = units.split(x)
    if own is None and unit is None:
        return x
    factor = units.conversion_factor(own, unit)
    return mantissa if factor == 1.0 else mantissa * factor


def _clip(weight, w_min, w_max):
    if w_min is None and w_max is None:
        return weight
    if any(units.is_quantity(v) for v in (weight, w_min, w_max)):
        import brainunit  # a Quantity exists, so brainunit is installed

        return brainunit.math.clip(weight, w_min, w_max)
    return jnp.clip(weight, w_min, w_max)


def bounded_update(update, weight, trace, w_min, w_max):
    """``clip(update(weight, trace), w_min, w_max)`` over every weight, units as brainevent handles them.

    ``update(weight, trace)`` gets plain arrays: the weights' mantissa and
    the trace in the weights' unit; its result comes back in that unit.

    Example:
        >>> import jax.numpy as jnp
        >>> bounded_update(lambda w, t: w.at[0].add(t[0]), jnp.array([0.5, 2.0]), jnp.array([0.25]), 0.0, 1.0)
        Array([0.75, 1.  ], dtype=float32)
    """
    mantissa, unit = units.split(weight)
    new = update(mantissa, _in_unit(trace, unit))
    return _clip(units.attach(new, unit), w_min, w_max)


@brainevent_errors
def update_csr_on_binary_pre(weight, indices, indptr, pre_spike, post_trace, w_min=None, w_max=None, *, shape,
                             backend=None):
    """brainevent's ``update_csr_on_binary_pre``: ``W[i, j] += post_trace[j]`` where ``pre_spike[i] != 0``.

    :func:`eventjax.csr_on_pre` with brainevent's event rule, units and
    bounds (every weight is clipped, see the module).

    Example:
        >>> import jax.numpy as jnp
        >>> w, idx, ptr = jnp.array([.5, .3, 2.]), jnp.array([0, 1, 1]), jnp.array([0, 2, 3])
        >>> update_csr_on_binary_pre(w, idx, ptr, jnp.array([-1., 0.]), jnp.array([.1, .2]), 0., 1., shape=(2, 2))
        Array([0.6, 0.5, 1. ], dtype=float32)
    """
    return bounded_update(lambda w, t: ej.csr_on_pre(w, indices, indptr, active(pre_spike), t, shape=shape,
                                                     backend=backend), weight, post_trace, w_min, w_max)


@brainevent_errors
def update_csr_on_binary_post(weight, indices, indptr, weight_indices, pre_trace, post_spike, w_min=None,
                              w_max=None, *, shape, backend=None):
    """brainevent's ``update_csr_on_binary_post``: ``W[i, j] += pre_trace[i]`` where ``post_spike[j] != 0``.

    :func:`eventjax.csr2csc_on_post` (``indices``, ``indptr`` and
    ``weight_indices`` are the column view) with brainevent's event rule,
    units and bounds.
    """
    return bounded_update(lambda w, t: ej.csr2csc_on_post(w, indices, indptr, weight_indices, t, active(post_spike),
                                                          shape=shape, backend=backend),
                          weight, pre_trace, w_min, w_max)


@brainevent_errors
def update_dense_on_binary_pre(weight, pre_spike, post_trace, w_min=None, w_max=None, *, backend=None):
    """brainevent's ``update_dense_on_binary_pre``: ``W[i, :] += post_trace`` where ``pre_spike[i] != 0``.

    Example:
        >>> import jax.numpy as jnp
        >>> update_dense_on_binary_pre(jnp.full((2, 2), 2.), jnp.array([-1., 0.]), jnp.array([.1, .2]), w_max=1.)
        Array([[1., 1.],
               [1., 1.]], dtype=float32)
    """
    return bounded_update(lambda w, t: ej.dense_on_pre(w, active(pre_spike), t, backend=backend),
                          weight, post_trace, w_min, w_max)


@brainevent_errors
def update_dense_on_binary_post(weight, pre_trace, post_spike, w_min=None, w_max=None, *, backend=None):
    """brainevent's ``update_dense_on_binary_post``: ``W[:, j] += pre_trace`` where ``post_spike[j] != 0``."""
    return bounded_update(lambda w, t: ej.dense_on_post(w, t, active(post_spike), backend=backend),
                          weight, pre_trace, w_min, w_max)


@brainevent_errors
def update_fixed_post_conn_on_binary_pre(data, indices, pre_spike, post_trace, w_min=None, w_max=None, *, shape,
                                         backend=None):
    """brainevent's ``update_fixed_post_conn_on_binary_pre``: :func:`eventjax.fcn_on_pre`, brainevent's rules."""
    return bounded_update(lambda w, t: ej.fcn_on_pre(w, indices, active(pre_spike), t, shape=shape,
                                                     backend=backend), data, post_trace, w_min, w_max)


@brainevent_errors
def update_fixed_pre_conn_on_binary_post(data, indices, pre_trace, post_spike, w_min=None, w_max=None, *, shape,
                                         backend=None):
    """brainevent's ``update_fixed_pre_conn_on_binary_post``: row ``j`` of ``(n_post, k)`` gains ``pre_trace``.

    ``W[j, c] += pre_trace[indices[j, c]]`` where ``post_spike[j] != 0``;
    ``shape`` is ``(n_pre, n_post)``. :func:`eventjax.fcn_on_pre` with the
    roles swapped, and brainevent's rules.
    """
    n_pre, n_post = _pair('update_fixed_pre_conn_on_binary_post()', shape)
    return bounded_update(lambda w, t: ej.fcn_on_pre(w, indices, active(post_spike), t, shape=(n_post, n_pre),
                                                     backend=backend), data, pre_trace, w_min, w_max)


def _pair(who: str, shape) -> tuple[int, int]:
    if not isinstance(shape, (tuple, list)) or len(shape) != 2:
        raise MathError(f'{who}: shape must be (rows, columns), got {shape!r}.')
    return int(shape[0]), int(shape[1])


def _csc_delta(who, weight, indices, indptr, spike, trace, shape, spike_on_rows: bool):
    # A CSC stores columns: entry k sits in row indices[k] of the column whose range holds k.
    if jnp.shape(weight) != jnp.shape(indices):
        raise MathError(f'{who}: weight must hold one value per stored entry, shape {jnp.shape(indices)}; got '
                        f'{jnp.shape(weight)}.')
    n = shape[1]
    cols = jnp.repeat(jnp.arange(n), jnp.diff(jnp.asarray(indptr)), total_repeat_length=jnp.shape(indices)[0])
    rows = jnp.asarray(indices)
    fired, other = (rows, cols) if spike_on_rows else (cols, rows)
    weight = jnp.asarray(weight)
    return weight + jnp.where(active(spike)[fired], jnp.asarray(trace)[other], 0).astype(weight.dtype)


@brainevent_errors
def update_csc_on_binary_pre(weight, indices, indptr, pre_spike, post_trace, w_min=None, w_max=None, *, shape,
                             backend=None):
    """brainevent's ``update_csc_on_binary_pre``: ``w[i, j] += post_trace[j]`` where pre ``i`` fired, on CSC.

    One pass over every stored entry (not event-driven); brainevent's rules.

    Example:
        >>> import jax.numpy as jnp
        >>> update_csc_on_binary_pre(jnp.zeros(2), jnp.array([0, 1]), jnp.array([0, 1, 2]),
        ...                          jnp.array([True, False]), jnp.array([1., 2.]), shape=(2, 2))
        Array([1., 0.], dtype=float32)
    """
    who = 'update_csc_on_binary_pre()'
    shape = _pair(who, shape)
    return bounded_update(lambda w, t: _csc_delta(who, w, indices, indptr, pre_spike, t, shape, spike_on_rows=True),
                          weight, post_trace, w_min, w_max)


@brainevent_errors
def update_csc_on_binary_post(weight, indices, indptr, pre_trace, post_spike, w_min=None, w_max=None, *, shape,
                              backend=None):
    """brainevent's ``update_csc_on_binary_post``: ``w[i, j] += pre_trace[i]`` where post ``j`` fired, on CSC."""
    who = 'update_csc_on_binary_post()'
    shape = _pair(who, shape)
    return bounded_update(lambda w, t: _csc_delta(who, w, indices, indptr, post_spike, t, shape, spike_on_rows=False),
                          weight, pre_trace, w_min, w_max)
