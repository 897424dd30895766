"""Random connectivity for examples and benchmarks, reproducible from a JAX key.

:func:`random_fixed_num_conn` draws ``k`` distinct targets per row (a
:class:`~eventjax.FixedNumConn`); :func:`random_csr` draws each connection
independently with probability ``prob`` (a :class:`~eventjax.CSR`). The same
key gives the same matrix on every backend and platform.
"""

from __future__ import annotations

import operator

import jax
import jax.numpy as jnp
import numpy as np

from eventjax.containers.csr import CSR
from eventjax.containers.fixed_num_conn import FixedNumConn

__all__ = ['random_csr', 'random_fixed_num_conn']


def _weights(who, key, weight, shape, dtype):
    """One shared weight (a number), or per-connection weights (an array or ``weight(key, shape)``)."""
    if callable(weight):
        w = jnp.asarray(weight(key, shape), dtype)
        if w.shape != shape:
            raise ValueError(f'{who}: weight(key, shape) must return shape {shape}, got {w.shape}.')
        return w
    w = jnp.asarray(weight, dtype)
    if w.size == 1:
        return w.reshape(1)
    if w.shape != shape:
        raise ValueError(f'{who}: weight must be a number, an array of shape {shape} or a callable '
                         f'weight(key, shape), got an array of shape {w.shape}.')
    return w


def _distinct_targets(key, m, n, k, allow_self):
    """``k`` distinct columns per row, each k-subset equally likely, sorted.

    Floyd's algorithm, run for every row at once: step ``i`` draws ``t`` in
    ``[0, pool - k + i]`` and keeps it unless the row already has it, in which
    case it keeps ``pool - k + i`` (new by construction). Memory and time are
    O(m * k) and O(m * k**2), not O(m * n): large networks stay cheap. Without
    self-connections a row draws from the ``n - 1`` other columns and values
    at or past its own index shift up by one.
    """
    rows = jnp.arange(m)
    excluded = (rows < n) if not allow_self else jnp.zeros(m, bool)
    pool = n - excluded.astype(jnp.int32)

    def step(i, chosen):
        top = pool - k + i
        t = jax.random.randint(jax.random.fold_in(key, i), (m,), 0, top + 1)
        taken = (chosen == t[:, None]).any(axis=1)
        return chosen.at[:, i].set(jnp.where(taken, top, t))

    chosen = jax.lax.fori_loop(0, k, step, jnp.full((m, k), -1, jnp.int32))
    chosen = jnp.where(excluded[:, None] & (chosen >= rows[:, None]), chosen + 1, chosen)
    return jnp.sort(chosen, axis=1)


def _dims(who, **dims):
    try:
        values = {name: operator.index(v) for name, v in dims.items()}
    except TypeError:
        raise TypeError(f'{who}: {", ".join(dims)} must be ints, got {dims}.') from None
    bad = [name for name, v in values.items() if v < 0]
    if bad:
        raise ValueError(f'{who}: {bad[0]} must be non-negative, got {values[bad[0]]}.')
    return tuple(values.values())


def random_fixed_num_conn(key, m, n, k, *, weight=1.0, allow_self=True, dtype=jnp.float32,
                          index_dtype=jnp.int32) -> FixedNumConn:
    """A random ``(m, n)`` :class:`FixedNumConn` with ``k`` distinct targets per row.

    Targets are drawn without replacement by Floyd's algorithm, run for all
    rows at once: ``O(m k)`` memory and ``O(m k^2)`` work, never ``O(m n)``,
    so large networks stay cheap. Rows hold no duplicates and come sorted.

    Args:
        key: a JAX PRNG key.
        m: rows (sources).
        n: columns (targets).
        k: connections per row; at most ``n`` (``n - 1`` when self
            connections are excluded and the row has a diagonal entry).
        weight: a number (one shared weight), an ``(m, k)`` array, or a
            callable ``weight(key, (m, k))`` returning one.
        allow_self: whether row ``i`` may connect to column ``i``.
        dtype: the weights' dtype.
        index_dtype: the indices' dtype.

    Returns:
        A :class:`FixedNumConn` of shape ``(m, n)``.

    Example:
        >>> import jax
        >>> import eventjax as ej
        >>> A = ej.random_fixed_num_conn(jax.random.key(0), 4, 5, 2, weight=0.1)
        >>> A.indices.shape, A.weights.shape
        ((4, 2), (1,))
    """
    who = 'random_fixed_num_conn()'
    m, n, k = _dims(who, m=m, n=n, k=k)
    limit = n - 1 if not allow_self and m > 0 and n > 0 else n
    if k > limit:
        raise ValueError(f'{who}: k must be at most {limit} (distinct targets among n = {n} columns'
                         f'{", self excluded" if limit < n else ""}), got {k}.')
    k_idx, k_w = jax.random.split(key)
    if m == 0 or k == 0:
        indices = jnp.zeros((m, k), index_dtype)
    else:
        indices = _distinct_targets(k_idx, m, n, k, allow_self).astype(index_dtype)
    return FixedNumConn((_weights(who, k_w, weight, (m, k), dtype), indices), shape=(m, n))


