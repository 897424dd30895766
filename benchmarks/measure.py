"""One point of ``eventjax bench``: a case at one size, on every chosen backend, with its anchors.

Everything compared is compiled first, checked against eventjax's result
(an anchor that computes something else is left out, with a note), and then
timed in alternating blocks (:func:`~benchmarks.timing.interleaved_us`),
so all of them run under the same load.
"""

from __future__ import annotations

import functools

import attrs
import jax
import numpy as np

from benchmarks.anchors import block, brainevent_backend, brainevent_fn, same_result, scipy_fn
from benchmarks.report import Result
from benchmarks.timing import interleaved_us

__all__ = ['Compared', 'held_mb', 'measure_point']


@attrs.frozen
class Compared:
    """The optional packages of a run: ``brainevent`` and ``scipy.sparse`` modules, None where missing."""

    brainevent: object | None
    scipy_sparse: object | None


def held_mb(compiled) -> float | None:
    """What a compiled call holds (arguments, outputs, XLA temporaries) in MiB, from XLA's analysis; None if none."""
    try:
        stats = compiled.memory_analysis()
    except Exception:  # an analysis is a nicety: no number rather than no benchmark
        return None
    if stats is None:
        return None
    total = stats.argument_size_in_bytes + stats.output_size_in_bytes + stats.temp_size_in_bytes
    return (total - stats.alias_size_in_bytes) / 2**20


def _compiled(fn, args):
    """``(call, result, memory_mb)``: the compiled ``jit(fn)``, a first result and what the call holds."""
    compiled = jax.jit(fn).lower(*args).compile()
    call = functools.partial(compiled, *args)
    return call, np.asarray(block(call())), held_mb(compiled)


def _max_diff(a, b) -> str:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return f'max abs difference {np.max(np.abs(a - b)):.3g}' if a.shape == b.shape else f'shape {a.shape} != {b.shape}'


def _brainevent(problem, backend, platform, module, want, where, notes):
    """``(be_backend, call)`` of brainevent's product matching ``want``, or None (with a note if it fails)."""
    if module is None or problem.brainevent is None:
        return None
    be_backend = brainevent_backend(problem.brainevent, backend, platform, module)
    if be_backend is None:
        return None
    label = f'brainevent {be_backend or "(jax.numpy)"}'
    try:
        fn, args = brainevent_fn(problem.brainevent, be_backend, module)
        call, got, _ = _compiled(fn, args)
    except Exception as exc:  # brainevent's failure costs its column, not the run
        notes.append(f'{where}: {label} failed ({type(exc).__name__}: {str(exc)[:120]}); no "x be" ratio.')
        return None
    if not same_result(got, want):
        notes.append(f'{where}: {label} differs from eventjax {backend} ({_max_diff(got, want)}); '
                     'no "x be" ratio.')
        return None
    return be_backend, call


def _scipy(problem, module, want, where, notes):
    """scipy's product as a no-argument call, or None (with a note if it differs from eventjax's)."""
    if module is None or problem.scipy is None:
        return None
    call = scipy_fn(problem.scipy, module)
    got = call()
    if not same_result(got, want):
        notes.append(f'{where}: scipy.sparse differs from eventjax ({_max_diff(got, want)}); no "x scipy" ratio.')
        return None
    return call


def measure_point(case, problem, n, backends, *, compared: Compared, bandwidth_gbs: float, timing: dict,
                  notes: list, step=lambda label: None) -> list[Result]:
    """Time ``problem`` (``case`` at ``n``) on each of ``backends`` with its baselines and anchors.

    Returns one :class:`Result` per backend. ``timing`` holds the keywords of
    :func:`~benchmarks.timing.interleaved_us`; ``step`` is called
    once per backend, for a progress bar.
    """
    where = f'{case.operator} n={n}'
    platform = jax.default_backend()
    calls = {}  # name -> no-argument call, all timed in alternating blocks
    per_backend = problem.baseline != 'dense jnp'
    dense_mb = None
    if problem.dense is None and not per_backend:
        notes.append(f'n={n}: no dense jnp baseline: the dense {n} x {n} float32 matrix would be '
                     f'{4 * n * n / 1e9:.1f} GB.')
    elif problem.dense is None:
        notes.append(f'{where}: no {problem.baseline} baseline (too big to store).')
    elif not per_backend:
        calls['dense'], _, dense_mb = _compiled(problem.dense, problem.dense_args)
    held, be_of = {}, {}
    first = None
    for backend in backends:
        step(f'{where} {backend}')
        calls[backend], got, held[backend] = _compiled(functools.partial(problem.call, backend=backend), problem.args)
        first = got if first is None else first
        if per_backend and problem.dense is not None:
            calls[f'base {backend}'], _, held[f'base {backend}'] = _compiled(
                functools.partial(problem.dense, backend=backend), problem.dense_args)
        be = _brainevent(problem, backend, platform, compared.brainevent, got, where, notes)
        if be is not None:
            be_of[backend], calls[f'be {backend}'] = be
    if first is not None:
        sp = _scipy(problem, compared.scipy_sparse, first, where, notes)
        if sp is not None:
            calls['scipy'] = sp
    us = dict(zip(calls, interleaved_us(calls.values(), **timing)))
    if problem.steps != 1:  # a scan of several steps: report each eventjax call and baseline per step
        us = {k: (v / problem.steps if k in backends or k.startswith('base ') else v) for k, v in us.items()}
    floor_us = None if problem.floor_bytes is None else problem.floor_bytes / bandwidth_gbs / 1e3
    results = []
    for backend in backends:
        base = f'base {backend}' if per_backend else 'dense'
        results.append(Result(
            case.family, case.operator, backend, n, problem.conn_per_row, us[backend], us.get(base),
            baseline=problem.baseline, memory_mb=held[backend], baseline_mb=held.get(base, dense_mb),
            floor_bytes=problem.floor_bytes, floor_us=floor_us, brainevent_backend=be_of.get(backend),
            brainevent_us=us.get(f'be {backend}'), scipy_us=us.get('scipy')))
    return results
