"""An independent NumPy re-implementation of the JITC generator: the dense oracle for the tests."""

from __future__ import annotations

import numpy as np

from eventjax.kernels.jitc import generator as gen


def _fmix(h):
    h = h ^ (h >> np.uint32(16))
    h = h * np.uint32(gen.MIX1)
    h = h ^ (h >> np.uint32(13))
    h = h * np.uint32(gen.MIX2)
    return h ^ (h >> np.uint32(16))


def _draw(key, t):
    return _fmix(key + np.uint32(t % 2**32) * np.uint32(gen.GOLDEN))


def jitc_dense(params, *, seed, prob, shape, law, dtype=np.float32):
    """The dense ``(m, n)`` JITC matrix, built row by row with uint32 NumPy arrays."""
    m, n = shape
    out = np.zeros((m, n), dtype)
    span = gen.span_of(prob)
    if span == 0 or m == 0 or n == 0:
        return out
    acc = np.float32 if np.dtype(dtype) == np.float16 else np.dtype(dtype).type
    p = np.asarray(params, dtype).astype(acc).reshape(-1)
    with np.errstate(over='ignore'):
        s = _fmix(np.array([seed % 2**32], np.uint32) ^ np.uint32(gen.SEED_XOR))
        for i in range(m):
            ks = _fmix(s + np.uint32(i) * np.uint32(gen.ROW_MUL))
            kw = _fmix(ks ^ np.uint32(gen.WEIGHT_XOR))
            c = int(min(_draw(ks, 0)[0] % span, _draw(ks, 2**32 - 1)[0] % (span + 1)))
            t = 0
            while c < n:
                if law == 'homo':
                    w = p[0]
                elif law == 'uniform':
                    u = acc(_draw(kw, t)[0] >> np.uint32(8)) * acc(2.0**-24)
                    w = p[0] + (p[1] - p[0]) * u
                else:
                    total = 0
                    for j in range(6):
                        h = int(_draw(kw, t * 6 + j)[0])
                        total += (h >> 16) + (h & 0xFFFF)
                    w = p[0] + p[1] * (acc(total - 6 * 65536) * acc(2.0**-16))
                out[i, c] = w
                t += 1
                c += 1 + int(_draw(ks, t)[0] % span)
    return out


LAWS = {'homo': 1.5, 'uniform': (-0.5, 2.0), 'normal': (0.25, 1.0)}
