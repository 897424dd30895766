"""Numba CPU kernels for the JITC operators.

Each kernel is ``kernel(params, stream, x, out)`` with ``stream`` the uint32
``(seed, span, law code)``. The hash lines repeat ``generator.py`` exactly in
uint64 arithmetic masked to 32 bits (numba widens uint32 products), so the
matrix is the one the ``jax`` kernels build, bit for bit.

Cost: ``transpose=False`` gathers row by row: every row's connections are
generated, ``m * n * prob`` in all. ``transpose=True`` scatters from the
rows of ``x``; the binary kernels skip a row without an event before
generating anything, so the event-driven product costs events x
``n * prob``. Float kernels visit every row: a zero entry of ``x`` still
multiplies its weights (IEEE products, as for the other families).
"""

from __future__ import annotations

import numba
import numpy as np

from eventjax.backends.numba import empty_vector
from eventjax.kernels.common.numba.events import event_columns
from eventjax.kernels.jitc import generator as gen

__all__ = ['binary_jitcmm_kernel', 'binary_jitcmv_kernel', 'jitc_kernel', 'jitcmm_kernel', 'jitcmv_kernel']

_MASK = np.uint64(0xFFFFFFFF)
# The generator's constants, widened: numba computes in uint64 masked to 32 bits.
_GOLDEN = np.uint64(gen.GOLDEN)
_MIX1 = np.uint64(gen.MIX1)
_MIX2 = np.uint64(gen.MIX2)
_ROW_MUL = np.uint64(gen.ROW_MUL)
_SEED_XOR = np.uint64(gen.SEED_XOR)
_WEIGHT_XOR = np.uint64(gen.WEIGHT_XOR)
_S8, _S13, _S16 = np.uint64(8), np.uint64(13), np.uint64(16)
_LOW16 = np.uint64(0xFFFF)
_SIX = np.uint64(6)


@numba.njit(inline='always')
def _fmix(h):
    h ^= h >> _S16
    h = (h * _MIX1) & _MASK
    h ^= h >> _S13
    h = (h * _MIX2) & _MASK
    return h ^ (h >> _S16)


@numba.njit(inline='always')
def _draw(key, t):
    return _fmix((key + ((np.uint64(t) * _GOLDEN) & _MASK)) & _MASK)


@numba.njit(inline='always')
def _keys(seed, row):
    s = _fmix(np.uint64(seed) ^ _SEED_XOR)
    key_s = _fmix((s + ((np.uint64(row) * _ROW_MUL) & _MASK)) & _MASK)
    return key_s, _fmix(key_s ^ _WEIGHT_XOR)


@numba.njit(inline='always')
def _first(key_s, span):
    # The generator's first_column: the second draw over span + 1 values makes it stationary.
    return np.int64(min(_draw(key_s, 0) % span, _draw(key_s, 0xFFFFFFFF) % (span + np.uint64(1))))


@numba.njit(inline='always')
def _next(c, key_s, t, span):
    return c + 1 + np.int64(_draw(key_s, t) % span)


@numba.njit(inline='always')
def _weight(params, law, key_w, t):
    """The weight of connection ``t``, in the params' dtype (see ``generator.weight_at``)."""
    T = params.dtype.type
    if law == 0:
        return params[0]
    if law == 1:
        u = T(_draw(key_w, t) >> _S8) * T(2.0**-24)
        return params[0] + (params[1] - params[0]) * u
    total = np.int64(0)
    for j in range(6):
        h = _draw(key_w, (np.uint64(t) * _SIX + np.uint64(j)) & _MASK)
        total += np.int64(h >> _S16) + np.int64(h & _LOW16)
    z = T(total - 6 * 65536) * T(2.0**-16)
    return params[0] + params[1] * z


@numba.njit(inline='always')
def _open(stream, out):
    """Zero ``out``; return ``stream``'s (seed, span, law), the span widened for the hash."""
    out[:] = 0
    return stream[0], np.uint64(stream[1]), stream[2]


