"""What ``eventjax bench`` measures: one :class:`Case` per family and operator.

Every case builds a random square network of ``n`` neurons with
``min(n, CONN_PER_ROW)`` distinct connections per row (normal float32
weights) and a vector (or a batch) of events with ``EVENT_RATE`` of them
active, then returns the eventjax call, the dense ``jax.numpy`` product of
the same matrix (the "vs dense" baseline; none above ``DENSE_MAX_N``), the
bytes the kernel must move (:mod:`~benchmarks.floor`), and the same
product in brainevent and ``scipy.sparse`` (:mod:`~benchmarks.anchors`).
Only the public API of eventjax is used, so this runs from an install.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import attrs
import jax
import jax.numpy as jnp
import numpy as np

import eventjax as ej
from benchmarks.anchors import BraineventCall, ScipyCall
from benchmarks.delay_arrays import delay_problem
from benchmarks.events_arrays import events_problem
from benchmarks.floor import dense_bytes, sparse_bytes

__all__ = ['BATCH', 'CASES', 'CONN_PER_ROW', 'CSR_BASELINE_MAX_N', 'DELAY_SCAN', 'DELAY_SIZES', 'DELAY_STEPS',
           'DELAY_T', 'DENSE_MAX_N', 'EVENTS_FORMS', 'EVENTS_RATES', 'EVENTS_SIZES', 'EVENT_RATE', 'FAMILIES',
           'JITC_CONN',
           'JITC_EVENT_RATE', 'JITC_SIZES', 'Case', 'Problem', 'cases_for', 'default_sizes']

CONN_PER_ROW = 100  # connections per row (all of them below n = 100)
EVENT_RATE = 0.02   # fraction of neurons that fire in one step
BATCH = 16          # columns of the event matrix in the *mm cases
# A dense float32 matrix above this is more than 1.6 GB: the dense family stops there, and the
# other families lose their dense baseline.
DENSE_MAX_N = 20_000
# The JITC family is about networks too big to store: n reaches 10**6; its baseline is a CSR
# matrix of the same statistics.
JITC_CONN = 100
JITC_EVENT_RATE = 0.05
JITC_SIZES = (10_000, 100_000, 1_000_000)
CSR_BASELINE_MAX_N = 1_000_000  # 10**8 stored connections, about 0.8 GB
# The delay family: delays uniform in these steps (the ring holds the last + 1), timed as a model runs
# it: a lax.scan of DELAY_SCAN steps from t = DELAY_T with the ring as its carry (updated in place), a new
# spike vector each step, compared with the same scan of the undelayed event product (binary_csrmv T)
# added into a carried input vector, on the same backend; both report time per step. Two rows: the
# operator on the raw arrays, and DelayedCSR.deliver (the precomputed layout), as a model runs it.
DELAY_STEPS = (1, 20)
DELAY_T = 7
DELAY_SCAN = 20
DELAY_SIZES = (4_000, 100_000)
# The events family: one spike vector in several forms, at a high and a cortex-like low rate.
EVENTS_SIZES = (4_000, 100_000)
EVENTS_RATES = (0.02, 0.001)
EVENTS_FORMS = (('bool', 'binary_csrmv'), ('index-list', 'binary_csrmv_indexed'), ('bit-packed', 'binary_csrmv_packed'))


@attrs.frozen
class Problem:
    """One benchmark instance: ``call(*args, backend=...)`` and what it is compared with.

    The baseline is the dense ``jax.numpy`` product ``dense(*dense_args)``,
    or, when ``baseline == 'CSR'``, ``dense(*dense_args, backend=...)`` on
    the same backend (``dense`` is None where the baseline is too big).
    ``floor_bytes`` is what the kernel must move (None: not memory-bound);
    ``brainevent`` and ``scipy`` the same product in those packages (None:
    no counterpart). ``steps``: how many steps one call runs (a scan); the
    times reported are per step.
    """

    args: tuple
    call: Callable
    dense_args: tuple
    dense: Callable | None
    conn_per_row: int
    baseline: str = 'dense jnp'
    floor_bytes: int | None = None
    brainevent: BraineventCall | None = None
    scipy: ScipyCall | None = None
    steps: int = 1


@attrs.frozen
class Case:
    """An operator of a family, and how to build an instance of size ``n``.

    Attributes:
        family: ``'dense'``, ``'csr'``, ``'fcn'``, ``'jitc'``, ``'delay'``, ``'events'`` or ``'dt2t'``.
        operator: label in the table, e.g. ``'binary_csrmv T'``.
        function: the public function's name in ``eventjax``.
        build: ``build(n, rng, rate=...) -> Problem``; ``rate``, the fraction
            of neurons with an event, defaults to the family's.
        max_n: the largest ``n`` it is built for (None: no limit).
        primitive: the primitive's name where it is not ``function``'s.
    """

    family: str
    operator: str
    function: str
    build: Callable[..., Problem]
    max_n: int | None = None
    primitive: str | None = None

    def available(self) -> bool:
        return hasattr(ej, self.function)

    def backends(self, platform: str = 'cpu') -> tuple[str, ...]:
        """The backends the operator's primitive has on ``platform``."""
        return tuple(ej.primitives().get(self.primitive or self.function, {}).get(platform, ()))


