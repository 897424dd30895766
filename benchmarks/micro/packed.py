"""Bit-packed products: the ``jax`` kernel against the bool product, and whether packed matrix products pay.

Two measurements, each timed in alternating blocks (ratios hold under load)::

    python -m benchmarks.micro.packed            # both, n 4000 (2%) and 100000 (0.1%), 100 entries per row
    python -m benchmarks.micro.packed --quick    # n 4000 only

``vector``: ``binary_csrmv`` (bool) against ``binary_csrmv_packed`` on the
``jax`` backend, both directions, and the kernel the packed product had
before (one bit test per stored entry, rows summed by segment: a
``jnp.repeat`` of row ids and a scatter), kept here as the baseline.

``matrix``: a batch of 16 spike vectors, events on the stored rows. Two
numba loops with the same structure, one reading an ``(m, 16)`` bool matrix,
one reading ``(ceil(m / 32), 16)`` uint32 words (a word without events
skipped in one test), against each other and eventjax's numba
``binary_csrmm`` on the bool matrix, and the ``jax`` backend's
``binary_csrmm`` against unpacking the words first: whether a packed matrix
product would be faster than the bool one anywhere.
"""

from __future__ import annotations

import argparse

import jax
import jax.numpy as jnp
import numba
import numpy as np

import eventjax as ej
from benchmarks.events_arrays import events_problem
from benchmarks.timing import interleaved_us
from eventjax.kernels.indexed import packed_reference

BATCH = 16


def segment_kernel(data, indices, indptr, words, *, shape):
    """The packed product's former ``jax`` kernel without ``transpose``: one bit per entry, a segment sum."""
    m, n = shape
    nnz = indices.shape[0]
    ev = packed_reference.bits(words, n)
    hit = (indices >= 0) & (indices < n) & ev[jnp.clip(indices, 0, n - 1)]
    rows = jnp.repeat(jnp.arange(m, dtype=indices.dtype), jnp.diff(indptr), total_repeat_length=nnz)
    return jax.ops.segment_sum(jnp.where(hit, data, 0.0), rows, num_segments=m)


def vector(n, rate):
    data, indices, indptr, spikes = (jnp.asarray(a) for a in events_problem(n, np.random.default_rng(0), rate, k=100))
    words = ej.bitpack(spikes)
    for transpose in (True, False):
        kw = dict(shape=(n, n), transpose=transpose, backend='jax', validate=False)
        fns = [jax.jit(lambda d, i, p, s, kw=kw: ej.binary_csrmv(d, i, p, s, **kw)),
               jax.jit(lambda d, i, p, w, kw=kw: ej.binary_csrmv_packed(d, i, p, w, **kw))]
        args = [(data, indices, indptr, spikes), (data, indices, indptr, words)]
        if not transpose:
            fns.append(jax.jit(lambda d, i, p, w: segment_kernel(d, i, p, w, shape=(n, n))))
            args.append(args[1])
        outs = [np.asarray(f(*a)) for f, a in zip(fns, args)]
        for o in outs[1:]:
            np.testing.assert_allclose(o, outs[0], rtol=1e-4, atol=1e-3)
        us = interleaved_us([lambda f=f, a=a: f(*a).block_until_ready() for f, a in zip(fns, args)],
                            budget_s=1.0, max_calls=300)
        line = (f'vector n={n} rate={rate:.1%} transpose={transpose}: bool {us[0]:.1f} us, '
                f'packed {us[1]:.1f} us ({us[1] / us[0]:.2f}x bool)')
        if not transpose:
            line += f', former segment kernel {us[2]:.1f} us ({us[2] / us[0]:.2f}x bool)'
        print(line, flush=True)


@numba.njit(cache=False)
def _bool_rows(data, indices, indptr, events, out):
    m, k = events.shape
    for i in range(m):
        for j in range(k):
            if events[i, j]:
                for e in range(indptr[i], indptr[i + 1]):
                    out[indices[e], j] += data[e]


@numba.njit(cache=False)
def _packed_rows(data, indices, indptr, words, m, out):
    nw, k = words.shape
    for w in range(nw):
        for j in range(k):
            word = np.int64(words[w, j])  # int64: uint32 minus an int is float64 in numba
            while word:
                b = 0
                while not (word >> b) & 1:
                    b += 1
                word &= word - 1
                i = 32 * w + b
                if i < m:
                    for e in range(indptr[i], indptr[i + 1]):
                        out[indices[e], j] += data[e]


def matrix(n, rate):
    rng = np.random.default_rng(1)
    data, indices, indptr, _ = events_problem(n, rng, rate, k=100)
    events = rng.random((n, BATCH)) < rate
    words = np.asarray(ej.bitpack(jnp.asarray(events), axis=0))
    out = np.zeros((n, BATCH), np.float32)

    def bool_loop():
        out[:] = 0
        _bool_rows(data, indices, indptr, events, out)

    def packed_loop():
        out[:] = 0
        _packed_rows(data, indices, indptr, words, n, out)

    bool_loop()
    want = out.copy()
    packed_loop()
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-3)
    jd, ji, jp, je, jw = (jnp.asarray(a) for a in (data, indices, indptr, events, words))
    kw = dict(shape=(n, n), transpose=True, backend='jax', validate=False)
    f_bool = jax.jit(lambda d, i, p, s: ej.binary_csrmm(d, i, p, s, **kw))
    f_unpack = jax.jit(lambda d, i, p, w: ej.binary_csrmm(d, i, p, ej.bitunpack(w, n, axis=0), **kw))
    f_numba = jax.jit(lambda d, i, p, s: ej.binary_csrmm(d, i, p, s, **{**kw, 'backend': 'numba'}))
    np.testing.assert_allclose(f_unpack(jd, ji, jp, jw), f_bool(jd, ji, jp, je), rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(f_numba(jd, ji, jp, je), want, rtol=1e-4, atol=1e-3)
    us = interleaved_us([bool_loop, packed_loop, lambda: f_numba(jd, ji, jp, je).block_until_ready(),
                         lambda: f_bool(jd, ji, jp, je).block_until_ready(),
                         lambda: f_unpack(jd, ji, jp, jw).block_until_ready()], budget_s=1.0, max_calls=300)
    print(f'matrix n={n} rate={rate:.1%} batch={BATCH}: numba loop bool {us[0]:.1f} us, packed {us[1]:.1f} us '
          f'({us[1] / us[0]:.2f}x; {us[1] / us[2]:.2f}x of numba binary_csrmm {us[2]:.1f} us); '
          f'jax binary_csrmm bool {us[3]:.1f} us, unpack + bool {us[4]:.1f} us ({us[4] / us[3]:.2f}x)', flush=True)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--quick', action='store_true', help='n 4000 only')
    parser.add_argument('--matrix-only', action='store_true', help='only the matrix measurement')
    args = parser.parse_args(argv)
    cases = [(4000, 0.02)] + ([] if args.quick else [(100_000, 0.001)])
    for n, rate in [] if args.matrix_only else cases:
        vector(n, rate)
    for n, rate in cases + ([] if args.quick else [(100_000, 0.02), (4000, 0.001)]):
        matrix(n, rate)


if __name__ == '__main__':
    main()
