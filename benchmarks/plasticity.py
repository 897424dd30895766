"""``eventjax bench --family plasticity``: µs per weight update on presynaptic events, in place.

The problem (as the products'): ``n`` neurons, ``CONN_PER_ROW`` stored
connections per row at random columns, float32 weights in ``[0, 1)``, a
postsynaptic trace, events on a fraction ``rate`` of the rows; the update is
``W[i, j] += trace[j]`` on the stored entries of the rows with an event,
bounded to ``[0, 1]`` (``csr_on_pre``). Every update row is timed as a loop
feeding its result back (``w = f(w)``), which is what a simulation does:

- ``eventjax <backend>, donated``: ``jax.jit(..., donate_argnums=0)``; the
  note counts the copies of the weights in the compiled call (0: in place);
- ``eventjax <backend>, not donated``: XLA copies the weights first;
- ``in lax.scan (per step)``: ``SCAN_STEPS`` updates in one jitted, donated
  scan with the weights in the carry and new events every step (a
  simulation loop that learns), divided by the steps; the note counts the
  copies of the weights in the compiled loop;
- ``hand-written JAX``: ``clip(w + where(pre[rows], trace[indices], 0))``, jitted, donated;
- ``brainevent <version> <backend>``: ``update_csr_on_binary_pre`` where
  brainevent imports, checked against eventjax's result first;
- ``one copy of the weights``: ``w * 1.0``;
- ``forward product``: ``binary_csrmv(..., transpose=True)`` of the same
  events on the default backend (the ratio column), and on each backend
  timed (each update's own yardstick: a backend's fixed cost per call,
  warp's launch or XLA:CPU's per-op cost for ``jax``, is in both);
- ``heavy-tailed rows, <backend>``: the donated update of another matrix,
  rows of ``HUB_SHORT`` connections and one row of ``HUB_ROW`` that never
  fires, against its ``even-rows twin, <backend>`` (the same synapses
  spread evenly, the same events): the cost of one long row to all others;
- ``forward product in lax.scan (per step)``: the same product in the
  same kind of jitted scan as the update's, with the same new events every
  step (its results summed in the carry), on each backend: the yardstick
  of the scan step. A repeated product of the same events finds their rows
  in the caches; a simulation step with new events does not, for the
  product as for the update.

All rows of one size and rate are timed interleaved
(:func:`~benchmarks.timing.interleaved_us`), so their ratios hold
on a shared machine. The structure is passed as jit arguments, as in a
simulation that takes the network as input. :func:`format_plasticity` ends
with the targets: every donated update at most 2x its backend's forward
product of the same events, every scan step at most 2x its backend's
forward product in the same kind of scan, numba at most 0.5x brainevent's
fastest CPU backend at 4,000 neurons, a donated update at 100,000
neurons and 0.1% events under 10% of one copy of the weights, and every
heavy-tailed update at most 2x its even-rows twin.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

import attrs
import jax
import jax.numpy as jnp
import numpy as np

import eventjax as ej
from benchmarks.anchors import BRAINEVENT_BACKENDS, import_optional
from benchmarks.timing import interleaved_us

__all__ = ['PLASTICITY_RATES', 'PLASTICITY_SIZES', 'SCAN_STEPS', 'PlasticityResult', 'format_plasticity',
           'plasticity_targets', 'run_plasticity']

PLASTICITY_SIZES = (4_000, 10_000, 100_000)
PLASTICITY_RATES = (0.02, 0.001)
CONN_PER_ROW = 100
SCAN_STEPS = 20
FORWARD = 'forward product (binary_csrmv T, default backend)'
SCAN = 'in lax.scan (per step)'
COPY = 'one copy of the weights (w * 1.0)'
HUB_ROW, HUB_SHORT = 20_000, 10
HEAVY = f'heavy-tailed rows (one of {HUB_ROW:,}, silent, among rows of {HUB_SHORT})'
TWIN = 'even-rows twin (the same synapses and events)'


@attrs.frozen
class PlasticityResult:
    """One timed row: ``us`` per update of ``n`` neurons at event ``rate``; ``note`` (copies, errors)."""

    n: int
    rate: float
    label: str
    us: float | None
    note: str = ''


def _problem(n: int, rate: float, rng):
    k = min(n, CONN_PER_ROW)
    indices = jnp.asarray(rng.integers(0, n, n * k, dtype=np.int32))
    indptr = jnp.arange(0, n * k + 1, k, dtype=jnp.int32)
    spikes = jnp.asarray(rng.random(n) < rate)
    trace = jnp.asarray(rng.standard_normal(n).astype(np.float32) * 0.01)
    w = rng.random(n * k, dtype=np.float32)
    return w, indices, indptr, spikes, trace


def weight_copies(hlo: str, size: int) -> int:
    """How many lines of compiled HLO copy a float32 array of ``size`` entries (the weights)."""
    return sum(1 for line in hlo.splitlines() if ' copy(' in line and f'f32[{size}]' in line)


def _chain(f: Callable, w0, rest: tuple) -> Callable[[], object]:
    """A no-argument call ``w = f(w, *rest)``: the result fed back, so a donated buffer is always fresh."""
    box = [jnp.asarray(w0)]

    def call():
        box[0] = f(box[0], *rest)
        return box[0]
    return call


@attrs.frozen
class _Row:
    label: str
    call: Callable[[], object]
    per_call: int = 1
    note: str = ''


def _rows(n: int, rate: float, backends: Sequence[str], compare: bool, budget_s: float, rng):
    w0, indices, indptr, spikes, trace = _problem(n, rate, rng)
    shape, k = (n, n), min(n, CONN_PER_ROW)
    rest = (indices, indptr, spikes, trace)
    # New events every step of the scan, so nothing about them is loop-invariant.
    scan_spikes = jnp.asarray(rng.random((SCAN_STEPS, n)) < rate)
    rows: list[_Row] = []

    def update(backend):
        return lambda w, i, p, s, t: ej.csr_on_pre(w, i, p, s, t, 0.0, 1.0, shape=shape, backend=backend,
                                                   max_row_length=k)

    def copies_note(jitted, *args, where):
        copies = weight_copies(jitted.lower(jnp.asarray(w0), *args).compile().as_text(), w0.size)
        return f'copies of W {where}: {copies}'

    for backend in backends:
        f = update(backend)
        donated = jax.jit(f, donate_argnums=0)
        rows.append(_Row(f'eventjax {backend}, donated', _chain(donated, w0, rest),
                         note=copies_note(donated, *rest, where='in the call')))
        rows.append(_Row(f'eventjax {backend}, not donated', _chain(jax.jit(f), w0, rest)))

        def steps(w, i, p, spikes, t, f=f):
            return jax.lax.scan(lambda w, s: (f(w, i, p, s, t), None), w, spikes)[0]

        scan = jax.jit(steps, donate_argnums=0)
        scan_rest = (indices, indptr, scan_spikes, trace)
        rows.append(_Row(f'eventjax {backend}, {SCAN}', _chain(scan, w0, scan_rest), SCAN_STEPS,
                         copies_note(scan, *scan_rest, where='in the compiled loop')))

    rows_of = jnp.asarray(np.repeat(np.arange(n, dtype=np.int32), k))

    def by_hand(w, i, p, s, t):
        return jnp.clip(w + jnp.where(s[rows_of], t[i], 0.0), 0.0, 1.0)

    rows.append(_Row('hand-written JAX (where, clip), donated', _chain(jax.jit(by_hand, donate_argnums=0), w0, rest)))
    w_fixed = jnp.asarray(w0)
    copy = jax.jit(lambda w: w * 1.0)
    rows.append(_Row(COPY, lambda: copy(w_fixed)))
    for backend in (None, *backends):
        forward = jax.jit(functools.partial(_forward, shape=shape, backend=backend))
        rows.append(_Row(FORWARD if backend is None else forward_label(backend),
                         functools.partial(forward, w_fixed, indices, indptr, spikes)))
    for backend in backends:
        forward_steps = jax.jit(functools.partial(_forward_steps, shape=shape, backend=backend))
        rows.append(_Row(forward_label(backend, scan=True), functools.partial(
            forward_steps, w_fixed, indices, indptr, scan_spikes, jnp.zeros(n, w_fixed.dtype)), SCAN_STEPS))
    rows += _heavy_tailed_rows(n, rate, backends, trace, rng)
    failed = []
    if compare:
        rows += _brainevent_rows(n, rate, backends, w0, rest, shape, update, failed)
    times = interleaved_us([r.call for r in rows], budget_s=budget_s, max_calls=100)
    return [PlasticityResult(n, rate, r.label, us / r.per_call, r.note) for r, us in zip(rows, times)] + failed


def heavy_label(backend: str, twin: bool = False) -> str:
    """The row of the heavy-tailed update on ``backend``, or of its even-rows twin."""
    return f'{TWIN if twin else HEAVY}, {backend}, donated'


def _heavy_tailed_rows(n, rate, backends, trace, rng):
    """Donated updates of rows of ``HUB_SHORT`` and one silent row of ``HUB_ROW``, and of the same synapses evenly."""
    hub = n // 2
    lens = np.full(n, HUB_SHORT)
    lens[hub] = HUB_ROW
    total = int(lens.sum())
    even = np.full(n, total // n)
    even[:total - int(even.sum())] += 1
    spikes = rng.random(n) < rate
    spikes[hub] = False  # the long row never fires: its cost is what it adds to the other rows
    rows = []
    for twin, lengths in ((False, lens), (True, even)):
        indptr = jnp.asarray(np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32))
        indices = jnp.asarray(rng.integers(0, n, total, dtype=np.int32))
        w0 = rng.random(total, dtype=np.float32)
        rest = (indices, indptr, jnp.asarray(spikes), trace)
        for backend in backends:
            f = jax.jit(lambda w, i, p, s, t, backend=backend, k=int(lengths.max()): ej.csr_on_pre(
                w, i, p, s, t, 0.0, 1.0, shape=(n, n), backend=backend, max_row_length=k), donate_argnums=0)
            rows.append(_Row(heavy_label(backend, twin), _chain(f, w0, rest)))
    return rows


def _forward(w, i, p, s, *, shape, backend):
    return ej.binary_csrmv(w, i, p, s, shape=shape, transpose=True, backend=backend)


def _forward_steps(w, i, p, spikes, total, *, shape, backend):
    """The forward product of every step's events in a ``lax.scan``, summed in the carry."""
    step = lambda total, s: (total + _forward(w, i, p, s, shape=shape, backend=backend), None)
    return jax.lax.scan(step, total, spikes)[0]