def _events(rng, n, batch=None, rate=EVENT_RATE) -> np.ndarray:
    return rng.random((n,) if batch is None else (n, batch)) < rate


def _distinct_columns(rng, n, k) -> np.ndarray:
    """``(n, k)`` sorted column indices, ``k`` distinct ones per row drawn uniformly."""
    if n <= 2000:
        return np.sort(np.argsort(rng.random((n, n)), axis=1)[:, :k], axis=1)
    # Draw with replacement and redraw the rows with a repeat: uniform over k-subsets, and
    # vectorised (10**5 rows in well under a second, where a rng.choice per row takes seconds).
    idx = np.sort(rng.integers(0, n, size=(n, k)), axis=1)
    bad = np.flatnonzero((np.diff(idx, axis=1) == 0).any(axis=1))
    while bad.size:
        redrawn = np.sort(rng.integers(0, n, size=(bad.size, k)), axis=1)
        idx[bad] = redrawn
        bad = bad[(np.diff(redrawn, axis=1) == 0).any(axis=1)]
    return idx


def _fcn_matrix(rng, n):
    """Column indices ``(n, k)`` (k distinct per row, sorted), weights ``(n, k)`` and the dense matrix.

    The dense matrix is None above ``DENSE_MAX_N``.
    """
    k = min(n, CONN_PER_ROW)
    idx = _distinct_columns(rng, n, k).astype(np.int32)
    w = rng.normal(size=(n, k)).astype(np.float32)
    dense = None
    if n <= DENSE_MAX_N:
        dense = np.zeros((n, n), np.float32)
        np.put_along_axis(dense, idx, w, axis=1)
    return idx, w, dense


def _dense_events(transpose):
    if transpose:
        # (s.T @ w).T, not w.T @ s: XLA:CPU runs the latter ~40x slower at n=4000.
        return lambda w, s: (s.astype(w.dtype).T @ w).T
    return lambda w, s: w @ s.astype(w.dtype)


def _dense_baseline(dense, x, transpose):
    """``(dense_args, dense)`` of the baseline, or ``((), None)`` above ``DENSE_MAX_N``."""
    if dense is None:
        return (), None
    return (jnp.asarray(dense), x), _dense_events(transpose)


def _scipy(idx, w, x, transpose):
    n, k = idx.shape
    return ScipyCall(w.ravel(), idx.ravel(), np.arange(0, n * k + 1, k, dtype=np.int32), (n, n),
                     np.asarray(x, np.float32), transpose)


def _dense_case(fn, transpose, batch=None):
    def build(n, rng, rate=EVENT_RATE):
        idx, w, dense = _fcn_matrix(rng, n)
        events = _events(rng, n, batch, rate)
        W, s = jnp.asarray(dense), jnp.asarray(events)
        call = lambda W, s, backend: getattr(ej, fn)(W, s, transpose=transpose, backend=backend)
        be = BraineventCall(fn, (W, s), {'transpose': transpose})
        return Problem((W, s), call, (W, s), _dense_events(transpose), idx.shape[1],
                       floor_bytes=dense_bytes(events, transpose=transpose), brainevent=be,
                       scipy=_scipy(idx, w, events, transpose))
    return build


