"""A dense NumPy oracle for delayed delivery, and random problems to feed it."""

import numpy as np


def deliver(ring, events, data, indices, indptr, delays, t, *, weighted):
    """``ring[(t + d) % L, j] += w * value`` for every kept synapse of every active row, in float64."""
    out = np.asarray(ring, np.float64).copy()
    length, n = out.shape
    data, delays, events = np.asarray(data, np.float64), np.asarray(delays), np.asarray(events)
    for i in range(events.shape[0]):
        x = events[i]
        if weighted and x.dtype != np.bool_:
            if x == 0:
                continue
            value = float(x)
        else:
            if not x > 0:
                continue
            value = 1.0
        for k in range(indptr[i], indptr[i + 1]):
            d = int(delays[0] if delays.size == 1 else delays[k])
            j = int(indices[k])
            if 1 <= d < length and 0 <= j < n:
                out[(t + d) % length, j] += (data[0] if data.size == 1 else data[k]) * value
    return out


def problem(seed, m=7, n=5, length=4, *, homogeneous=False, shared_delay=False, dtype=np.float32):
    """A random CSR matrix with per-synapse (or shared) weights and delays in ``[1, length)``."""
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 5, m)
    indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
    nnz = int(indptr[-1])
    indices = rng.integers(0, n, nnz).astype(np.int32)
    data = np.array([0.7], dtype) if homogeneous else rng.standard_normal(nnz).astype(dtype)
    delays = np.array([2], np.int32) if shared_delay else rng.integers(1, length, nnz).astype(np.int32)
    ring = rng.standard_normal((length, n)).astype(dtype)
    return ring, data, indices, indptr, delays
