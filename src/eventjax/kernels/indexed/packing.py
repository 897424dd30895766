"""Bit-packed events: 32 neurons per uint32 word, ``bitpack`` and ``bitunpack``.

Bit ``b`` of word ``w`` is neuron ``32 w + b`` (brainevent's layout). An
entry is packed as 1 when it is an event by eventjax's rule (``True`` or
``> 0``; NaN and negative numbers are not), where brainevent packs every
nonzero value.
"""

from __future__ import annotations

import jax.numpy as jnp

from eventjax.kernels.common.checks import check_events
from eventjax.kernels.common.compaction import event_mask

__all__ = ['bitpack', 'bitunpack']

_BITS = 32


def _axis(who, axis, ndim):
    if isinstance(axis, bool) or not isinstance(axis, int) or not -ndim <= axis < ndim:
        raise ValueError(f'{who}: axis must be an int in [{-ndim}, {ndim}), got {axis!r}.')
    return axis % ndim


def bitpack(spikes, axis: int = 0):
    """Pack the events of ``spikes`` into uint32 words along ``axis`` (length ``ceil(n / 32)``).

    Example:
        >>> import jax.numpy as jnp
        >>> import eventjax as ej
        >>> ej.bitpack(jnp.array([True, False, True] + [False] * 30))
        Array([5, 0], dtype=uint32)
    """
    who = 'bitpack()'
    spikes = check_events(who, 'spikes', spikes)
    if spikes.ndim == 0:
        raise ValueError(f'{who}: spikes must have at least one axis, got a scalar.')
    axis = _axis(who, axis, spikes.ndim)
    bits = jnp.moveaxis(event_mask(spikes), axis, -1)
    n = bits.shape[-1]
    words = -(-n // _BITS)
    bits = jnp.pad(bits, [(0, 0)] * (bits.ndim - 1) + [(0, words * _BITS - n)]).astype(jnp.uint32)
    shifts = jnp.arange(_BITS, dtype=jnp.uint32)
    # Distinct bit positions: the sum is the bitwise or.
    packed = jnp.sum(bits.reshape(*bits.shape[:-1], words, _BITS) << shifts, axis=-1, dtype=jnp.uint32)
    return jnp.moveaxis(packed, -1, axis)


def bitunpack(words, n: int, axis: int = 0):
    """The bool events of ``n`` neurons packed in uint32 ``words`` along ``axis`` (inverse of :func:`bitpack`).

    Example:
        >>> import jax.numpy as jnp
        >>> import eventjax as ej
        >>> ej.bitunpack(jnp.array([5], jnp.uint32), 3)
        Array([ True, False,  True], dtype=bool)
    """
    who = 'bitunpack()'
    words = jnp.asarray(words)
    if words.dtype != jnp.uint32:
        raise TypeError(f'{who}: words must be uint32 (from bitpack), got {words.dtype.name}.')
    if words.ndim == 0:
        raise ValueError(f'{who}: words must have at least one axis, got a scalar.')
    axis = _axis(who, axis, words.ndim)
    if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= words.shape[axis] * _BITS:
        raise ValueError(f'{who}: n must be an int in [0, {words.shape[axis] * _BITS}] (32 per word), got {n!r}.')
    w = jnp.moveaxis(words, axis, -1)
    bits = (w[..., :, None] >> jnp.arange(_BITS, dtype=jnp.uint32)) & jnp.uint32(1)
    bits = bits.reshape(*w.shape[:-1], w.shape[-1] * _BITS)[..., :n].astype(bool)
    return jnp.moveaxis(bits, -1, axis)
