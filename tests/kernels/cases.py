"""Shared test data for the kernel families: seeded random structures and events."""

from __future__ import annotations

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
    return tuple(jnp.asarray(a) for a in arrays)


def covering(**axes):
    """``pytest.param`` rows over the product of ``axes``; rows outside a pairwise covering are marked ``long``.

    The default run keeps the fewest rows that still pair every value of each
    axis with every value of every other axis (so every dtype meets every
    shape, transpose and weight kind at least once); ``make test-long`` runs
    the whole product. Use with the axes' names joined as the argnames::

        @pytest.mark.parametrize('shape,transpose', covering(shape=SHAPES, transpose=[False, True]))
    """
    import itertools

    import pytest

    names, values = list(axes), list(axes.values())
    rows = list(itertools.product(*(range(len(v)) for v in values)))
    pairs = lambda row: {(i, row[i], j, row[j]) for i, j in itertools.combinations(range(len(row)), 2)}
    todo = set().union(*(pairs(row) for row in rows)) if len(names) > 1 else set()
    kept = {rows[0]} if len(names) > 1 else set(rows)
    todo -= pairs(rows[0]) if len(names) > 1 else set()
    while todo:
        # greedy, first row wins a tie: deterministic, so both workers of a run collect the same tests
        best = max(rows, key=lambda row: len(pairs(row) & todo))
        kept.add(best)
        todo -= pairs(best)
    return [pytest.param(*(v[i] for v, i in zip(values, row)),
                         id='-'.join(_param_id(v[i]) for v, i in zip(values, row)),
                         marks=() if row in kept else pytest.mark.long)
            for row in rows]


def _param_id(value):
    if isinstance(value, type):
        return value.__name__
    return str(value).replace(' ', '')
