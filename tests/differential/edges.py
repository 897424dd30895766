"""Drawn problems at the edges of the contract, each checked against a NumPy oracle on every backend.

Four kinds of draw, each a name of ``KINDS``:

- ``float16_sums``: float16 weights (events bool, float16 or bfloat16)
  whose sums onto one target pass 2,048, through every scatter (CSR, FCN,
  JITC, delivery into a float16 ring, graded events): float16 sums
  accumulate in float32, so the result is the float32 sum rounded once.
- ``wide_integers``: every integer argument (delays, the step ``t``,
  ``count``, ``ids``, ``rows``) as a Python int, a NumPy int64 scalar or
  array, a JAX array or a traced value, with ``jax_enable_x64`` on and off,
  in range, or past int32 by ``2**32`` (where narrowing first would wrap).
- ``bad_structure``: every CSR-taking operator with columns outside
  ``[0, n)`` (negative, past ``n``, past int32 under x64) and entries past
  ``indptr[m]``, unvalidated and traced: such entries give nothing.
- ``tiny_events``: event values ``1e-300``, the float64 and float32
  subnormals, ``-0.0`` and their negatives, with x64 on: ``> 0`` decides,
  after XLA flushes subnormals to zero (so they are not events).

The backends are those each primitive has on the cpu (pallas too, in
interpret mode, inside :func:`pallas_on_cpu`), so pallas runs with x64 on.
"""

# ruff: noqa: B023 - each lambda is called in the loop iteration that defines it

from __future__ import annotations

import contextlib
import importlib

import attrs
import jax
import jax.numpy as jnp
import numpy as np
from hypothesis import strategies as st

import eventjax as ej
from tests.differential.oracle import TOLERANCE

KINDS = ('float16_sums', 'wide_integers', 'bad_structure', 'tiny_events')
WIDE = 2 ** 32
L = 5  # ring steps: 2**32 is not a multiple, so a wrapped step or delay shows

# The primitive behind each public operator, for its backends on the cpu.
_PRIMITIVES = {
    'binary_csrmv': 'binary_csrmv', 'csrmv': 'csrmv', 'binary_csrmm': 'binary_csrmm', 'csrmm': 'csrmm',
    'binary_fcnmv': 'binary_fcnmv', 'fcnmv': 'fcnmv', 'binary_densemv': 'binary_densemv',
    'binary_jitcmv': 'binary_jitcmv', 'csr_delay_deliver': 'csr_delay_deliver', 'graded_csr': 'csr_delay_deliver',
    'csrmv_dt2t': 'csr_dt2t', 'csr_slice_rows': 'csr_slice_rows', 'binary_csrmv_indexed': 'binary_csrmv_indexed',
}
# Pallas kernels registered for the cpu by pallas_on_cpu: the module of each declaration `_<name>`.
_PALLAS = ('csr.binary_csrmv', 'csr.csrmv', 'csr.binary_csrmm', 'csr.csrmm', 'fcn.binary_fcnmv',
           'fcn.fcnmv', 'dense.binary_densemv', 'delay.csr_delay_deliver', 'indexed.binary_csrmv_indexed',
           'indexed.csr_slice_rows', 'dt2t.csr_dt2t')


def backends(op: str) -> tuple[str, ...]:
    """The backends ``op``'s primitive has on the cpu now."""
    return tuple(ej.get_registry()[_PRIMITIVES[op]].available_backends('cpu'))


@contextlib.contextmanager
def pallas_on_cpu():
    """Inside: the pallas kernels of these operators registered for the cpu (interpret mode); after: as before."""
    before = ej.config.snapshot()
    ej.backends.pallas.set_cpu_interpret(True)
    for module in _PALLAS:
        name = module.rsplit('.', 1)[-1]
        getattr(importlib.import_module(f'eventjax.kernels.{module}'), f'_{name}').register('pallas')
    try:
        yield
    finally:
        ej.config.update(lambda snap: attrs.evolve(snap, primitives=before.primitives,
                                                   settings=before.settings))


