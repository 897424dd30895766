"""What ``eventjax bench`` measures: one :class:`Case` per family and operator.

Every case builds a random square network of ``n`` neurons with a fixed
number of connections per row (``CONN_PROB * n``) and a vector (or a batch)
of events with ``EVENT_RATE`` of them active, then returns the eventjax call
and the dense ``jax.numpy`` product of the same matrix, the baseline of the
"vs dense" column. Only the public API is used, so this runs from an install.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs
import jax.numpy as jnp
import numpy as np

import eventjax as ej

__all__ = ['BATCH', 'CASES', 'CONN_PROB', 'CSR_BASELINE_MAX_N', 'EVENT_RATE', 'FAMILIES', 'JITC_CONN', 'JITC_SIZES',
           'Case', 'Problem', 'cases_for', 'default_sizes']

CONN_PROB = 0.02   # as in the Brette et al. (2007) benchmark networks
EVENT_RATE = 0.05  # fraction of neurons that fire in one step
BATCH = 16         # columns of the event matrix in the *mm cases
# The JITC family is about networks too big to store: a fixed number of connections per row (not a
# fraction of n), so n reaches 10**6; its baseline is a CSR matrix of the same statistics.
JITC_CONN = 100
JITC_SIZES = (10_000, 100_000, 1_000_000)
CSR_BASELINE_MAX_N = 1_000_000  # 10**8 stored connections, about 0.8 GB


@attrs.frozen
class Problem:
    """One benchmark instance: ``call(*args, backend=...)`` and its baseline.

    The baseline is the dense ``jax.numpy`` product ``dense(*dense_args)``,
    or, when ``baseline == 'CSR'``, ``dense(*dense_args, backend=...)`` on
    the same backend (``dense`` is None where the baseline is too big).
    """

    args: tuple
    call: Callable
    dense_args: tuple
    dense: Callable | None
    conn_per_row: int
    baseline: str = 'dense jnp'


@attrs.frozen
class Case:
    """An operator of a family, and how to build an instance of size ``n``.

    Attributes:
        family: ``'dense'``, ``'csr'``, ``'fcn'`` or ``'jitc'``.
        operator: label in the table, e.g. ``'binary_csrmv T'``.
        function: the public function's name in ``eventjax``.
        build: ``build(n, rng) -> Problem``.
    """

    family: str
    operator: str
    function: str
    build: Callable[[int, np.random.Generator], Problem]

    def available(self) -> bool:
        return hasattr(ej, self.function)

    def backends(self, platform: str = 'cpu') -> tuple[str, ...]:
        """The backends the operator's primitive has on ``platform``."""
        return tuple(ej.primitives().get(self.function, {}).get(platform, ()))


def _events(rng, n, batch=None):
    shape = (n,) if batch is None else (n, batch)
    return jnp.asarray(rng.random(shape) < EVENT_RATE)


def _fixed_conn(rng, n):
    """Column indices ``(n, k)`` (k distinct per row), weights ``(n, k)`` and the dense matrix."""
    k = max(1, int(round(CONN_PROB * n)))
    idx = np.argsort(rng.random((n, n)), axis=1)[:, :k] if n <= 2000 else \
        np.stack([rng.choice(n, k, replace=False) for _ in range(n)])
    idx = np.sort(idx, axis=1).astype(np.int32)
    w = rng.normal(size=(n, k)).astype(np.float32)
    dense = np.zeros((n, n), np.float32)
    np.put_along_axis(dense, idx, w, axis=1)
    return idx, w, dense


def _dense_events(transpose):
    if transpose:
        # (s.T @ w).T, not w.T @ s: XLA:CPU runs the latter ~40x slower at n=4000.
        return lambda w, s: (s.astype(w.dtype).T @ w).T
    return lambda w, s: w @ s.astype(w.dtype)


def _dense_case(fn, transpose, batch=None):
    def build(n, rng):
        idx, w, dense = _fixed_conn(rng, n)
        s = _events(rng, n, batch)
        W = jnp.asarray(dense)
        call = lambda W, s, backend: getattr(ej, fn)(W, s, transpose=transpose, backend=backend)
        return Problem((W, s), call, (W, s), _dense_events(transpose), n)
    return build


