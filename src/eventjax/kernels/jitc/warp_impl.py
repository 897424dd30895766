"""Warp kernels (cpu and gpu) for the JITC operators, typed from the operands' dtypes.

One thread per row of ``A`` (and column of ``B``; mv is the one-column case
of the mm body): ``transpose=False`` gathers the row's generated
connections into ``out[i]`` (no atomics); ``transpose=True`` scatters row
``i`` with ``atomic_add`` and, for events, returns at once when row ``i``
holds no event, so the CPU cost is ``m`` cheap tests plus events x
``n * prob``. The hash lines repeat ``generator.py`` in ``wp.uint32``
arithmetic (which wraps like JAX's), so the matrix is the one every other
backend builds. On a GPU the compiler may fuse a weight's multiply and add
(``low + (high - low) * u``) into one FMA, which can change a weight's last
bit there; the structure never changes.
"""

# No `from __future__ import annotations`: warp evaluates kernel annotations
# against the factory's local variables, which string annotations cannot see.
# Each kernel is its own warp module ('unique'): otherwise every new dtype
# variant would recompile every kernel of this file.


import functools

from eventjax.backends.warp import import_warp
from eventjax.kernels.common.warp.columns import column_access, operand_array
from eventjax.kernels.common.warp.specs import product_spec
from eventjax.kernels.common.warp.typing import accumulator_type, event_test, warp_types
from eventjax.kernels.jitc import generator as gen

__all__ = ['binary_jitcmm_kernel', 'binary_jitcmv_kernel', 'jitc_kernel', 'jitcmm_kernel', 'jitcmv_kernel']


@functools.cache
def _hash():
    """``(draw, key_s, key_w, step, first)`` as ``wp.func``: the generator's integer lines."""
    wp = import_warp()
    # Typed constants: a bare literal above 2**31 would be emitted as an int32.
    m1, m2, golden = wp.uint32(gen.MIX1), wp.uint32(gen.MIX2), wp.uint32(gen.GOLDEN)
    seed_xor, row_mul, weight_xor = wp.uint32(gen.SEED_XOR), wp.uint32(gen.ROW_MUL), wp.uint32(gen.WEIGHT_XOR)
    last_word = wp.uint32(0xFFFFFFFF)

    @wp.func
    def fmix(h: wp.uint32) -> wp.uint32:
        h = h ^ (h >> wp.uint32(16))
        h = h * m1
        h = h ^ (h >> wp.uint32(13))
        h = h * m2
        return h ^ (h >> wp.uint32(16))

    @wp.func
    def draw(key: wp.uint32, t: wp.uint32) -> wp.uint32:
        return fmix(key + t * golden)

    @wp.func
    def key_s(seed: wp.uint32, row: int) -> wp.uint32:
        s = fmix(seed ^ seed_xor)
        return fmix(s + wp.uint32(row) * row_mul)

    @wp.func
    def key_w(ks: wp.uint32) -> wp.uint32:
        return fmix(ks ^ weight_xor)

    @wp.func
    def step(ks: wp.uint32, t: int, span: wp.uint32) -> int:
        return int(draw(ks, wp.uint32(t)) % span)

    @wp.func
    def first(ks: wp.uint32, span: wp.uint32) -> int:
        # The generator's first_column: the second draw over span + 1 values makes it stationary.
        return int(wp.min(draw(ks, wp.uint32(0)) % span, draw(ks, last_word) % (span + wp.uint32(1))))

    return draw, key_s, key_w, step, first


@functools.cache
def _weight(wt):
    wp = import_warp()
    at = accumulator_type(wt)
    draw = _hash()[0]

    @wp.func
    def weight(params: wp.array(dtype=wt), law: int, kw: wp.uint32, t: int) -> at:
        p0 = at(params[0])
        if law == 0:
            return p0
        p1 = at(params[1])
        if law == 1:
            u = at(float(draw(kw, wp.uint32(t)) >> wp.uint32(8))) * at(5.9604644775390625e-08)
            return p0 + (p1 - p0) * u
        total = int(0)  # noqa: UP018 - warp mutates only variables declared int(0) in a loop
        for j in range(6):
            h = draw(kw, wp.uint32(t) * wp.uint32(6) + wp.uint32(j))
            total += int(h >> wp.uint32(16)) + int(h & wp.uint32(0xFFFF))
        z = at(float(total - 6 * 65536)) * at(1.52587890625e-05)
        return p0 + p1 * z

    return weight


