"""``eventjax bench --family plasticity``: µs per weight update on presynaptic events, in place.

The problem (as the products'): ``n`` neurons, ``CONN_PER_ROW`` stored
connections per row at random columns, float32 weights in ``[0, 1)``, a
postsynaptic trace, events on a fraction ``rate`` of the rows; the update is
``W[i, j] += trace[j]`` on the stored entries of the rows with an event,
bounded to ``[0, 1]`` (``csr_on_pre``). Every row is timed as a loop feeding
its result back (``w = f(w)``), which is what a simulation does:

- ``eventjax <backend>, donated``: ``jax.jit(..., donate_argnums=0)``;
- ``eventjax <backend>, not donated``: XLA copies the weights first;
- ``in lax.scan (per step)``: ``SCAN_STEPS`` updates in one jitted scan with
  the weights in the carry, divided by the steps; the compiled loop is
  searched for a copy of the weights (``copies per step``);
- ``hand-written JAX``: ``clip(w + where(pre[rows], trace[indices], 0))``, jitted, donated;
- ``brainevent 0.2.1 <backend>``: ``update_csr_on_binary_pre`` where brainevent imports;
- ``one copy of the weights``: ``w * 1.0``;
- ``forward product``: ``binary_csrmv(..., transpose=True)`` of the same events (the target is 2x it).

The structure is passed as jit arguments, as in a simulation that takes the
network as input.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence

import attrs
import jax
import jax.numpy as jnp
import numpy as np

import eventjax as ej
from eventjax.benchmarks.anchors import BRAINEVENT_BACKENDS, import_optional
from eventjax.benchmarks.timing import median_us

__all__ = ['PLASTICITY_RATES', 'PLASTICITY_SIZES', 'SCAN_STEPS', 'PlasticityResult', 'format_plasticity',
           'run_plasticity']

PLASTICITY_SIZES = (4_000, 10_000, 100_000)
PLASTICITY_RATES = (0.02, 0.001)
CONN_PER_ROW = 100
SCAN_STEPS = 20


@attrs.frozen
class PlasticityResult:
    """One timed row: ``us`` per update of ``n`` neurons at event ``rate``; ``note`` (copies, errors)."""

    n: int
    rate: float
    label: str
    us: float | None
    note: str = ''


def _chain_us(f: Callable, w, rest: tuple, budget_s: float, min_calls: int = 5, max_calls: int = 200) -> float:
    """Median µs of ``w = f(w, *rest)`` (the result fed back, so a donated buffer is always fresh)."""
    w = jax.block_until_ready(f(w, *rest))
    times = []
    start = time.perf_counter()
    while len(times) < min_calls or (len(times) < max_calls and time.perf_counter() - start < budget_s):
        t0 = time.perf_counter()
        w = jax.block_until_ready(f(w, *rest))
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e6


def _problem(n: int, rate: float, rng):
    k = min(n, CONN_PER_ROW)
    indices = jnp.asarray(rng.integers(0, n, n * k, dtype=np.int32))
    indptr = jnp.arange(0, n * k + 1, k, dtype=jnp.int32)
    spikes = jnp.asarray(rng.random(n) < rate)
    trace = jnp.asarray(rng.standard_normal(n).astype(np.float32) * 0.01)
    w = rng.random(n * k, dtype=np.float32)
    return w, indices, indptr, spikes, trace


def _weight_copies(hlo: str, size: int) -> int:
    return sum(1 for line in hlo.splitlines() if ' copy(' in line and f'f32[{size}]' in line)


def _rows(n: int, rate: float, backends: Sequence[str], compare: bool, budget_s: float, rng):
    w0, indices, indptr, spikes, trace = _problem(n, rate, rng)
    shape = (n, n)
    rest = (indices, indptr, spikes, trace)
    fresh = lambda: jnp.asarray(w0)
    out = []

    def update(backend):
        return lambda w, i, p, s, t: ej.csr_on_pre(w, i, p, s, t, 0.0, 1.0, shape=shape, backend=backend,
                                                   max_row_length=min(n, CONN_PER_ROW))

    for backend in backends:
        f = update(backend)
        donated = jax.jit(f, donate_argnums=0)
        copies = _weight_copies(donated.lower(fresh(), *rest).compile().as_text(), w0.size)
        out.append(PlasticityResult(n, rate, f'eventjax {backend}, donated', _chain_us(donated, fresh(), rest,
                                                                                     budget_s),
                                    f'{copies} copies of W' if copies else ''))
        out.append(PlasticityResult(n, rate, f'eventjax {backend}, not donated',
                                    _chain_us(jax.jit(f), fresh(), rest, budget_s)))

        def steps(w, i, p, s, t, f=f):
            return jax.lax.scan(lambda w, _: (f(w, i, p, s, t), None), w, None, length=SCAN_STEPS)[0]

        scan = jax.jit(steps, donate_argnums=0)
        copies = _weight_copies(scan.lower(fresh(), *rest).compile().as_text(), w0.size)
        us = _chain_us(scan, fresh(), rest, budget_s, min_calls=3, max_calls=50) / SCAN_STEPS
        out.append(PlasticityResult(n, rate, f'eventjax {backend}, in lax.scan (per step)', us,
                                    f'copies of W in the compiled loop: {copies}'))

    rows_of = jnp.asarray(np.repeat(np.arange(n, dtype=np.int32), min(n, CONN_PER_ROW)))

    def by_hand(w, i, p, s, t):
        return jnp.clip(w + jnp.where(s[rows_of], t[i], 0.0), 0.0, 1.0)

    out.append(PlasticityResult(n, rate, 'hand-written JAX (where, clip), donated',
                                _chain_us(jax.jit(by_hand, donate_argnums=0), fresh(), rest, budget_s)))
    out.append(PlasticityResult(n, rate, 'one copy of the weights (w * 1.0)',
                                _chain_us(jax.jit(lambda w, *r: w * 1.0), fresh(), rest, budget_s)))
    forward = jax.jit(lambda w, i, p, s: ej.binary_csrmv(w, i, p, s, shape=shape, transpose=True))
    out.append(PlasticityResult(n, rate, 'forward product (binary_csrmv T, default backend)',
                                median_us(forward, (fresh(), *rest[:3]), budget_s=budget_s)))
    if compare:
        out += _brainevent_rows(n, rate, backends, fresh, rest, shape, budget_s)
    return out


def _brainevent_rows(n, rate, backends, fresh, rest, shape, budget_s):
    be = import_optional('brainevent')
    if be is None or not hasattr(be, 'update_csr_on_binary_pre'):
        return [PlasticityResult(n, rate, 'brainevent', None, 'not installed (pip install "eventjax[compare]")')]
    out = []
    for backend in dict.fromkeys(BRAINEVENT_BACKENDS[b] for b in backends if b in BRAINEVENT_BACKENDS):
        def f(w, i, p, s, t, backend=backend):
            return be.update_csr_on_binary_pre(w, i, p, s, t, 0.0, 1.0, shape=shape, backend=backend)
        try:
            us = _chain_us(jax.jit(f), fresh(), rest, budget_s)
            out.append(PlasticityResult(n, rate, f'brainevent {be.__version__} {backend}', us))
        except Exception as exc:  # a backend brainevent lacks here costs a row, not the run
            out.append(PlasticityResult(n, rate, f'brainevent {backend}', None, f'{type(exc).__name__}'))
    return out


def run_plasticity(sizes: Sequence[int] | None = None, rates: Sequence[float] | None = None,
                   backends: Sequence[str] | None = None, *, compare: bool = True, budget_s: float = 0.5,
                   seed: int = 0, progress=None) -> list[PlasticityResult]:
    """Time the in-place update and its comparisons at every size and event rate.

    Example:
        >>> rows = run_plasticity([200], [0.1], ['jax'], compare=False, budget_s=0.01)
        >>> rows[0].label
        'eventjax jax, donated'
    """
    sizes = tuple(sizes or PLASTICITY_SIZES)
    rates = tuple(rates or PLASTICITY_RATES)
    have = ej.get_registry()['csr_on_pre'].available_backends('cpu' if jax.default_backend() == 'cpu' else 'gpu')
    backends = tuple(b for b in (backends or have) if b in have)
    rng = np.random.default_rng(seed)
    results = []
    for n in sizes:
        for rate in rates:
            if progress is not None:
                print(f'plasticity: n = {n:,}, {rate:.1%} events', file=progress, flush=True)
            results += _rows(n, rate, backends, compare, budget_s, rng)
    return results


def format_plasticity(results: Sequence[PlasticityResult]) -> str:
    """The results as one table per (n, rate), with each row's ratio to the forward product."""
    lines = []
    for n, rate in dict.fromkeys((r.n, r.rate) for r in results):
        group = [r for r in results if (r.n, r.rate) == (n, rate)]
        fwd = next((r.us for r in group if r.label.startswith('forward product')), None)
        lines.append(f'n = {n:,} ({n * min(n, CONN_PER_ROW):,} synapses), {rate:.1%} events')
        for r in group:
            us = '—' if r.us is None else f'{r.us:10,.1f} µs'
            ratio = f'{r.us / fwd:6.2f}x fwd' if r.us is not None and fwd else ''
            lines.append(f'  {r.label:<52} {us:>14} {ratio:>11}  {r.note}'.rstrip())
        lines.append('')
    return '\n'.join(lines)