def _csr_case(fn, transpose, batch=None, events=True):
    def build(n, rng, rate=EVENT_RATE):
        idx, w, dense = _fcn_matrix(rng, n)
        k = idx.shape[1]
        indptr = jnp.arange(0, n * k + 1, k, dtype=jnp.int32)
        xs = _events(rng, n, batch, rate) if events else rng.normal(size=(n,)).astype(np.float32)
        x = jnp.asarray(xs)
        args = (jnp.asarray(w.ravel()), jnp.asarray(idx.ravel()), indptr, x)
        call = lambda d, i, p, x, backend: getattr(ej, fn)(d, i, p, x, shape=(n, n), transpose=transpose,
                                                          backend=backend)
        be = BraineventCall(fn, args, {'shape': (n, n), 'transpose': transpose}, workspace=events)
        return Problem(args, call, *_dense_baseline(dense, x, transpose), k,
                       floor_bytes=sparse_bytes(idx, xs, transpose=transpose, event=events), brainevent=be,
                       scipy=_scipy(idx, w, xs, transpose))
    return build


def _fcn_case(fn, transpose, events=True):
    def build(n, rng, rate=EVENT_RATE):
        idx, w, dense = _fcn_matrix(rng, n)
        xs = _events(rng, n, rate=rate) if events else rng.normal(size=(n,)).astype(np.float32)
        x = jnp.asarray(xs)
        args = (jnp.asarray(w), jnp.asarray(idx), x)
        call = lambda w, i, x, backend: getattr(ej, fn)(w, i, x, shape=(n, n), transpose=transpose, backend=backend)
        # brainevent's float fcnmv is plain jax.numpy, without a backend keyword.
        be = BraineventCall(fn, args, {'shape': (n, n), 'transpose': transpose}, backends=events)
        return Problem(args, call, *_dense_baseline(dense, x, transpose), idx.shape[1],
                       floor_bytes=sparse_bytes(idx, xs, transpose=transpose, event=events, csr=False),
                       brainevent=be, scipy=_scipy(idx, w, xs, transpose))
    return build


def _random_csr(rng, n, k):
    """A CSR matrix with ``k`` connections per row (random columns, normal weights), as jnp arrays."""
    indices = rng.integers(0, n, size=n * k, dtype=np.int32)
    data = rng.standard_normal(size=n * k, dtype=np.float32)
    return jnp.asarray(data), jnp.asarray(indices), jnp.arange(0, n * k + 1, k, dtype=jnp.int32)


def _jitc_case(fn, transpose, events=True):
    """A JITC matrix (``JITC_CONN`` per row, normal weights), never stored; baseline: CSR of the same statistics.

    No memory floor: the matrix is generated, not read.
    """
    csr_fn = fn.replace('jitc', 'csr')

    def build(n, rng, rate=JITC_EVENT_RATE):
        prob = min(1.0, JITC_CONN / n)
        weights = jnp.asarray([0.0, 1.0], jnp.float32)
        x = jnp.asarray(_events(rng, n, rate=rate) if events else rng.normal(size=(n,)).astype(np.float32))
        call = lambda w, x, backend: getattr(ej, fn)((w[0], w[1]), x, seed=0, prob=prob, shape=(n, n),
                                                      law='normal', transpose=transpose, backend=backend)
        k = int(round(ej.JITCMatrix(1.0, prob=prob, seed=0, shape=(n, n)).nnz / n))
        if n > CSR_BASELINE_MAX_N:
            return Problem((weights, x), call, (), None, k, baseline='CSR')
        csr = lambda d, i, p, x, backend: getattr(ej, csr_fn)(d, i, p, x, shape=(n, n), transpose=transpose,
                                                               backend=backend)
        return Problem((weights, x), call, (*_random_csr(rng, n, k), x), csr, k, baseline='CSR')
    return build