@st.composite
def problems(draw, kind: str) -> dict:
    """One drawn problem of ``kind`` (see the module docstring): a dict of NumPy operands and choices."""
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    p = {'kind': kind, 'x64': draw(st.booleans()), 'jit': draw(st.booleans())}
    if kind == 'float16_sums':
        p['op'] = draw(st.sampled_from(('binary_csrmv', 'csrmv', 'binary_csrmm', 'binary_fcnmv', 'fcnmv',
                                        'binary_jitcmv', 'csr_delay_deliver', 'graded_csr')))
        p['sources'] = draw(st.sampled_from((2_100, 3_000, 4_200)))
        p['weight'] = draw(st.sampled_from((0.1, 0.25, 1.0, 3.0)))
        p['events'] = draw(st.sampled_from(('bool', 'float16', 'bfloat16')))
        p['rate'] = draw(st.sampled_from((0.9, 1.0)))
        p['seed'] = int(rng.integers(0, 2 ** 31))
    elif kind == 'wide_integers':
        p['arg'] = draw(st.sampled_from(('delays', 't', 'count', 'ids', 'rows')))
        p['form'] = draw(st.sampled_from(('python', 'numpy scalar', 'numpy array', 'jax', 'traced')))
        jax_form = p['form'] in ('jax', 'traced')
        wide = draw(st.booleans()) and (p['x64'] or not jax_form)  # JAX holds int64 only with x64 on
        p['value'] = int(rng.integers(-2, 8)) + (draw(st.sampled_from((WIDE, -WIDE))) if wide else 0)
    elif kind == 'bad_structure':
        p['op'] = draw(st.sampled_from(('csrmv', 'binary_csrmv', 'csrmm', 'csrmv_dt2t', 'csr_slice_rows',
                                        'binary_csrmv_indexed', 'csr_delay_deliver', 'todense')))
        p['transpose'] = draw(st.booleans())
        m, n = draw(st.sampled_from((1, 3, 6))), draw(st.sampled_from((1, 4, 7)))
        nnz = draw(st.sampled_from((1, 5, 12)))
        owned = int(rng.integers(0, nnz + 1))  # entries past indptr[m] belong to no row
        cuts = np.sort(rng.integers(0, owned + 1, m - 1))
        p['indptr'] = np.concatenate([[0], cuts, [owned]]).astype(np.int64)
        cols = rng.integers(-3, n + 3, nnz)
        if p['x64'] and draw(st.booleans()):
            cols[rng.integers(0, nnz)] = WIDE + int(rng.integers(0, n))  # wraps onto a valid column if narrowed
        p['indices'], p['shape'] = cols.astype(np.int64), (m, n)
        p['data'] = (rng.integers(1, 9, nnz) / 4).astype(np.float32)
        p['x'] = rng.standard_normal((m if p['transpose'] else n, 2)).astype(np.float32)
        p['events'] = rng.random(m if p['transpose'] else n) < 0.6
        p['rows'] = rng.integers(-1, m + 1, 3)
    else:
        p['op'] = draw(st.sampled_from(('binary_csrmv', 'binary_fcnmv', 'binary_densemv', 'csr_delay_deliver')))
        p['transpose'] = draw(st.booleans())
        p['dtype'] = draw(st.sampled_from(('float64', 'float32')))
        tiny = (1e-300, 5e-324, 1e-40, 1e-45) if p['dtype'] == 'float64' else (1e-40, 1e-45, 1e-38)
        values = np.array([*tiny, *(-t for t in tiny), 0.0, -0.0, 1.0])
        p['values'] = rng.choice(values, 6).astype(p['dtype'])
        p['x64'] = True
    return p


def check(p: dict) -> list[str]:
    """The disagreements of every backend with the oracle on problem ``p`` (empty: all agree)."""
    x64 = jax.enable_x64(p['x64'])
    with x64:
        return globals()[f'_check_{p["kind"]}'](p)


def _report(bad, what, backend, got, want, rtol, atol=0.0):
    got = np.asarray(got, np.float64)
    want = np.asarray(want, np.float64)
    if got.shape != want.shape or not np.allclose(got, want, rtol=rtol, atol=atol, equal_nan=True):
        bad.append(f'{what} on {backend}: got {np.array2string(got.reshape(-1)[:8])}, '
                   f'oracle {np.array2string(want.reshape(-1)[:8])}')


