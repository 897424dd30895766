"""Argument checks of the delivery operators: shapes and dtypes, and concrete structure and delays by value."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from eventjax.kernels.common.checks import (
    WEIGHT_DTYPES,
    check_csr_operands,
    check_events,
    check_length,
    check_rank,
    check_shape,
    is_concrete,
    repair_indptr,
    validate_csr_structure,
)
from eventjax.kernels.common.narrowing import host_integers, narrow_in_range, narrow_step
from eventjax.kernels.common.units import conversion_factor, is_quantity, product_unit, split

__all__ = ['check_delay_call', 'check_step', 'check_steps', 'repair_layout', 'repair_structure', 'unwrap_events',
           'validate_delays']


def unwrap_events(who: str, events, weighted):
    """``(events array, weighted)``: an ``EventArray`` is unwrapped; ``weighted=None`` is True for ``GradedEvents``.

    The containers mark graded events with ``_eventjax_graded`` (the kernels
    layer does not import them).
    """
    graded = bool(getattr(events, '_eventjax_graded', False))
    marked = hasattr(events, 'value') and getattr(events, '_eventjax_container', False)
    if marked:
        # Binary events as the products read them: a subclass with another event rule maps them in _operand.
        events = events.value if graded else getattr(events, '_operand', events.value)
    if weighted is None:
        return events, graded
    if not isinstance(weighted, bool):
        raise TypeError(f'{who}: weighted must be True, False or None (weighted for GradedEvents), got {weighted!r}.')
    if marked and weighted != graded:
        kind = 'GradedEvents' if graded else 'an EventArray'
        raise ValueError(f'{who}: weighted={weighted} contradicts the events, {kind} (weighted '
                         f'{"always" if graded else "never"}); leave weighted=None, or pass the plain array.')
    return events, weighted


def check_steps(who: str, name: str, x) -> None:
    """Delays and the step count steps: a brainunit Quantity (a time) is a ``TypeError`` showing the conversion."""
    if is_quantity(x):
        raise TypeError(f'{who}: {name} must be integer steps, got a Quantity in {x.unit}; convert a time to '
                        f'steps with jnp.round({name} / dt).astype(int).')


def check_step(who: str, t, length: int):
    """The step ``t`` as an int32 array of shape ``(1,)``; one wider than int32 is taken modulo ``length`` first."""
    step = narrow_step(t, length)
    if step is None or step.size != 1:
        got = jnp.asarray(t) if step is None else step
        raise TypeError(f'{who}: t must be one integer (the current step), got {got.dtype} of shape {got.shape}.')
    return step.reshape(1)


def validate_delays(who: str, delays, length: int) -> None:
    """A concrete delay outside ``[1, L)`` is a ``ValueError`` naming the first one and the fix."""
    d = np.asarray(delays).reshape(-1)
    bad = np.flatnonzero((d < 1) | (d >= length))
    if bad.size and d[bad[0]] < 1:
        raise ValueError(f'{who}: delays[{bad[0]}] = {d[bad[0]]}, but a delay is at least 1 step (a delay of 0 '
                         'would land in the slot the model reads this step). Under jit (or validate=False) such '
                         'synapses are dropped.')
    if bad.size:
        raise ValueError(f'{who}: delays[{bad[0]}] = {d[bad[0]]} is outside [1, {length}) (the ring holds '
                         f'{length} steps); make the ring at least max(delays) + 1 = {int(d.max()) + 1} steps long. '
                         'Under jit (or validate=False) such synapses are dropped.')


def check_delay_call(who, ring, events, data, indices, indptr, delays, t, *, shape, weighted, validate=True):
    """Validate a CSR delivery's operands; returns them checked, with ``shape`` and ``weighted`` resolved.

    ``ring`` is ``(L, n)`` float; ``data`` is cast to the ring's dtype
    (outside the primitive, so gradients come back in ``data``'s dtype);
    ``delays`` is one integer per stored entry or one shared delay, in
    ``[1, L)``; ``t``
    becomes an int32 array of shape ``(1,)``. Units (brainunit Quantities)
    are split off first: what is delivered (``data``'s unit, times the
    events' unit when weighted) is converted into the ring's unit, which the
    last item returns (None: no unit) for the caller to put back.
    """
    m, n = check_shape(who, shape)
    check_steps(who, 'delays', delays)
    check_steps(who, 't', t)
    events, weighted = unwrap_events(who, events, weighted)
    ring, data, events, unit = _split_units(ring, data, events, weighted)
    ring = ring if isinstance(ring, jax.ShapeDtypeStruct) else jnp.asarray(ring)  # a layout checks a shape
    # The ring is updated in place in its own dtype, so it takes the weights' float types only (numba and
    # warp have no bfloat16 to add into).
    if ring.dtype.name not in WEIGHT_DTYPES:
        raise TypeError(f'{who}: ring must be a float array, float16, float32 or float64 (it accumulates '
                        f'weights), got {ring.dtype}; make it with jnp.zeros((L, n), jnp.float32).')
    if ring.ndim != 2:
        raise ValueError(f'{who}: ring must be a float array of shape (L, {n}) (L steps of {n} targets), got '
                         f'{ring.dtype} of shape {ring.shape}.')
    length = ring.shape[0]
    if ring.shape[1] != n:
        raise ValueError(f'{who}: ring must have {n} columns (the columns of shape), got shape {ring.shape}.')
    if length * n >= 2 ** 31:
        raise ValueError(f'{who}: a ring of {length} x {n} entries is past 2**31; shorten the ring or split the '
                         'targets.')
    data, indices, indptr = check_csr_operands(who, data, indices, indptr, (m, n))
    nnz = indices.shape[0]
    # A NumPy value stays NumPy until narrowed: jnp.asarray would wrap an int64 while jax_enable_x64 is off.
    delays = jnp.asarray(delays) if host_integers(delays) is None else host_integers(delays)
    if not jnp.issubdtype(delays.dtype, jnp.integer):
        raise TypeError(f'{who}: delays must be integers (steps), got {delays.dtype}; round a delay in time '
                        'with jnp.round(delay / dt).astype(int).')
    delays = delays.reshape(1) if delays.ndim == 0 else delays
    if delays.ndim != 1 or delays.shape[0] not in (1, nnz):
        raise ValueError(f'{who}: delays must have length {nnz} (one per entry of indices) or be one shared delay, '
                         f'got shape {delays.shape}.')
    t = check_step(who, t, length)
    events = check_events(who, 'events', events)
    check_rank(who, 'events', events, (1,))
    check_length(who, 'events', events, m, 'rows of shape')
    if validate and is_concrete(indices, indptr):
        validate_csr_structure(who, indices, indptr, n)
    # Checked when JAX would hold them concrete: NumPy delays closed over by jit become a tracer there.
    if validate and is_concrete(jnp.asarray(delays) if isinstance(delays, np.ndarray) else delays):
        validate_delays(who, delays, length)
    # Out of [1, L) before narrowing (dropped as 0), so a wide delay never wraps into the ring.
    delays = narrow_in_range(delays, 1, length, 0)
    return ring, events, data.astype(ring.dtype), indices, indptr, delays, t, (m, n), weighted, unit


def _split_units(ring, data, events, weighted):
    """``(ring, data, events, unit)`` without units, ``data`` scaled so what it delivers is in the ring's ``unit``."""
    (ring, unit), (data, unit_w), (events, unit_x) = split(ring), split(data), split(events)
    delivered = product_unit(unit_w, unit_x if weighted else None)  # binary events count 1 whatever their unit
    if unit is not None or delivered is not None:
        factor = conversion_factor(delivered, unit)
        if factor != 1.0:
            data = jnp.asarray(data) * factor
    return ring, data, events, unit


def repair_structure(ring, events, data, indices, indptr, delays, t):
    """The ``prepare`` step: ``indptr`` repaired so every backend drops the same entries (numba repairs inside)."""
    return ring, events, data, indices, repair_indptr(indptr, indices.shape[0]), delays, t


def repair_layout(ring, events, data, offsets, indptr, t):
    """:func:`repair_structure` for the layout form (packed offsets in place of columns and delays)."""
    return ring, events, data, offsets, repair_indptr(indptr, offsets.shape[0]), t