def _delay_case(n, rng, rate=EVENT_RATE, *, layout=False):
    """``DELAY_SCAN`` steps of delayed delivery in a scan; baseline: the same scan of the undelayed product.

    The ring starts at zero inside the call (one fill per scan, as the
    baseline zeroes its vector) and is the scan's carry, so the delivery
    updates it in place; each step delivers a fresh spike vector at
    ``t = DELAY_T + step``. Summed over the ring, the result is the
    baseline's: every delay lies within the ring. ``layout``: the delivery
    is ``DelayedCSR.deliver`` (the layout built once, outside the timed
    call: as a model runs it), else ``csr_delay_deliver`` on the raw arrays.
    """
    ring, _, data, indices, indptr, delays = delay_problem(n, rng, rate, k=min(n, CONN_PER_ROW), steps=DELAY_STEPS)
    spikes = jnp.asarray(rng.random((DELAY_SCAN, n)) < rate)
    steps = jnp.arange(DELAY_SCAN, dtype=jnp.int32) + DELAY_T
    undelayed = tuple(jnp.asarray(a) for a in (data, indices, indptr)) + (spikes,)

    def scan(deliver, s):
        def step(r, x):
            t, sp = x
            return deliver(r, sp, t), None
        return jax.lax.scan(step, jnp.zeros(ring.shape, ring.dtype), (steps, s))[0]

    if layout:
        args = (ej.DelayedCSR.from_csr_arrays(data, indices, indptr, delays, shape=(n, n)), spikes)
        call = lambda W, s, backend: scan(lambda r, sp, t: W.deliver(r, sp, t, backend=backend), s)
    else:
        args = (*undelayed[:3], jnp.asarray(delays), spikes)
        call = lambda d, i, p, dl, s, backend: scan(
            lambda r, sp, t: ej.csr_delay_deliver(r, sp, d, i, p, dl, t, shape=(n, n), backend=backend,
                                                  validate=False), s)

    def base(d, i, p, s, backend):
        def step(acc, sp):
            return acc + ej.binary_csrmv(d, i, p, sp, shape=(n, n), transpose=True, backend=backend,
                                         validate=False), None
        return jax.lax.scan(step, jnp.zeros(n, jnp.float32), s)[0]

    return Problem(args, call, undelayed, base, min(n, CONN_PER_ROW), baseline='binary_csrmv T', steps=DELAY_SCAN)


def _events_case(form: str, rate: float):
    """``events @ A`` at a fixed event ``rate`` (the case's own: the family compares rates), CSR with 100 per row.

    ``form`` is ``'bool'`` (``binary_csrmv``), ``'index-list'``
    (``binary_csrmv_indexed`` on a list compacted beforehand, with twice the
    expected events as its capacity) or ``'bit-packed'``
    (``binary_csrmv_packed`` on the packed words). Baseline: the dense
    product for the bool form, the bool product on the same backend for the
    others. brainevent's ``binary_csrmv`` on the bool vector is the anchor of every form.
    """
    def build(n, rng, rate_given=None, **_):
        k = min(n, CONN_PER_ROW)
        data, indices, indptr, spikes = events_problem(n, rng, rate, k=k)
        structure = tuple(jnp.asarray(a) for a in (data, indices, indptr))
        s = jnp.asarray(spikes)
        bool_call = lambda d, i, p, x, backend: ej.binary_csrmv(d, i, p, x, shape=(n, n), transpose=True,
                                                                backend=backend, validate=False)
        be = BraineventCall('binary_csrmv', (*structure, s), {'shape': (n, n), 'transpose': True}, workspace=True)
        if form == 'bool':
            dense = None
            if n <= DENSE_MAX_N:
                dense = np.zeros((n, n), np.float32)
                np.add.at(dense, (np.repeat(np.arange(n), k), indices), data)
            return Problem((*structure, s), bool_call, *_dense_baseline(dense, s, True), k, brainevent=be,
                           floor_bytes=sparse_bytes(indices.reshape(n, k), spikes, transpose=True, event=True),
                           scipy=_scipy(indices.reshape(n, k), data.reshape(n, k), spikes, True))
        if form == 'index-list':
            ids, count = ej.compact_events(spikes, max(8, int(2 * rate * n)))
            call = lambda d, i, p, ids, count, backend: ej.binary_csrmv_indexed(
                d, i, p, None, (ids, count), shape=(n, n), transpose=True, backend=backend, validate=False)
            operands = (*structure, ids, count)
        else:
            call = lambda d, i, p, w, backend: ej.binary_csrmv_packed(d, i, p, w, shape=(n, n), transpose=True,
                                                                      backend=backend, validate=False)
            operands = (*structure, ej.bitpack(spikes))
        return Problem(operands, call, (*structure, s), bool_call, k, baseline='CSR', brainevent=be)
    return build


