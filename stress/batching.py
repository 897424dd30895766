"""Scenario 2: batching and autodiff under load, every result checked against NumPy.

Workers pick at random among:

- ``vmap`` of a standard operator over its vector (mv: the mv -> mm rule) or
  matrix operand (mm), batch axis 0 or last;
- ``vmap`` of a primitive that has only ``general_batching_rule`` (a
  ``lax.scan``), with one or both operands batched, on each cpu backend it has;
- ``grad`` of ``sum(c * op(x))`` with respect to the float operand ``x``,
  whose answer is ``A.T @ c`` (``A @ c`` when transposed);

each with a random backend, eager or under ``jit``.

Variety and compiles. Every (transform, case, backend, batch axis, eager or
``jit``) is its own executable (about 1.5-3 MiB that JAX keeps: see
``stress/README.md``), so the set is bounded (:func:`key_set`): a pool of
6 cases (long mode; 4 short) drawn from the small shape set of
``operators``, a batch of events has its case's dtype (the pool draws
boolean and float events), and ``general_batching_rule`` runs over vectors
of 4 or 7. Each (case, backend) is called in one mode: ``vmap`` (both batch
axes of an mm case) under ``jit`` on every other pair and eagerly on the
rest, ``grad`` in the other mode, so each case, backend and transform runs
both eagerly and under ``jit``; the scan-only primitive likewise alternates
over (backend, length, operands batched). Which half is jitted turns with
the run's seed (``mixed.PARITY``). The long mode draws its pool once per
process (``long_pool``), so :func:`warm` can call every member of that set
before the timed mix, checked like any call.
"""

from __future__ import annotations

import functools
import time

import jax
import jax.numpy as jnp
import numpy as np

import eventjax as ej
from stress import operators as ops
from stress.harness import Report, run_threads, watched
from stress.mixed import PARITY

BATCH = 3
SCAN_BACKENDS = ('jax', 'numba')
SCAN_LENGTHS = (4, 7)


@functools.cache
def scan_only_primitive() -> ej.XLACustomKernel:
    """``(x, w) -> (x * w[0] + 1, sum(x))``: two outputs, batched only by the general rule."""
    prim = ej.XLACustomKernel('stress_scan_only')
    prim.def_jax_kernel(lambda outs: lambda x, w: (x * w[0] + 1, jnp.sum(x, keepdims=True)))
    if 'numba' in ops.usable_cpu_backends():
        prim.def_numba_kernel(_numba_generator)
    return prim


def _numba_generator(outs):
    import numba  # noqa: PLC0415  (only where numba is installed)

    @numba.njit
    def kernel(x, w, y, total):
        total[0] = 0.0
        for i in range(x.size):
            y[i] = x[i] * w[0] + 1
            total[0] += x[i]

    return kernel


def primitives() -> tuple:
    """The primitives this scenario defines, for ``python -m stress`` to define before any scenario runs."""
    return (scan_only_primitive(),)


def call_scan_only(x, w, backend):
    prim = scan_only_primitive()
    outs = (jax.ShapeDtypeStruct(x.shape, x.dtype), jax.ShapeDtypeStruct((1,), x.dtype))
    return prim(x, w, outs=outs, backend=backend)


class _Functions:
    """Transformed functions built once per key and reused, so jit caches are hit.

    A fresh ``jax.jit(jax.vmap(lambda ...))`` on every call would compile on
    every call; real callers build their transformed functions once.
    """

    def __init__(self):
        self._made: dict = {}

    def get(self, key, build):
        fn = self._made.get(key)
        if fn is None:
            fn = self._made.setdefault(key, build())
        return fn


FUNCTIONS = _Functions()


def _transformed(fn, jit):
    return jax.jit(fn) if jit else fn


def vmap_operator(rng, index: int, case: ops.Case, backend, jit, last=None):
    x = np.asarray(case.operand)
    last = (bool(rng.integers(2)) if last is None else last) and x.ndim == 2
    # The batch has the case's own event dtype: boolean and float events each compile an
    # executable of their own, and the case pool already draws both.
    xs = ops.operand_like(rng, case.name, (BATCH, *x.shape), x.dtype == np.bool_)
    expected = np.stack([case.product(xb) for xb in xs])
    if last:
        xs = np.moveaxis(xs, 0, -1)
    fn = FUNCTIONS.get(('vmap', index, backend, last, jit), lambda: _transformed(
        jax.vmap(case.fn(backend), in_axes=-1 if last else 0), jit))
    return fn(xs), expected


def vmap_scan_only(rng, backend, jit, n=None, both=None):
    n = int(rng.choice(SCAN_LENGTHS)) if n is None else n
    xs = rng.normal(size=(BATCH, n)).astype(np.float32)
    both = bool(rng.integers(2)) if both is None else both
    ws = rng.normal(size=(BATCH, 1) if both else (1,)).astype(np.float32)
    fn = FUNCTIONS.get(('scan', backend, both, jit), lambda: _transformed(jax.vmap(
        lambda x, w: call_scan_only(x, w, backend), in_axes=(0, 0 if both else None)), jit))
    y, total = fn(xs, ws)
    w64 = ws.astype(np.float64).reshape(BATCH if both else 1, 1)
    expected_y = xs.astype(np.float64) * w64 + 1
    expected_total = xs.astype(np.float64).sum(axis=1, keepdims=True)
    return (y, total), (expected_y, expected_total)


def grad_operator(rng, index: int, case: ops.Case, backend, jit):
    c = rng.normal(size=case.expected.shape).astype(np.float32)

    def build():
        fn = case.fn(backend)
        return _transformed(jax.grad(lambda x, c: jnp.sum(fn(x) * c)), jit)

    got = FUNCTIONS.get(('grad', index, backend, jit), build)(case.operand, c)
    a = case.dense if case.statics['transpose'] else case.dense.T
    return got, a @ c.astype(np.float64)