@functools.cache
def _kernel(wt, xt, transpose, binary, matrix):
    wp = import_warp()
    at = accumulator_type(wt)
    _, key_s, key_w, step, first = _hash()
    weight = _weight(wt)
    is_event = event_test(xt)
    load = column_access(xt, matrix)[0]
    store, add = column_access(wt, matrix)[1], column_access(at, matrix)[2]
    xa, wa, aa = operand_array(xt, matrix), operand_array(wt, matrix), operand_array(at, matrix)

    @wp.func
    def row_start(seed: wp.uint32, i: int, span: wp.uint32):
        # Row i's structure key, weight key and first column.
        ks = key_s(seed, i)
        return ks, key_w(ks), first(ks, span)

    @wp.kernel(module='unique', enable_backward=False)
    def gather(params: wp.array(dtype=wt), stream: wp.array(dtype=wp.uint32), x: xa, out: wa):
        i, col = wp.tid()
        span, law = stream[1], int(stream[2])
        acc = at(0.0)
        if span > wp.uint32(0):
            ks, kw, c = row_start(stream[0], i, span)
            t = int(0)  # noqa: UP018 - warp mutates only variables declared int(0) in a loop
            while c < x.shape[0]:
                if wp.static(binary):
                    if is_event(load(x, c, col)):
                        acc += weight(params, law, kw, t)
                else:
                    acc += weight(params, law, kw, t) * at(load(x, c, col))
                t += 1
                c += 1 + step(ks, t, span)
        store(out, i, col, wt(acc))

    @wp.kernel(module='unique', enable_backward=False)
    def scatter(params: wp.array(dtype=wt), stream: wp.array(dtype=wp.uint32), x: xa, out: aa):
        i, col = wp.tid()
        span, law = stream[1], int(stream[2])
        if span == wp.uint32(0):
            return
        xi = at(1.0)
        if wp.static(binary):
            if not is_event(load(x, i, col)):
                return
        else:
            xi = at(load(x, i, col))
        ks, kw, c = row_start(stream[0], i, span)
        t = int(0)  # noqa: UP018 - warp mutates only variables declared int(0) in a loop
        while c < out.shape[0]:
            if wp.static(binary):
                add(out, c, col, at(weight(params, law, kw, t)))
            else:
                add(out, c, col, at(weight(params, law, kw, t)) * xi)
            t += 1
            c += 1 + step(ks, t, span)

    return scatter if transpose else gather


def jitc_kernel(dtypes, *, law, transpose, binary, matrix, outs):
    """The warp spec for one JITC operator with inputs of ``dtypes`` (params, stream, x)."""
    wt, _, xt = warp_types(dtypes)
    return product_spec(_kernel(wt, xt, transpose, binary, matrix), transpose=transpose, x_position=2, outs=outs)

def jitcmv_kernel(dtypes, *, shape, transpose, law, outs):
    """The warp spec for ``jitcmv`` with inputs of ``dtypes``."""
    return jitc_kernel(dtypes, law=law, transpose=transpose, binary=False, matrix=False, outs=outs)


def binary_jitcmv_kernel(dtypes, *, shape, transpose, law, outs):
    """The warp spec for ``binary_jitcmv`` with inputs of ``dtypes``."""
    return jitc_kernel(dtypes, law=law, transpose=transpose, binary=True, matrix=False, outs=outs)


def jitcmm_kernel(dtypes, *, shape, transpose, law, outs):
    """The warp spec for ``jitcmm`` with inputs of ``dtypes``."""
    return jitc_kernel(dtypes, law=law, transpose=transpose, binary=False, matrix=True, outs=outs)


def binary_jitcmm_kernel(dtypes, *, shape, transpose, law, outs):
    """The warp spec for ``binary_jitcmm`` with inputs of ``dtypes``."""
    return jitc_kernel(dtypes, law=law, transpose=transpose, binary=True, matrix=True, outs=outs)