def forward_label(backend: str, scan: bool = False) -> str:
    """The row of the forward product on ``backend`` (``scan``: per step of a scan): each backend's own yardstick."""
    return f'forward product (binary_csrmv T, {backend}){", " + SCAN if scan else ""}'


def _brainevent_rows(n, rate, backends, w0, rest, shape, update, failed):
    be = import_optional('brainevent')
    if be is None or not hasattr(be, 'update_csr_on_binary_pre'):
        failed.append(PlasticityResult(n, rate, 'brainevent', None, 'not installed (pip install "eventjax[compare]")'))
        return []
    want = np.asarray(jax.jit(update(None))(jnp.asarray(w0), *rest))
    rows = []
    for backend in dict.fromkeys(BRAINEVENT_BACKENDS[b] for b in backends if b in BRAINEVENT_BACKENDS):
        label = f'brainevent {be.__version__} {backend}'

        def f(w, i, p, s, t, backend=backend):
            return be.update_csr_on_binary_pre(w, i, p, s, t, 0.0, 1.0, shape=shape, backend=backend)
        try:
            jitted = jax.jit(f)
            got = np.asarray(jitted(jnp.asarray(w0), *rest))
        except Exception as exc:  # a backend brainevent lacks here costs a row, not the run
            failed.append(PlasticityResult(n, rate, label, None, f'failed: {type(exc).__name__}'))
            continue
        if not np.allclose(got, want, rtol=1e-5, atol=1e-6):
            failed.append(PlasticityResult(n, rate, label, None, "dropped: its weights differ from eventjax's"))
            continue
        rows.append(_Row(label, _chain(jitted, w0, rest)))
    return rows


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
    """The results as one table per (n, rate), with each row's ratio to the forward product, then the targets."""
    lines = []
    for n, rate in dict.fromkeys((r.n, r.rate) for r in results):
        group = [r for r in results if (r.n, r.rate) == (n, rate)]
        fwd = _us(group, FORWARD)
        lines.append(f'n = {n:,} ({n * min(n, CONN_PER_ROW):,} synapses), {rate:.1%} events')
        for r in group:
            us = '—' if r.us is None else f'{r.us:10,.1f} µs'
            ratio = f'{r.us / fwd:6.2f}x fwd' if r.us is not None and fwd else ''
            lines.append(f'  {r.label:<52} {us:>14} {ratio:>11}  {r.note}'.rstrip())
        lines.append('')
    targets = plasticity_targets(results)
    if targets:
        lines.append('targets (ratios within one table, so they hold under load):')
        lines += [f'  [{"met" if ok else "MISSED"}] {text}' for text, ok in targets]
    return '\n'.join(lines)