def _maybe_jit(p, f):
    return jax.jit(f) if p['jit'] else f


def _check_float16_sums(p):
    rng = np.random.default_rng(p['seed'])
    s, op = p['sources'], p['op']
    fires = rng.random(s) < p['rate']
    ev = {'bool': fires, 'float16': fires.astype(np.float16),
          'bfloat16': jnp.asarray(fires, jnp.bfloat16)}[p['events']]
    w = np.float16(p['weight'])
    # Every source onto target 0, and a second target reached by every other source.
    targets = np.stack([np.zeros(s, np.int32), np.where(np.arange(s) % 2 == 0, 1, 0).astype(np.int32)], 1)
    data = np.full(targets.size, w, np.float16)
    indptr = np.arange(0, targets.size + 1, 2, dtype=np.int32)
    per_source = fires.astype(np.float64) * float(w)
    want = np.array([np.sum(per_source) * 2 - np.sum(per_source[::2]), np.sum(per_source[::2])])
    want = want.astype(np.float16)
    bad = []
    for backend in backends(op):
        if op == 'binary_csrmv':
            f = lambda e: ej.binary_csrmv(data, targets.reshape(-1), indptr, e, shape=(s, 2), transpose=True,
                                          backend=backend)
        elif op == 'csrmv':
            f = lambda e: ej.csrmv(data, targets.reshape(-1), indptr, jnp.asarray(e, jnp.float16), shape=(s, 2),
                                   transpose=True, backend=backend)
        elif op == 'binary_csrmm':
            f = lambda e: ej.binary_csrmm(data, targets.reshape(-1), indptr, jnp.stack([e, e], 1), shape=(s, 2),
                                          transpose=True, backend=backend)[:, 1]
        elif op == 'binary_fcnmv':
            f = lambda e: ej.binary_fcnmv(data.reshape(s, 2), targets, e, shape=(s, 2), transpose=True,
                                          backend=backend)
        elif op == 'fcnmv':
            f = lambda e: ej.fcnmv(data.reshape(s, 2), targets, jnp.asarray(e, jnp.float16), shape=(s, 2),
                                   transpose=True, backend=backend)
        elif op == 'binary_jitcmv':
            # prob 1: every source reaches both targets.
            f = lambda e: ej.binary_jitcmv(jnp.full((1,), w), e, seed=0, prob=1.0, shape=(s, 2), transpose=True,
                                           backend=backend)
        else:
            graded = op == 'graded_csr'
            f = lambda e, graded=graded: ej.csr_delay_deliver(
                jnp.zeros((3, 2), jnp.float16), ej.GradedEvents(jnp.asarray(e, jnp.float16)) if graded else e,
                data, targets.reshape(-1), indptr, 1, 0, shape=(s, 2), backend=backend)[1]
        want_here = np.full(2, np.sum(per_source)).astype(np.float16) if op == 'binary_jitcmv' else want
        got = _maybe_jit(p, f)(ev)
        _report(bad, f'{op} float16 sums ({p["events"]} events, {s} sources of {float(w)})', backend, got,
                want_here, TOLERANCE[np.dtype('float16')])
    return bad


def _form(p, value, *, array: bool):
    """``value`` in the drawn form; ``traced`` gives a JAX int64/int32 array to pass through ``jax.jit``."""
    form = p['form']
    if form == 'python':
        return np.array([value], np.int64) if array else value
    if form == 'numpy scalar':
        return np.array([value], np.int64) if array else np.int64(value)
    if form == 'numpy array':
        return np.array([value] if array else value, np.int64)
    return jnp.asarray([value] if array else value, jnp.int64 if p['x64'] else jnp.int32)