# The eight kernels (binary, direction, mv/mm) come from two loops, gather
# and scatter. ``binary`` and ``matrix`` are closure constants: numba prunes
# the branches they decide before typing, so each kernel compiles to the code
# written out for its case alone. The vector kernels keep a register
# accumulator and no events list: running them through the matrix ones (an
# (n, 1) view) measured 1.5-1.8x slower at n = 10**4.
def _gather_kernel(binary, matrix):
    """Row by row: generate row ``i``'s connections and accumulate ``x`` at them."""

    @numba.njit
    def kernel(params, stream, x, out):
        seed, span, law = _open(stream, out)
        if span == 0:
            return
        n = x.shape[0]
        for i in range(out.shape[0]):
            key_s, key_w = _keys(seed, i)
            acc = out.dtype.type(0)
            c, t = _first(key_s, span), 0
            while c < n:
                if matrix:
                    w = _weight(params, law, key_w, t)
                    for col in range(x.shape[1]):
                        if not binary:
                            out[i, col] += w * x[c, col]
                        elif x[c, col] > 0:
                            out[i, col] += w
                elif not binary:
                    acc += _weight(params, law, key_w, t) * x[c]
                elif x[c] > 0:
                    acc += _weight(params, law, key_w, t)
                t += 1
                c = _next(c, key_s, t, span)
            if not matrix:
                out[i] = acc

    return kernel


def _scatter_kernel(binary, matrix):
    """From the rows of ``x``; a binary kernel never generates a row without an event."""

    @numba.njit
    def kernel(params, stream, x, out):
        count = 0
        active = empty_vector(0, np.int64)
        if binary and matrix:
            active = empty_vector(x.shape[1], np.int64)
        seed, span, law = _open(stream, out)
        if span == 0:
            return
        n = out.shape[0]
        for i in range(x.shape[0]):
            if binary and matrix:
                # The row's event columns, listed once for all its connections.
                count = event_columns(x, i, active)
                if count == 0:
                    continue
            elif binary:
                if not x[i] > 0:
                    continue
            elif not matrix:
                xi = x[i]
            key_s, key_w = _keys(seed, i)
            c, t = _first(key_s, span), 0
            while c < n:
                w = _weight(params, law, key_w, t)
                if binary and matrix:
                    for a in range(count):
                        out[c, active[a]] += w
                elif matrix:
                    for col in range(x.shape[1]):
                        out[c, col] += w * x[i, col]
                elif binary:
                    out[c] += w
                else:
                    out[c] += w * xi
                t += 1
                c = _next(c, key_s, t, span)

    return kernel


# Keyed (binary, transpose, matrix).
_KERNELS = {
    (binary, transpose, matrix): (_scatter_kernel if transpose else _gather_kernel)(binary, matrix)
    for binary in (False, True) for transpose in (False, True) for matrix in (False, True)
}


def jitc_kernel(*, law, transpose, binary, matrix):
    """The kernel for one JITC operator (``law`` travels in the ``stream`` operand)."""
    return _KERNELS[(binary, transpose, matrix)]


def jitcmv_kernel(*, law, transpose):
    """The kernel for ``jitcmv``."""
    return jitc_kernel(law=law, transpose=transpose, binary=False, matrix=False)


def binary_jitcmv_kernel(*, law, transpose):
    """The kernel for ``binary_jitcmv``."""
    return jitc_kernel(law=law, transpose=transpose, binary=True, matrix=False)


def jitcmm_kernel(*, law, transpose):
    """The kernel for ``jitcmm``."""
    return jitc_kernel(law=law, transpose=transpose, binary=False, matrix=True)


def binary_jitcmm_kernel(*, law, transpose):
    """The kernel for ``binary_jitcmm``."""
    return jitc_kernel(law=law, transpose=transpose, binary=True, matrix=True)
