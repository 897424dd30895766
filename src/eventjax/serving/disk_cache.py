"""Fill the disk caches of the compiled standard kernels ahead of time (container images, CI, before a deploy).

A numba handler is compiled once per (kernel, dtypes, ranks) and kept in
``NUMBA_CACHE_DIR``; a C++ kernel once per source in ``EVENTJAX_CACHE_DIR``.
:func:`warm` lowers and compiles every standard operator of the chosen
families, both directions, with the common dtypes (float32 weights and
values, bool and float32 events, int32 indices), on a small matrix and on
one large enough to reach the variants that run on several threads; nothing
runs. A later process that calls these operators with those dtypes loads
them from disk instead of compiling.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterable, Sequence

import attrs
import jax
import jax.numpy as jnp
import numpy as np

from eventjax.config.cache import check_writable, handler_dir, native_dir
from eventjax.kernels.csr import binary_csrmm, binary_csrmv, csrmm, csrmv
from eventjax.kernels.dense import binary_densemm, binary_densemv
from eventjax.kernels.fcn import binary_fcnmm, binary_fcnmv, fcnmm, fcnmv
from eventjax.kernels.jitc import binary_jitcmm, binary_jitcmv, jitcmm, jitcmv
from eventjax.primitive.tags import get_registry

__all__ = ['FAMILIES', 'WarmResult', 'warm']

FAMILIES = ('dense', 'csr', 'fcn', 'jitc')
# (rows, stored entries per row): small, then large enough for every threaded variant (a gather of
# 2**17 visited entries, a transposed scatter over a matrix that stores 2**20).
_SIZES = ((64, 4), (1100, 1000))
_BATCH = 4


@attrs.frozen
class WarmResult:
    """One operator compiled by :func:`warm` (``error`` is the message when it could not be)."""

    family: str
    operator: str
    backend: str
    seconds: float
    error: str | None = None


def _problems(family: str, n: int, k: int) -> list[tuple[str, Callable, tuple]]:
    """``(operator, f(*arrays, transpose, backend), arrays)`` for each operator of ``family`` and input kind."""
    rng = np.random.default_rng(0)
    w = jnp.asarray(rng.random(n * k, dtype=np.float32))
    idx = np.tile(rng.permutation(n)[:k], (n, 1)).astype(np.int32)  # only the dtypes and sizes matter
    spikes, values = jnp.asarray(rng.random(n) < 0.1), jnp.asarray(rng.random(n, dtype=np.float32))
    spikes_m = jnp.asarray(rng.random((n, _BATCH)) < 0.1)
    values_m = jnp.asarray(rng.random((n, _BATCH), dtype=np.float32))
    shape = (n, n)
    events = ((spikes, spikes_m), (values, values_m))
    out = []
    if family == 'dense':
        W = jnp.asarray(rng.random((n, n), dtype=np.float32))
        for v, m in events:
            out.append(('binary_densemv', lambda W, v, t, b: binary_densemv(W, v, transpose=t, backend=b), (W, v)))
            out.append(('binary_densemm', lambda W, m, t, b: binary_densemm(W, m, transpose=t, backend=b), (W, m)))
    elif family == 'csr':
        structure = (w, jnp.asarray(idx.ravel()), jnp.arange(0, n * k + 1, k, dtype=jnp.int32))
        ops = [('csrmv', csrmv, values), ('csrmm', csrmm, values_m)]
        for v, m in events:
            ops += [('binary_csrmv', binary_csrmv, v), ('binary_csrmm', binary_csrmm, m)]
        for name, op, x in ops:
            out.append((name, lambda d, i, p, x, t, b, op=op: op(d, i, p, x, shape=shape, transpose=t, backend=b),
                        (*structure, x)))
    elif family == 'fcn':
        structure = (w.reshape(n, k), jnp.asarray(idx))
        ops = [('fcnmv', fcnmv, values), ('fcnmm', fcnmm, values_m)]
        for v, m in events:
            ops += [('binary_fcnmv', binary_fcnmv, v), ('binary_fcnmm', binary_fcnmm, m)]
        for name, op, x in ops:
            out.append((name, lambda W, i, x, t, b, op=op: op(W, i, x, shape=shape, transpose=t, backend=b),
                        (*structure, x)))
    else:
        weight = jnp.asarray([0.5], jnp.float32)
        ops = [('jitcmv', jitcmv, values), ('jitcmm', jitcmm, values_m)]
        for v, m in events:
            ops += [('binary_jitcmv', binary_jitcmv, v), ('binary_jitcmm', binary_jitcmm, m)]
        for name, op, x in ops:
            out.append((name, lambda W, x, t, b, op=op: op(W, x, seed=0, prob=k / n, shape=shape, transpose=t,
                                                          backend=b), (weight, x)))
    return out


def _check_cache_folders(backends: Sequence[str]) -> None:
    """Fail before compiling if a disk cache that ``backends`` fill cannot be written."""
    if 'numba' in backends:
        import numba

        base = numba.config.CACHE_DIR or ''
        check_writable(handler_dir(base))
        if base:  # numba keeps its index and machine code in a folder of its own there
            check_writable(base)
    if 'cpp' in backends:
        check_writable(native_dir())


def warm(backends: Sequence[str] = ('numba',), families: Iterable[str] = FAMILIES,
         progress: Callable[[WarmResult], None] | None = None) -> list[WarmResult]:
    """Compile the standard operators of ``families`` for ``backends`` on the CPU, filling the disk caches.

    Args:
        backends: CPU backends to compile for; an operator that lacks one is skipped.
        families: any of :data:`FAMILIES`.
        progress: called with each :class:`WarmResult` as it is done.

    Returns:
        One :class:`WarmResult` per (operator, backend), with the seconds its compiles took.

    Raises:
        ValueError: an unknown family, or a backend that no operator of ``families`` has (checked
            before anything compiles).
        PermissionError: a disk cache the backends fill cannot be written (checked before anything
            compiles: what is compiled would not reach the disk).

    Example:
        >>> rows = warm(backends=('numba',), families=('dense',))  # doctest: +SKIP
        >>> sorted({r.operator for r in rows})  # doctest: +SKIP
        ['binary_densemm', 'binary_densemv']
        >>> warm(families=('csv',))
        Traceback (most recent call last):
        ...
        ValueError: warm: unknown families ['csv']; choose from ['dense', 'csr', 'fcn', 'jitc'], e.g. families=("csr",).
    """
    families, backends = tuple(families), tuple(backends)
    unknown = sorted(set(families) - set(FAMILIES))
    if unknown or not families:
        raise ValueError(f'warm: unknown families {unknown or families}; choose from {list(FAMILIES)}, '
                         'e.g. families=("csr",).')
    registry = get_registry()
    names = {name for family in families for name, _, _ in _problems(family, *_SIZES[0])}
    offered = {b for name in names for b in registry[name].available_backends('cpu')}
    missing = sorted(set(backends) - offered)
    if missing or not backends:
        raise ValueError(f'warm: no standard operator of {",".join(families)} has the cpu backend(s) '
                         f'{missing or list(backends)}; choose from {sorted(offered)} (eventjax info lists them).')
    _check_cache_folders(backends)
    cpu = jax.devices('cpu')[0]
    results = {}
    with jax.default_device(cpu):
        for family in families:
            for n, k in _SIZES:
                for name, fn, arrays in _problems(family, n, k):
                    for backend in backends:
                        if backend not in registry[name].available_backends('cpu'):
                            continue
                        key = (family, name, backend)
                        done = results.get(key, WarmResult(family, name, backend, 0.0))
                        t0 = time.perf_counter()
                        error = done.error
                        try:
                            for transpose in (False, True):
                                jax.jit(functools.partial(fn, t=transpose, b=backend)).lower(*arrays).compile()
                        except Exception as e:  # noqa: BLE001 - reported per operator, the others still warm
                            error = f'{type(e).__name__}: {e}'.splitlines()[0]
                        results[key] = attrs.evolve(done, seconds=done.seconds + time.perf_counter() - t0,
                                                    error=error)
            if progress is not None:
                for key, result in results.items():
                    if key[0] == family:
                        progress(result)
    return list(results.values())