def _check_wide_integers(p):
    arg, v, traced = p['arg'], p['value'], p['form'] == 'traced'
    bad = []
    op = {'delays': 'csr_delay_deliver', 't': 'csr_delay_deliver', 'count': 'binary_csrmv_indexed',
          'ids': 'binary_csrmv_indexed', 'rows': 'csr_slice_rows'}[arg]
    data, indices, indptr = np.array([1.0, 2.0, 4.0], np.float32), np.array([0, 1, 2]), np.array([0, 1, 2, 3])
    value = _form(p, v, array=arg in ('ids', 'rows'))
    for backend in backends(op):
        if arg in ('delays', 't'):
            def f(x):
                d, t = (x, 0) if arg == 'delays' else (1, x)
                return ej.csr_delay_deliver(jnp.zeros((L, 3), jnp.float32), np.array([True, False, False]), data,
                                            indices, indptr, d, t, shape=(3, 3), backend=backend)
            want = np.zeros((L, 3))
            if arg == 't':
                want[(v + 1) % L, 0] = 1.0
            elif 1 <= v < L:
                want[v, 0] = 1.0
            raises = arg == 'delays' and not traced and not 1 <= v < L
        elif arg in ('count', 'ids'):
            def f(x):
                ids, count = (np.array([0, 1, 2]), x) if arg == 'count' else (x, 1)
                return ej.binary_csrmv_indexed(data, indices, indptr, None, (ids, count), shape=(3, 3),
                                               transpose=True, backend=backend)
            if arg == 'count':
                want = np.full(3, np.nan) if v > 3 else np.where(np.arange(3) < max(v, 0), data, 0)
                raises = v > 3 and not traced
            else:
                want = np.where(np.arange(3) == v, data, 0)
                raises = False
        else:
            def f(x):
                return ej.csr_slice_rows(data, indices, indptr, x, shape=(3, 3), backend=backend)
            want = (np.diag(data)[v] if 0 <= v < 3 else np.zeros(3))[None, :]
            raises = False
        what = f'{arg} = {v} as {p["form"]} (x64 {"on" if p["x64"] else "off"})'
        try:
            got = jax.jit(f)(value) if traced else f(value)
        except ValueError as exc:
            if not raises:
                bad.append(f'{what} on {backend}: unexpected ValueError: {exc}')
            continue
        if raises:
            bad.append(f'{what} on {backend}: no ValueError')
            continue
        _report(bad, what, backend, got, want, 0.0)
    return bad


def _kept_dense(p):
    """The dense matrix of the entries the contract keeps: owned by a row, column in ``[0, n)``."""
    m, n = p['shape']
    A = np.zeros((m, n))
    for i in range(m):
        for e in range(p['indptr'][i], p['indptr'][i + 1]):
            j = p['indices'][e]
            if 0 <= j < n:
                A[i, j] += p['data'][e]
    return A


