"""Drawn plasticity problems, checked on every backend under eager, jit and vmap against a NumPy oracle.

A problem is one update (``csr_on_pre``, ``csr2csc_on_post``, ``dense_on_pre``,
``dense_on_post``, ``fcn_on_pre``, and the per-edge rule functions
``*_apply_on_pre`` / ``*_apply_on_post`` running the additive bounded rule,
which must give the same weights) with sizes 0, 1, 5 or 16, event
densities from 0 to 1 (bool or float events), NaN/Inf in the weights and
the trace, optional bounds, and for CSR valid or broken structure (columns
out of range, a decreasing ``indptr``), which is traced under ``jit`` and
must then be dropped exactly as the oracle does. Eager calls with broken
concrete structure must raise ``ValueError`` on every backend.
"""

from __future__ import annotations

import contextlib
import importlib

import attrs
import jax
import jax.numpy as jnp
import numpy as np
from hypothesis import strategies as st

import eventjax as ej

# Each per-edge rule function and the fixed update whose weights it must reproduce.
APPLIES = {'csr_apply_on_pre': 'csr_on_pre', 'csr_apply_on_post': 'csr2csc_on_post', 'fcn_apply_on_pre': 'fcn_on_pre',
           'dense_apply_on_pre': 'dense_on_pre', 'dense_apply_on_post': 'dense_on_post'}
# The primitives (with backends, pallas among them), then everything the tester draws.
UPDATES = ('csr_on_pre', 'csr2csc_on_post', 'dense_on_pre', 'dense_on_post', 'fcn_on_pre')
CHECKED = (*UPDATES, *APPLIES)
SIZES = (0, 1, 5, 16)
# Bounds are an operand of the numba kernels (no compilation per pair), so every draw may take its own.
LO, HI = -0.1, 0.3


def _values(draw, size, special: bool):
    v = np.asarray(draw(st.lists(st.floats(-1, 1, width=32), min_size=size, max_size=size)), np.float32)
    if special and size:
        k = draw(st.integers(0, size - 1))
        v[k] = draw(st.sampled_from([np.nan, np.inf, -np.inf]))
    return v


def _events(draw, size):
    density = draw(st.sampled_from([0.0, 0.3, 1.0]))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 16)))
    fired = rng.random(size) < density
    if draw(st.booleans()):
        return fired
    return np.where(fired, rng.random(size) + 0.1, -rng.random(size)).astype(np.float32)


@st.composite
def plasticity_problems(draw, name: str):
    m, n = draw(st.sampled_from(SIZES)), draw(st.sampled_from(SIZES))
    lo, hi = draw(st.floats(-1, 0, width=32)), draw(st.floats(0, 1, width=32))
    bounds = draw(st.sampled_from([(None, None), (LO, HI), (lo, hi), (lo, None), (None, hi)]))
    special = draw(st.booleans())
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 16)))
    problem = {'name': APPLIES.get(name, name), 'apply': name if name in APPLIES else None, 'm': m, 'n': n,
               'bounds': bounds, 'broken': False}
    name = problem['name']
    if name.startswith('dense'):
        problem['weight'] = _values(draw, m * n, special).reshape(m, n)
    elif name == 'fcn_on_pre':
        k = draw(st.sampled_from([0, 1, 3]))
        problem['indices'] = rng.integers(0, max(n, 1), (m, k)).astype(np.int32)
        problem['broken'] = n == 0 and m * k > 0  # no column exists: every index is out of range
        if draw(st.booleans()) and m * k:
            problem['indices'][rng.integers(0, m), rng.integers(0, k)] = draw(st.sampled_from([-1, n, n + 7]))
            problem['broken'] = True
        problem['weight'] = _values(draw, m * k, special).reshape(m, k)
    else:
        counts = rng.integers(0, n + 1, m) if n else np.zeros(m, int)
        indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
        indices = np.concatenate([rng.choice(n, c, replace=False) for c in counts]).astype(np.int32) if m \
            else np.zeros(0, np.int32)
        if draw(st.booleans()) and indices.size:
            indices[rng.integers(0, indices.size)] = draw(st.sampled_from([-1, n, n + 7]))
            problem['broken'] = True
        if draw(st.booleans()) and m >= 2 and indptr[-1] > 0:
            indptr[1] = indptr[-1] + 2  # decreasing afterwards, and past the end
            problem['broken'] = True
        problem['indices'], problem['indptr'] = indices, indptr
        problem['weight'] = _values(draw, indices.size, special)
    problem['pre'], problem['post'] = _events(draw, m), _events(draw, n)
    problem['pre_trace'], problem['post_trace'] = _values(draw, m, special), _values(draw, n, special)
    return problem