def _dt2t_case(fn, transpose, events=False):
    """One value per stored connection (100 per row): ``fn`` (``csrmv_dt2t`` or ``fcnmv_dt2t``) against brainevent's.

    ``y`` is a normal float vector, or with ``events`` a bool vector at
    ``EVENT_RATE`` (the numba kernel reads the weights of its event rows
    only). Baseline: the same values from ``jax.numpy`` (``w * y[rows]``, a
    gather), on each backend's row. brainevent has both names with the same
    arguments and ``transpose`` convention.
    """
    def build(n, rng, rate=EVENT_RATE):
        k = min(n, CONN_PER_ROW)
        data, indices, indptr, spikes = events_problem(n, rng, rate, k=k)
        y = jnp.asarray(spikes if events else rng.standard_normal(n, dtype=np.float32))
        w, idx = jnp.asarray(data), jnp.asarray(indices)
        if fn == 'fcnmv_dt2t':
            w, idx = w.reshape(n, k), idx.reshape(n, k)
            args = (w, idx, y)
            call = lambda w, i, y, backend: ej.fcnmv_dt2t(w, i, y, shape=(n, n), transpose=transpose,
                                                          backend=backend, validate=False)
            base = lambda w, i, y, backend: w * (y[i] if transpose else y[:, None]).astype(w.dtype)
        else:
            args = (y, w, idx, jnp.asarray(indptr))
            call = lambda y, w, i, p, backend: ej.csrmv_dt2t(y, w, i, p, shape=(n, n), transpose=transpose,
                                                             backend=backend, validate=False)
            rows = jnp.asarray(np.repeat(np.arange(n, dtype=np.int32), k))
            base = lambda y, w, i, p, backend: w * y[i if transpose else rows].astype(w.dtype)
        # brainevent wants y in w's dtype (events as 0/1: the same values); its fcnmv_dt2t is jax.numpy (no backend).
        y_be = y.astype(w.dtype)
        be_args = (w, idx, y_be) if fn == 'fcnmv_dt2t' else (y_be, *args[1:])
        be = BraineventCall(fn, be_args, {'shape': (n, n), 'transpose': transpose}, backends=fn != 'fcnmv_dt2t')
        return Problem(args, call, args, base, k, baseline='jnp gather', brainevent=be)
    return build


def default_sizes(families, sizes):
    """The family's own sizes when one family with its own runs alone (JITC, delay, events), else ``sizes``."""
    own = {'jitc': JITC_SIZES, 'delay': DELAY_SIZES, 'events': EVENTS_SIZES, 'dt2t': EVENTS_SIZES}
    families = set(families)
    if len(families) == 1 and (family := next(iter(families))) in own:
        return own[family]
    return sizes


CASES = (
    Case('dense', 'binary_densemv T', 'binary_densemv', _dense_case('binary_densemv', True), DENSE_MAX_N),
    Case('dense', 'binary_densemv', 'binary_densemv', _dense_case('binary_densemv', False), DENSE_MAX_N),
    Case('dense', f'binary_densemm T (x{BATCH})', 'binary_densemm', _dense_case('binary_densemm', True, BATCH),
         DENSE_MAX_N),
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
    Case('delay', f'csr_delay_deliver (d {DELAY_STEPS[0]}-{DELAY_STEPS[1]}, scan step)', 'csr_delay_deliver',
         _delay_case),
    # As a model runs it: W = CSR(...).with_delays(...), then W.deliver each step (the layout's own primitive).
    Case('delay', f'DelayedCSR.deliver (layout, d {DELAY_STEPS[0]}-{DELAY_STEPS[1]}, scan step)',
         'csr_delay_deliver_layout', functools.partial(_delay_case, layout=True),
         primitive='csr_delay_deliver_layout'),
    *(Case('events', f'{form} {fn} T {rate:.1%}', fn, _events_case(form, rate))
      for rate in EVENTS_RATES
      for form, fn in EVENTS_FORMS),
    # Every per-synapse product runs on one primitive, csr_dt2t.
    Case('dt2t', 'csrmv_dt2t', 'csrmv_dt2t', _dt2t_case('csrmv_dt2t', False), primitive='csr_dt2t'),
    Case('dt2t', 'csrmv_dt2t T', 'csrmv_dt2t', _dt2t_case('csrmv_dt2t', True), primitive='csr_dt2t'),
    Case('dt2t', f'csrmv_dt2t (events {EVENT_RATE:.0%})', 'csrmv_dt2t', _dt2t_case('csrmv_dt2t', False, events=True),
         primitive='csr_dt2t'),
    Case('dt2t', 'fcnmv_dt2t', 'fcnmv_dt2t', _dt2t_case('fcnmv_dt2t', False), primitive='csr_dt2t'),
    Case('dt2t', 'fcnmv_dt2t T', 'fcnmv_dt2t', _dt2t_case('fcnmv_dt2t', True), primitive='csr_dt2t'),
)

# The products `eventjax bench` times by default; the per-synapse family (dt2t) runs when named.
FAMILIES = ('dense', 'csr', 'fcn', 'jitc', 'delay', 'events')


def cases_for(families) -> list[Case]:
    """The cases of the given families, in table order."""
    return [c for c in CASES if c.family in families]
