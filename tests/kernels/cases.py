"""Shared test data for the kernel families: seeded random structures and events."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

TOL = {np.dtype(np.float16): dict(rtol=2e-2, atol=2e-2), np.dtype(np.float32): dict(rtol=1e-5, atol=1e-5)}
EVENT_KINDS = ('bool', 'float', 'none', 'all')


def tol(dtype):
    return TOL[np.dtype(dtype)]


def random_csr(rng, m, n, *, density=0.3, dtype=np.float32, index_dtype=np.int32, homogeneous=False):
    """A CSR matrix with empty rows and duplicate column indices (columns drawn with replacement)."""
    counts = rng.binomial(n, density, size=m) if n else np.zeros(m, np.int64)
    if m > 1:
        counts[rng.integers(0, m)] = 0  # at least one empty row
    indices = rng.integers(0, max(n, 1), size=int(counts.sum())).astype(index_dtype)
    if indices.size > 1 and counts.max() > 1:
        row = int(np.argmax(counts))  # force a duplicate in the fullest row
        start = int(counts[:row].sum())
        indices[start + 1] = indices[start]
    indptr = np.concatenate([[0], np.cumsum(counts)]).astype(index_dtype)
    data = (rng.normal(size=1 if homogeneous else indices.size) + 0.5).astype(dtype)
    return data, indices, indptr


def csr_dense(data, indices, indptr, shape):
    """Dense NumPy form (float64); duplicates add up; homogeneous data broadcasts."""
    m, n = shape
    dense = np.zeros((m, n))
    rows = np.repeat(np.arange(m), np.diff(indptr))
    vals = np.broadcast_to(np.asarray(data, np.float64), indices.shape)
    np.add.at(dense, (rows, indices), vals)
    return dense


def random_events(rng, shape, kind):
    """Events of a kind: bool, float (values in {-1, 0, 0.5, 2}), none, all."""
    if kind == 'bool':
        return rng.random(shape) < 0.4
    if kind == 'float':
        return rng.choice(np.array([-1.0, 0.0, 0.5, 2.0], np.float32), size=shape)
    if kind == 'none':
        return np.zeros(shape, bool)
    return np.ones(shape, bool)


def indicator(events):
    events = np.asarray(events)
    return (events if events.dtype == bool else events > 0).astype(np.float64)


def product(dense, x, transpose):
    return (dense.T if transpose else dense) @ np.asarray(x, np.float64)


def as_jnp(*arrays):
    # device_put moves a NumPy array as jnp.asarray does (same dtype, weak type and placement), without the
    # small program jnp.asarray compiles for each new shape and dtype
    return tuple(jax.device_put(a) if isinstance(a, np.ndarray) else jnp.asarray(a) for a in arrays)