def scan_backends() -> tuple[str, ...]:
    return tuple(b for b in SCAN_BACKENDS if b in scan_only_primitive().available_backends('cpu'))


def grad_candidates(pool) -> list[int]:
    """Indices of the float cases of ``pool``: ``grad`` differentiates the float operand."""
    return [i for i, c in enumerate(pool) if not c.name.startswith('binary_')]


def key_set(pool) -> tuple[tuple, ...]:
    """The calls made over ``pool``: ``(kind, case index, backend, jit, choice)``, each once.

    ``choice`` fixes what :func:`checked_call` would otherwise draw. Pair
    ``j`` of case ``i``'s backend choices runs ``vmap`` under ``jit`` when
    ``i + j + PARITY`` is even, and ``grad`` (float cases) in the other mode.
    """
    keys = []
    floats = set(grad_candidates(pool))
    for index, case in enumerate(pool):
        for j, backend in enumerate((None, *ops.backends(case.name))):
            jit = (index + j + PARITY) % 2 == 0
            for last in ((False, True) if np.ndim(case.operand) == 2 else (False,)):
                keys.append(('vmap', index, backend, jit, {'last': last}))
            if index in floats:
                keys.append(('grad', index, backend, not jit, {}))
    for b, backend in enumerate(scan_backends()):
        for k, n in enumerate(SCAN_LENGTHS):
            for both in (False, True):
                keys.append(('scan', None, backend, (b + k + both + PARITY) % 2 == 0, {'n': n, 'both': both}))
    return tuple(keys)


def one_call(report: Report, rng, pool, who: str, keys=None) -> None:
    """One call drawn from ``pool``'s key set: a kind, then jitted with probability 3/4, then a member."""
    keys = key_set(pool) if keys is None else keys
    kinds = sorted({key[0] for key in keys})
    kind = kinds[int(rng.integers(len(kinds)))]
    jit = rng.random() < 0.75  # eager vmap/grad retrace on every call: JAX's cost, not ours
    members = [key for key in keys if key[0] == kind and key[3] == jit] or [key for key in keys if key[0] == kind]
    kind, index, backend, jit, choice = members[int(rng.integers(len(members)))]
    checked_call(report, who, kind, index, None if index is None else pool[index], backend, jit, rng, **choice)


def checked_call(report: Report, who: str, kind: str, index, case, backend, jit: bool, rng, **choice) -> None:
    """One watched call of ``kind`` ('vmap', 'scan' or 'grad'), its results checked into ``report``.

    ``choice`` fixes what is otherwise drawn (``last`` for 'vmap'; ``n`` and
    ``both`` for 'scan').
    """
    what = f'{who}: {kind} {case.name + str(case.statics) if case else "stress_scan_only"} backend={backend} jit={jit}'
    try:
        with watched(what):
            if kind == 'scan':
                got, expected = vmap_scan_only(rng, backend, jit, **choice)
            elif kind == 'vmap':
                got, expected = vmap_operator(rng, index, case, backend, jit, **choice)
            else:
                got, expected = grad_operator(rng, index, case, backend, jit)
            got = jax.tree.map(np.asarray, got)
    except Exception as exc:
        report.add(1, 0, failure=f'{what}: raised {type(exc).__name__}: {exc}')
        return
    for g, e in zip(jax.tree.leaves(got), jax.tree.leaves(expected)):
        g = np.asarray(g, np.float64)
        bad = g.shape != e.shape or not np.allclose(g, e, rtol=ops.RTOL, atol=ops.ATOL)
        report.add(0, 1, failure=bad and f'{what}: got shape {g.shape}, expected {e.shape}; '
                   f'max error {np.max(np.abs(g - e)) if g.shape == e.shape else "n/a"}', wrong=bad)
    report.add(1, 0)


def make_pool(rng, size: int) -> list[ops.Case]:
    names = ops.operators()
    pool = [ops.random_case(rng, names[int(rng.integers(len(names)))]) for _ in range(size)]
    floats = [n for n in names if not n.startswith('binary_')]
    if floats and all(c.name.startswith('binary_') for c in pool):
        pool[-1] = ops.random_case(rng, floats[int(rng.integers(len(floats)))])  # so grad has work
    return pool


@functools.cache
def long_pool(seed: int) -> tuple[ops.Case, ...]:
    """The long run's pool, drawn once per process so that :func:`warm` and :func:`run` share it."""
    return tuple(make_pool(np.random.default_rng(seed), 6))


def warm(report: Report, seed: int, who: str = 'warm-up') -> None:
    """Every call of the long run's key set once, in this thread: each compiles here, none later."""
    pool = long_pool(seed)
    rng = np.random.default_rng(seed)
    for kind, index, backend, jit, choice in key_set(pool):
        checked_call(report, who, kind, index, None if index is None else pool[index], backend, jit, rng, **choice)


# The long run's pool is drawn once per process from this seed (the run prints it).
LONG_SEED = int(time.time()) % 100_000 + 7


def run(seconds: float, threads: int = 4, long: bool = False) -> Report:
    report = Report('batching')
    seed = LONG_SEED if long else int(time.time()) % 100_000 + 7
    pool = list(long_pool(seed)) if long else make_pool(np.random.default_rng(seed), 4)
    start = time.monotonic()
    deadline = start + seconds
    keys = key_set(pool)

    def worker(i):
        local = np.random.default_rng(seed + i)
        for _ in range(100_000):
            if time.monotonic() > deadline:
                break
            one_call(report, local, pool, f'worker {i}', keys)

    report.failures.extend(run_threads(threads, worker, seconds + 300))
    report.seconds = time.monotonic() - start
    report.extra['seed'] = seed
    return report