def _check_prob(who, prob) -> float:
    if isinstance(prob, jax.core.Tracer):
        raise TypeError(f'{who}: prob is traced (under jit, vmap or grad), but the number of entries depends on '
                        f'the draw, so random_csr runs eagerly only; call it outside the transformation.')
    if isinstance(prob, (str, bytes)) or np.ndim(prob) != 0:
        raise TypeError(f'{who}: prob must be one number in [0, 1], got {prob!r}; pass e.g. prob=0.1.')
    try:
        value = float(prob)
    except (TypeError, ValueError):
        raise TypeError(f'{who}: prob must be one number in [0, 1], got {prob!r}; pass e.g. prob=0.1.') from None
    if not 0.0 <= value <= 1.0:
        raise ValueError(f'{who}: prob must lie in [0, 1], got {prob}.')
    return value


def _bernoulli_positions(rng, size: int, prob: float) -> np.ndarray:
    """The sorted positions in ``[0, size)`` kept by independent coin flips of probability ``prob``.

    The gaps between kept positions are geometric, so drawing them costs
    O(kept) time and memory instead of O(size); the result has exactly the
    distribution of ``size`` independent Bernoulli(prob) draws.
    """
    if size == 0 or prob == 0.0:
        return np.zeros(0, np.int64)
    if prob == 1.0:
        return np.arange(size, dtype=np.int64)
    chunks, last = [], -1
    while True:
        expect = (size - 1 - last) * prob
        count = int(expect + 6.0 * np.sqrt(expect) + 1024)
        pos = last + np.cumsum(rng.geometric(prob, count), dtype=np.int64)
        inside = pos[pos < size]
        chunks.append(inside)
        if inside.size < pos.size:
            return np.concatenate(chunks)
        last = int(pos[-1])


def _block(rng, rows: int, n: int, prob: float, *, skip_diagonal: bool):
    """``(cols, indptr)`` of ``rows`` rows drawn independently over ``n`` columns (less the diagonal)."""
    width = n - 1 if skip_diagonal else n
    if rows == 0 or width <= 0:
        return np.zeros(0, np.int64), np.zeros(rows + 1, np.int64)
    pos = _bernoulli_positions(rng, rows * width, prob)
    indptr = np.searchsorted(pos, np.arange(rows + 1, dtype=np.int64) * width)
    row = pos // width
    cols = pos - row * width
    if skip_diagonal:
        cols += cols >= row
    return cols, indptr


def random_csr(key, m, n, prob, *, weight=1.0, allow_self=True, dtype=jnp.float32, index_dtype=jnp.int32) -> CSR:
    """A random ``(m, n)`` :class:`CSR`: each connection exists independently with probability ``prob``.

    Time and memory are O(m + nnz), not O(m n): the gaps between
    connections are drawn from the geometric distribution, which gives exactly
    independent coin flips. The number of entries depends on the draw, so
    this runs eagerly only (not under ``jit``); the same key gives the same
    matrix. For a CSR with exactly ``k`` per row use
    ``random_fixed_num_conn(...).tocsr()``.

    Args:
        key: a JAX PRNG key.
        m: rows (sources).
        n: columns (targets).
        prob: the probability of each connection, one number in ``[0, 1]``.
        weight: a number (one shared weight), or a callable ``weight(key, (nnz,))``.
        allow_self: whether row ``i`` may connect to column ``i``.
        dtype: the weights' dtype.
        index_dtype: the indices' and ``indptr``'s dtype.

    Returns:
        A :class:`CSR` of shape ``(m, n)``.

    Example:
        >>> import jax
        >>> import eventjax as ej
        >>> A = ej.random_csr(jax.random.key(0), 4, 5, 0.5, allow_self=False)
        >>> bool((A.todense().diagonal() == 0).all())
        True
    """
    who = 'random_csr()'
    m, n = _dims(who, m=m, n=n)
    prob = _check_prob(who, prob)
    if isinstance(key, jax.core.Tracer):
        raise TypeError(f'{who}: key is traced (under jit or vmap), but the number of entries depends on the '
                        f'draw, so random_csr runs eagerly only; call it outside the transformation.')
    k_pos, k_w = jax.random.split(key)
    rng = np.random.default_rng(np.asarray(jax.random.bits(k_pos, (4,), jnp.uint32)))
    if allow_self:
        cols, indptr = _block(rng, m, n, prob, skip_diagonal=False)
    else:
        # Rows with a diagonal entry draw among the n - 1 other columns;
        # rows past the last column (m > n) draw among all n.
        head = min(m, n)
        cols, indptr = _block(rng, head, n, prob, skip_diagonal=True)
        tail_cols, tail_ptr = _block(rng, m - head, n, prob, skip_diagonal=False)
        cols = np.concatenate([cols, tail_cols])
        indptr = np.concatenate([indptr, tail_ptr[1:] + indptr[-1]])
    data = _weights(who, k_w, weight, (cols.size,), dtype)
    return CSR((data, jnp.asarray(cols, index_dtype), jnp.asarray(indptr, index_dtype)), shape=(m, n),
               validate=False)
