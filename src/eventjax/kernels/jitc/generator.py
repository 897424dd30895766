"""The counter-based generator that defines a JITC matrix, in pure JAX.

A JITC matrix ``A`` (``shape=(m, n)``) is a pure function of ``(seed, span,
law, params)``. Row ``i`` owns two streams of 32-bit words, both keyed by
``(seed, i)``:

- the structure stream ``s_t = fmix32(key_s + t * GOLDEN)``: row ``i``'s
  first column is ``min(s_0 % span, s_{-1} % (span + 1))`` (``s_{-1}`` is
  word ``2**32 - 1``). That minimum is exactly the stationary offset of the
  skip process, ``P(first = k) = 2 (span - k) / (span (span + 1))``, so
  every column, the first ones included, is connected with probability
  ``2 / (span + 1)``; connection ``t >= 1`` sits
  ``1 + s_t % span`` columns after connection ``t - 1``; the row ends at the
  first column ``>= n``. Skips are uniform on ``{1, ..., span}`` (mean
  ``(span + 1) / 2``), so each entry is connected with probability about
  ``2 / (span + 1)``; ``span = 0`` is the empty matrix.
- the weight stream ``w_t = fmix32(key_w + t * GOLDEN)``: connection ``t``
  takes words ``t * D ... t * D + D - 1`` (``D`` per law, below).

Everything is uint32 multiply / add / xor / shift / modulo, which JAX, numba
and warp evaluate identically; the weights then take one multiply and one
add in floating point. The numba and warp kernels re-implement exactly these
lines (``numba_impl.py``, ``warp_impl.py``); the tests compare all three bit
for bit. The structure does not depend on the law: one seed gives the same
connections with homogeneous, uniform or normal weights.

Laws: ``homo`` (params ``(w,)``, ``D = 0``), ``uniform`` (``(low, high)``,
``D = 1``: ``low + (high - low) * u`` with ``u = (w >> 8) / 2**24``) and
``normal`` (``(loc, scale)``, ``D = 6``: ``loc + scale * z`` where ``z`` is
the sum of twelve 16-bit uniforms minus 6, the Irwin-Hall approximation of a
standard normal: mean 0, variance exactly 1, support ``[-6, 6)``, no
transcendental function that backends would round differently).
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

__all__ = ['GOLDEN', 'LAWS', 'LAW_CODES', 'draw', 'first_column', 'keys', 'span_of', 'weight_at']

GOLDEN = 0x9E3779B9
MIX1 = 0x85EBCA6B
MIX2 = 0xC2B2AE35
ROW_MUL = 0x27D4EB2F
SEED_XOR = 0x5BD1E995
WEIGHT_XOR = 0xA511E9B3
LAWS = {'homo': 1, 'uniform': 2, 'normal': 2}  # number of params
LAW_CODES = {'homo': 0, 'uniform': 1, 'normal': 2}
DRAWS = {'homo': 0, 'uniform': 1, 'normal': 6}  # weight words per connection
MAX_SPAN = 2**31 - 1


def span_of(prob: float) -> int:
    """The skip range ``span`` that realises connection probability ``prob``.

    ``span = round(2 / prob - 1)`` (at least 1), so the realised probability
    ``2 / (span + 1)`` equals ``prob`` whenever ``2 / prob`` is an integer;
    ``prob == 0`` gives ``span = 0``, the empty matrix.

    Example:
        >>> span_of(0.001), span_of(1.0), span_of(0.0)
        (1999, 1, 0)
    """
    if prob == 0:
        return 0
    gap = 2.0 / prob - 1.0  # infinite for a subnormal prob: no int() of it
    if gap >= MAX_SPAN:
        return MAX_SPAN
    return max(1, math.floor(gap + 0.5))


def _u32(x):
    return jnp.asarray(x, jnp.uint32)


def fmix32(h):
    """MurmurHash3's 32-bit finaliser (a bijection of uint32)."""
    h = h ^ (h >> 16)
    h = h * _u32(MIX1)
    h = h ^ (h >> 13)
    h = h * _u32(MIX2)
    return h ^ (h >> 16)


def keys(seed, rows):
    """``(key_s, key_w)``: the structure and weight stream keys of ``rows`` (uint32)."""
    s = fmix32(_u32(seed) ^ _u32(SEED_XOR))
    key_s = fmix32(s + _u32(rows) * _u32(ROW_MUL))
    return key_s, fmix32(key_s ^ _u32(WEIGHT_XOR))


def draw(key, t):
    """Word ``t`` of the stream ``key`` (uint32)."""
    return fmix32(key + _u32(t) * _u32(GOLDEN))


def first_column(key_s, span):
    """The first column of each row (int32); ``span`` must be >= 1.

    ``P(min(a, b) >= k) = (span - k) / span * (span + 1 - k) / (span + 1)``
    for ``a`` uniform on ``[0, span)`` and ``b`` on ``[0, span]``: the
    stationary law of a renewal process with skips uniform on ``{1..span}``.
    """
    a = draw(key_s, 0) % span
    b = draw(key_s, 0xFFFFFFFF) % (span + _u32(1))
    return jnp.minimum(a, b).astype(jnp.int32)


def unfused(y, zero):
    """``y`` unchanged, but opaque to the compiler, so ``a + y`` is never contracted into an FMA.

    XLA's CPU backend fuses ``a + b * c`` into one fused multiply-add, which
    rounds once where numba and warp (cpu) round twice. ``zero`` is a uint32
    that is 0 at run time but unknown when compiling (the kernels pass
    ``t >> 31`` of the loop counter); a bit-level round trip through it
    forces ``y`` to be rounded on its own.
    """
    bits = jnp.uint64 if y.dtype == np.float64 else jnp.uint32
    raw = jax.lax.bitcast_convert_type(y, bits) ^ zero.astype(bits)
    return jax.lax.bitcast_convert_type(raw, y.dtype)


def weight_at(law: str, params, key_w, t, dtype, zero):
    """The weight of connection ``t`` (per row) in ``dtype``; ``params`` already in ``dtype``.

    ``zero``: a run-time uint32 zero (see :func:`unfused`).
    """
    if law == 'homo':
        return jnp.broadcast_to(params[0], jnp.shape(key_w))
    if law == 'uniform':
        u = (draw(key_w, t) >> 8).astype(dtype) * np.asarray(2.0**-24, dtype)
        return params[0] + unfused((params[1] - params[0]) * u, zero)
    total = jnp.zeros(jnp.shape(key_w), jnp.int32)
    for j in range(6):
        h = draw(key_w, _u32(t) * _u32(6) + _u32(j))
        total = total + (h >> 16).astype(jnp.int32) + (h & _u32(0xFFFF)).astype(jnp.int32)
    z = (total - 6 * 65536).astype(dtype) * np.asarray(2.0**-16, dtype)
    return params[0] + unfused(params[1] * z, zero)