def _csr_case(fn, transpose, batch=None, events=True):
    def build(n, rng):
        idx, w, dense = _fixed_conn(rng, n)
        k = idx.shape[1]
        indptr = jnp.arange(0, n * k + 1, k, dtype=jnp.int32)
        x = _events(rng, n, batch) if events else jnp.asarray(rng.normal(size=(n,)).astype(np.float32))
        args = (jnp.asarray(w.ravel()), jnp.asarray(idx.ravel()), indptr, x)
        call = lambda d, i, p, x, backend: getattr(ej, fn)(d, i, p, x, shape=(n, n), transpose=transpose,
                                                          backend=backend)
        return Problem(args, call, (jnp.asarray(dense), x), _dense_events(transpose), k)
    return build


def _fcn_case(fn, transpose, events=True):
    def build(n, rng):
        idx, w, dense = _fixed_conn(rng, n)
        x = _events(rng, n) if events else jnp.asarray(rng.normal(size=(n,)).astype(np.float32))
        args = (jnp.asarray(w), jnp.asarray(idx), x)
        call = lambda w, i, x, backend: getattr(ej, fn)(w, i, x, shape=(n, n), transpose=transpose, backend=backend)
        return Problem(args, call, (jnp.asarray(dense), x), _dense_events(transpose), idx.shape[1])
    return build


def _random_csr(rng, n, k):
    """A CSR matrix with ``k`` connections per row (random columns, normal weights), as jnp arrays."""
    indices = rng.integers(0, n, size=n * k, dtype=np.int32)
    data = rng.standard_normal(size=n * k, dtype=np.float32)
    return jnp.asarray(data), jnp.asarray(indices), jnp.arange(0, n * k + 1, k, dtype=jnp.int32)


def _jitc_case(fn, transpose, events=True):
    """A JITC matrix (``JITC_CONN`` per row, normal weights), never stored; baseline: CSR of the same statistics."""
    csr_fn = fn.replace('jitc', 'csr')

    def build(n, rng):
        prob = min(1.0, JITC_CONN / n)
        weights = jnp.asarray([0.0, 1.0], jnp.float32)
        x = _events(rng, n) if events else jnp.asarray(rng.normal(size=(n,)).astype(np.float32))
        call = lambda w, x, backend: getattr(ej, fn)((w[0], w[1]), x, seed=0, prob=prob, shape=(n, n),
                                                      law='normal', transpose=transpose, backend=backend)
        k = int(round(ej.JITCMatrix(1.0, prob=prob, seed=0, shape=(n, n)).nnz / n))
        if n > CSR_BASELINE_MAX_N:
            return Problem((weights, x), call, (), None, k, baseline='CSR')
        csr = lambda d, i, p, x, backend: getattr(ej, csr_fn)(d, i, p, x, shape=(n, n), transpose=transpose,
                                                               backend=backend)
        return Problem((weights, x), call, (*_random_csr(rng, n, k), x), csr, k, baseline='CSR')
    return build


def default_sizes(families, sizes):
    """``JITC_SIZES`` when only the JITC family runs, else ``sizes``."""
    return JITC_SIZES if set(families) == {'jitc'} else sizes


CASES = (
    Case('dense', 'binary_densemv T', 'binary_densemv', _dense_case('binary_densemv', True)),
    Case('dense', 'binary_densemv', 'binary_densemv', _dense_case('binary_densemv', False)),
    Case('dense', f'binary_densemm T (x{BATCH})', 'binary_densemm', _dense_case('binary_densemm', True, BATCH)),
    Case('csr', 'binary_csrmv T', 'binary_csrmv', _csr_case('binary_csrmv', True)),
    Case('csr', 'binary_csrmv', 'binary_csrmv', _csr_case('binary_csrmv', False)),
    Case('csr', 'csrmv', 'csrmv', _csr_case('csrmv', False, events=False)),
    Case('csr', f'binary_csrmm T (x{BATCH})', 'binary_csrmm', _csr_case('binary_csrmm', True, BATCH)),
    Case('fcn', 'binary_fcnmv T', 'binary_fcnmv', _fcn_case('binary_fcnmv', True)),
    Case('fcn', 'binary_fcnmv', 'binary_fcnmv', _fcn_case('binary_fcnmv', False)),
    Case('fcn', 'fcnmv', 'fcnmv', _fcn_case('fcnmv', False, events=False)),
    Case('jitc', 'binary_jitcmv T', 'binary_jitcmv', _jitc_case('binary_jitcmv', True)),
    Case('jitc', 'binary_jitcmv', 'binary_jitcmv', _jitc_case('binary_jitcmv', False)),
    Case('jitc', 'jitcmv', 'jitcmv', _jitc_case('jitcmv', False, events=False)),
)

FAMILIES = ('dense', 'csr', 'fcn', 'jitc')


def cases_for(families) -> list[Case]:
    """The cases of the given families, in table order."""
    return [c for c in CASES if c.family in families]