def _check_bad_structure(p):
    op, (m, n), t = p['op'], p['shape'], p['transpose']
    d = p['data']
    indices = p['indices'] if p['x64'] else p['indices'].astype(np.int32)
    if not p['x64'] and (np.abs(p['indices']) >= 2 ** 31).any():
        return []
    indptr = p['indptr'].astype(indices.dtype)
    A = _kept_dense(p)
    ev, x = p['events'], p['x']
    nnz = indices.shape[0]
    rows_of = np.searchsorted(p['indptr'], np.arange(nnz), side='right') - 1
    kept = (rows_of >= 0) & (rows_of < m) & (indices >= 0) & (indices < n)
    bad = []
    for backend in backends('csrmv' if op == 'todense' else op):
        kw = {'shape': (m, n), 'backend': backend}
        if op == 'csrmv':
            f, want = (lambda i: ej.csrmv(d, i, indptr, x[:, 0], transpose=t, validate=False, **kw),
                       (A.T if t else A) @ x[:, 0])
        elif op == 'binary_csrmv':
            f, want = (lambda i: ej.binary_csrmv(d, i, indptr, ev, transpose=t, validate=False, **kw),
                       (A.T if t else A) @ ev)
        elif op == 'csrmm':
            f, want = (lambda i: ej.csrmm(d, i, indptr, x, transpose=t, validate=False, **kw), (A.T if t else A) @ x)
        elif op == 'csrmv_dt2t':
            y = x[:, 0]
            read = np.clip(indices, 0, n - 1) if t else np.clip(rows_of, 0, m - 1)
            if t != (y.shape[0] == n):
                y = np.resize(y, n if t else m)
            f, want = (lambda i: ej.csrmv_dt2t(y, d, i, indptr, transpose=t, validate=False, **kw),
                       np.where(kept, d * y[read], 0))
        elif op == 'csr_slice_rows':
            f, want = (lambda i: ej.csr_slice_rows(d, i, indptr, p['rows'], validate=False, **kw),
                       np.stack([A[r] if 0 <= r < m else np.zeros(n) for r in p['rows']]))
        elif op == 'binary_csrmv_indexed':
            ids = np.flatnonzero(np.resize(ev, m)).astype(np.int32)
            f, want = (lambda i: ej.binary_csrmv_indexed(d, i, indptr, None, (ids, ids.shape[0]), transpose=True,
                                                         validate=False, **kw),
                       A.T @ np.resize(ev, m))
        elif op == 'csr_delay_deliver':
            spikes = np.resize(ev, m)
            f, want = (lambda i: ej.csr_delay_deliver(jnp.zeros((3, n), jnp.float32), spikes, d, i, indptr, 1, 0,
                                                      validate=False, **kw),
                       np.stack([np.zeros(n), A.T @ spikes, np.zeros(n)]))
        else:
            with ej.config.override(cpu=backend):
                f, want = (lambda i: ej.CSR((d, i, indptr), shape=(m, n), validate=False).todense(), A)
        what = f'{op} (transpose={t}) with columns {indices.tolist()} and indptr {indptr.tolist()}'
        for mode, g in (('eager', f), ('jit', jax.jit(f))):
            try:
                if op == 'todense':
                    with ej.config.override(cpu=backend):
                        got = g(indices)
                else:
                    got = g(indices)
            except Exception as exc:  # any raise is a disagreement: unvalidated structure never raises
                bad.append(f'{what}, {mode}, on {backend}: {type(exc).__name__}: {exc}')
                continue
            _report(bad, f'{what}, {mode}', backend, got, want, 1e-5, 1e-5)
    return bad


def _check_tiny_events(p):
    op, t, v = p['op'], p['transpose'], p['values']
    # XLA flushes subnormal numbers to zero (on the cpu, for every backend's kernel): they are not > 0.
    fires = (v >= np.finfo(v.dtype).tiny).astype(np.float64)
    k = v.shape[0]
    rng = np.random.default_rng(0)
    W = rng.integers(1, 5, (k, 3)).astype(np.float64)
    indices = np.tile(np.arange(3), k)
    indptr = np.arange(0, 3 * k + 1, 3)
    bad = []
    for backend in backends(op):
        if op == 'binary_csrmv':
            if t:
                f, want = (lambda e: ej.binary_csrmv(W.reshape(-1), indices, indptr, e, shape=(k, 3), transpose=True,
                                                     backend=backend), W.T @ fires)
            else:
                f, want = (lambda e: ej.binary_csrmv(W.T.reshape(-1), np.tile(np.arange(k), 3),
                                                     np.arange(0, 3 * k + 1, k), e, shape=(3, k), backend=backend),
                           W.T @ fires)
        elif op == 'binary_fcnmv':
            f, want = (lambda e: ej.binary_fcnmv(W, indices.reshape(k, 3), e, shape=(k, 3), transpose=True,
                                                 backend=backend), W.T @ fires)
        elif op == 'binary_densemv':
            f, want = (lambda e: ej.binary_densemv(W.T, e, backend=backend), W.T @ fires)
        else:
            f, want = (lambda e: ej.csr_delay_deliver(jnp.zeros((2, 3)), e, W.reshape(-1), indices, indptr, 1, 0,
                                                      shape=(k, 3), backend=backend)[1], W.T @ fires)
        got = _maybe_jit(p, f)(v)
        _report(bad, f'{op} events {v.tolist()} ({p["dtype"]})', backend, got, want, 1e-12)
    return bad