def _us(group, label):
    return next((r.us for r in group if r.label == label and r.us is not None), None)


def plasticity_targets(results: Sequence[PlasticityResult]) -> list[tuple[str, bool]]:
    """``(description, met)`` for each target the results can judge.

    An update is judged against the forward product of the same step on its
    own backend (a backend's fixed cost per call is in both): a donated
    update against the product of the same events, a scan step against the
    product in the same kind of scan with the same new events every step.

    Example:
        >>> rows = [PlasticityResult(100_000, 0.001, 'eventjax numba, donated', 50.0),
        ...         PlasticityResult(100_000, 0.001, COPY, 10_000.0)]
        >>> plasticity_targets(rows)[0]
        ('n = 100,000, 0.1%: eventjax numba, donated = 0.5% of one copy of the weights (< 10%)', True)
    """
    out = []
    for n, rate in dict.fromkeys((r.n, r.rate) for r in results):
        group = [r for r in results if (r.n, r.rate) == (n, rate)]
        copy = _us(group, COPY)
        where = f'n = {n:,}, {rate:.1%}'
        for r in group:
            if r.us is None or not r.label.startswith('eventjax'):
                continue
            in_scan = SCAN in r.label
            if in_scan or ('donated' in r.label and 'not donated' not in r.label):
                backend = r.label.split()[1].rstrip(',')
                own = _us(group, forward_label(backend, scan=in_scan))
                if own:
                    what = 'in the same kind of scan' if in_scan else 'of the same events'
                    out.append((f'{where}: {r.label} = {r.us / own:.2f}x its backend\'s forward product {what} '
                                f'(<= 2x)', r.us <= 2 * own))
            if copy and n >= 100_000 and rate <= 0.001 and r.label.endswith(', donated'):
                out.append((f'{where}: {r.label} = {r.us / copy:.1%} of one copy of the weights (< 10%)',
                            r.us < 0.1 * copy))
        for r in group:
            if r.us is not None and r.label.startswith(HEAVY):
                twin = _us(group, heavy_label(r.label.split(', ')[-2], twin=True))
                if twin:
                    out.append((f'{where}: {r.label} = {r.us / twin:.2f}x its even-rows twin (<= 2x)',
                                r.us <= 2 * twin))
        numba = _us(group, 'eventjax numba, donated')
        be = [r for r in group if r.label.startswith('brainevent') and r.us is not None]
        if n == 4_000 and numba and be:
            best = min(be, key=lambda r: r.us)
            out.append((f'{where}: numba donated = {numba / best.us:.2f}x {best.label} (<= 0.5x)',
                        numba <= 0.5 * best.us))
    return out
