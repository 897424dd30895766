"""Pure-JAX JITC kernels: the oracle for every other backend, and the ``jax`` backend.

Operands of every kernel: ``params`` (the law's parameters), ``stream``
(uint32 ``(seed, span, law code)``) and ``x``. Rows advance in lockstep: iteration
``t`` of a ``while_loop`` visits connection ``t`` of every row, so memory is
O(m + n) and time is O(nnz), whatever the direction. This backend does not
skip rows without events; the numba and warp kernels do.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from eventjax.kernels.common import accumulation_dtype
from eventjax.kernels.jitc import generator as gen

__all__ = ['binary_jitcmm_kernel', 'binary_jitcmv_kernel', 'jitcmm_kernel', 'jitcmv_kernel', 'param_cotangent',
           'product']


def product(params, stream, x, *, shape, transpose, law, binary, out_dtype):
    """``A @ x`` (``x @ A`` when ``transpose``) for a vector or matrix ``x``."""
    m, n = shape
    acc = accumulation_dtype(out_dtype)
    out_shape = (n if transpose else m,) + x.shape[1:]
    if m == 0 or n == 0:
        return jnp.zeros(out_shape, out_dtype)
    p = params.astype(acc)
    seed, span = stream[0], stream[1]
    rows = jnp.arange(m, dtype=jnp.uint32)
    key_s, key_w = gen.keys(seed, rows)
    safe_span = jnp.maximum(span, jnp.uint32(1))
    first = gen.first_column(key_s, safe_span)
    # span == 0: no row has a connection.
    first = jnp.where(span == 0, jnp.int32(n), first)
    if binary:
        mask = x if x.dtype == jnp.bool_ else x > 0
        xs = None
    else:
        mask, xs = None, x.astype(acc)
    bcast = (slice(None),) + (None,) * (x.ndim - 1)

    def contribution(c, t, live):
        # t counts a row's connections (< n < 2**31): t >> 31 is a zero the compiler cannot see.
        w = gen.weight_at(law, p, key_w, t, acc, t >> 31)[bcast]
        safe = jnp.where(live, c, 0)
        if transpose:
            src_mask = mask if binary else None
            src = None if binary else xs
        else:
            src_mask = mask[safe] if binary else None
            src = None if binary else xs[safe]
        live = live[bcast]
        if binary:
            # A connection without an event adds nothing, whatever its weight.
            return jnp.where(live & src_mask, w, jnp.zeros((), acc))
        return jnp.where(live, w * src, jnp.zeros((), acc))

    def body(state):
        c, t, y = state
        live = c < n
        term = contribution(c, t, live)
        if transpose:
            y = y.at[jnp.where(live, c, n)].add(term, mode='drop')
        else:
            y = y + term
        step = (gen.draw(key_s, t + 1) % safe_span).astype(jnp.int32) + 1
        # Columns stay below n + span < 2**31: the public functions check it.
        return jnp.where(live, c + step, c), t + 1, y

    y0 = jnp.zeros((n,) + x.shape[1:] if transpose else (m,) + x.shape[1:], acc)
    _, _, y = jax.lax.while_loop(lambda s: jnp.any(s[0] < n), body, (first, jnp.uint32(0), y0))
    return y.astype(out_dtype)


def jitcmv_kernel(*, shape, transpose, law, outs):
    """``A @ v`` (or ``v @ A``) with float ``v``; also serves ``jitcmm`` (2-D ``x``)."""
    def kernel(params, stream, v):
        return (product(params, stream, v, shape=shape, transpose=transpose, law=law, binary=False,
                        out_dtype=outs[0].dtype),)
    return kernel


def binary_jitcmv_kernel(*, shape, transpose, law, outs):
    """``A @ s`` (or ``s @ A``) with events ``s``; also serves ``binary_jitcmm``."""
    def kernel(params, stream, spikes):
        return (product(params, stream, spikes, shape=shape, transpose=transpose, law=law, binary=True,
                        out_dtype=outs[0].dtype),)
    return kernel


def param_cotangent(float_call):
    """The weight-cotangent rule for a JITC operator whose float product is ``float_call``.

    A JITC product is linear in its law's parameters: ``A = sum_k params[k] A_k``
    (homo: ``A_0`` the 0/1 pattern; uniform: ``(1 - u)`` and ``u`` on the
    pattern; normal: the pattern and ``z``). The cotangent of ``params[k]`` is
    ``<ct, A_k @ x>``, one product with the unit vector ``e_k`` as params.
    """
    def cotangent(ct, x, stream, *, shape, transpose, law):
        eye = jnp.eye(gen.LAWS[law], dtype=ct.dtype)
        return jnp.stack([
            jnp.sum(ct * float_call(eye[k], stream, x, shape=shape, transpose=transpose, law=law))
            for k in range(gen.LAWS[law])])
    return cotangent


jitcmm_kernel = jitcmv_kernel
binary_jitcmm_kernel = binary_jitcmv_kernel