def _bound(v, lo, hi):
    if lo is not None and v < lo:
        return np.float32(lo)
    if hi is not None and v > hi:
        return np.float32(hi)
    return v


def _csr_entries(p):
    """(row, column, position) of every entry kept after repairing ``indptr`` and dropping bad columns."""
    nnz = p['indices'].size
    ptr = np.maximum.accumulate(np.clip(p['indptr'], 0, nnz))
    return [(i, int(p['indices'][k]), k) for i in range(p['m']) for k in range(ptr[i], ptr[i + 1])
            if 0 <= p['indices'][k] < p['n']]


def oracle(p):
    """The updated weights, by the contract (NumPy loops)."""
    lo, hi = p['bounds']
    w = p['weight'].copy()
    pre, post = np.asarray(p['pre']) > 0, np.asarray(p['post']) > 0
    name = p['name']
    if name == 'dense_on_pre':
        for i in np.flatnonzero(pre):
            w[i] = [_bound(v, lo, hi) for v in w[i] + p['post_trace']]
    elif name == 'dense_on_post':
        for j in np.flatnonzero(post):
            w[:, j] = [_bound(v, lo, hi) for v in w[:, j] + p['pre_trace']]
    elif name == 'fcn_on_pre':
        for i in np.flatnonzero(pre):
            for c, j in enumerate(p['indices'][i]):
                if 0 <= j < p['n']:
                    w[i, c] = _bound(w[i, c] + p['post_trace'][j], lo, hi)
    else:
        for i, j, k in _csr_entries(p):
            if name == 'csr_on_pre' and pre[i]:
                w[k] = _bound(w[k] + p['post_trace'][j], lo, hi)
            if name == 'csr2csc_on_post' and post[j]:
                w[k] = _bound(w[k] + p['pre_trace'][i], lo, hi)
    return w


def _bounded_sum(lo, hi, on_pre):
    """The additive rule ``w + trace`` bounded as the fixed updates bound it (a NaN stays NaN)."""
    def rule(w, pre, post, params):
        v = w + (post if on_pre else pre)
        v = v if lo is None else jnp.where(v < lo, jnp.asarray(lo, v.dtype), v)
        return v if hi is None else jnp.where(v > hi, jnp.asarray(hi, v.dtype), v)
    return rule


def _longest(p):
    """The most kept entries one row and one column of a CSR problem hold (what a traced call is told)."""
    entries = _csr_entries(p)
    rows = np.bincount([e[0] for e in entries], minlength=1)
    cols = np.bincount([e[1] for e in entries], minlength=1)
    nnz = p['indices'].size
    ptr = np.maximum.accumulate(np.clip(p['indptr'], 0, nnz))
    return int(max(np.max(np.diff(ptr), initial=0), rows.max())), int(cols.max())


def _call_apply(p, a, w):
    lo, hi = p['bounds']
    name, shape = p['apply'], (p['m'], p['n'])
    values = {'pre_vals': jnp.asarray(a['pre_trace']), 'post_vals': jnp.asarray(a['post_trace'])}
    on_pre = name.endswith('_pre')
    rule = _bounded_sum(lo, hi, on_pre)
    spikes = a['pre'] if on_pre else a['post']
    if name == 'dense_apply_on_pre':
        return ej.dense_apply_on_pre(rule, w, spikes, **values)
    if name == 'dense_apply_on_post':
        return ej.dense_apply_on_post(rule, w, spikes, **values)
    if name == 'fcn_apply_on_pre':
        return ej.fcn_apply_on_pre(rule, w, a['indices'], spikes, shape=shape, **values)
    longest_row, longest_col = _longest(p)
    if name == 'csr_apply_on_pre':
        return ej.csr_apply_on_pre(rule, w, a['indices'], a['indptr'], spikes, shape=shape,
                                   max_row_length=longest_row, **values)
    return ej.csr_apply_on_post(rule, w, a['indices'], a['indptr'], spikes, shape=shape, max_col_length=longest_col,
                                **values)


def call(p, backend, weight=None, validate=True, **arrays):
    """The update of problem ``p`` on ``backend`` (``arrays`` replace its operands, e.g. tracers)."""
    a = {**p, **arrays}
    w = a['weight'] if weight is None else weight
    if p['apply']:
        return _call_apply(p, a, w)
    lo, hi = p['bounds']
    name, shape = p['name'], (p['m'], p['n'])
    if name == 'dense_on_pre':
        return ej.dense_on_pre(w, a['pre'], a['post_trace'], lo, hi, backend=backend)
    if name == 'dense_on_post':
        return ej.dense_on_post(w, a['pre_trace'], a['post'], lo, hi, backend=backend)
    if name == 'fcn_on_pre':
        return ej.fcn_on_pre(w, a['indices'], a['pre'], a['post_trace'], lo, hi, shape=shape, backend=backend,
                             validate=validate)
    if name == 'csr_on_pre':
        return ej.csr_on_pre(w, a['indices'], a['indptr'], a['pre'], a['post_trace'], lo, hi, shape=shape,
                             backend=backend, validate=validate)
    # The column view of the kept entries, built in NumPy by the oracle's rules.
    entries = sorted(_csr_entries(p), key=lambda e: e[1])
    rows = np.array([e[0] for e in entries], np.int32)
    pos = np.array([e[2] for e in entries], np.int32)
    col_ptr = np.searchsorted(np.array([e[1] for e in entries], np.int64), np.arange(p['n'] + 1)).astype(np.int32)
    return ej.csr2csc_on_post(w, rows, col_ptr, pos, a['pre_trace'], a['post'], lo, hi, shape=shape,
                              backend=backend, validate=validate)


def _same(got, want) -> bool:
    got, want = np.asarray(got, np.float32), np.asarray(want, np.float32)
    if got.shape != want.shape or not np.array_equal(np.isnan(got), np.isnan(want)):
        return False
    ok = ~np.isnan(want)
    return bool(np.allclose(got[ok], want[ok], rtol=1e-5, atol=1e-6))


def check(p, backends) -> list[str]:
    """Every disagreement of problem ``p`` with the oracle on ``backends`` (eager, jit, vmap), as text."""
    want = oracle(p)
    bad = []
    structure = p['broken'] and (p['name'] in ('csr_on_pre', 'fcn_on_pre') or p['apply'] is not None)
    for backend in backends:
        if structure:
            try:
                call(p, backend)
                bad.append(f'{backend} eager: broken concrete structure did not raise')
            except ValueError:
                pass
        else:
            got = call(p, backend)
            if not _same(got, want):
                bad.append(f'{backend} eager: {np.asarray(got)} != {want}')
        keys = tuple(k for k in ('indices', 'indptr') if k in p and (p['name'] != 'csr2csc_on_post' or p['apply']))
        jitted = jax.jit(lambda w, *s, b=backend, keys=keys: call(p, b, w, **dict(zip(keys, s))))
        got = jitted(jnp.asarray(p['weight']), *(jnp.asarray(p[k]) for k in keys))
        if not _same(got, want):
            bad.append(f'{backend} jit (structure traced): {np.asarray(got)} != {want}')
        if not structure:
            both = jax.vmap(lambda w, b=backend: call(p, b, w))(jnp.stack([jnp.asarray(p['weight'])] * 2))
            if not (_same(both[0], want) and _same(both[1], want)):
                bad.append(f'{backend} vmap: {np.asarray(both)} != {want}')
    return bad


def backends_of(name: str) -> tuple[str, ...]:
    if name in APPLIES:
        return ('jax',)  # plain JAX functions, no backends: checked against the oracle once
    platform = 'gpu' if jax.default_backend() in ('gpu', 'cuda', 'rocm') else 'cpu'
    return ej.get_registry()[name].available_backends(platform)


@contextlib.contextmanager
def pallas_on_cpu():
    """Inside: the updates' pallas kernels registered for the cpu (interpret mode); after: the tables as before.

    The interpreter is too slow to join every test that parametrizes over
    the cpu backends, so the kernels are registered only where asked for.
    """
    before = ej.config.snapshot()
    ej.backends.pallas.set_cpu_interpret(True)
    for name in UPDATES:
        getattr(importlib.import_module(f'eventjax.kernels.plasticity.{name}'), f'_{name}').register('pallas')
    try:
        yield
    finally:
        ej.config.update(lambda snap: attrs.evolve(snap, primitives=before.primitives,
                                                   settings=before.settings))
