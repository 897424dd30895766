"""Drawn problems for the per-synapse products (``csrmv_dt2t``, ``csrmm_dt2t``, ``fcnmv_dt2t``, ``csr_sddmm``).

Hypothesis draws sizes (0, 1 and small ones), weight dtypes, float or event
(bool) vectors with NaN and Inf among the floats, both directions, and
structure that is valid or, when traced, broken (columns outside ``[0, n)``
and an ``indptr`` that does not start at 0 or overshoots). Every backend is
compared, under eager (valid structure), ``jit``, ``vmap`` and ``jit(grad)``,
with a dense NumPy oracle written from the Semantics page: an entry of no
row, or with a bad column, is 0 with zero gradients.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from hypothesis import strategies as st

import eventjax as ej
from tests.differential.oracle import TOLERANCE

OPERATORS = ('csrmv_dt2t', 'csrmm_dt2t', 'fcnmv_dt2t', 'csr_sddmm')
_PRIMITIVE = {'csr_sddmm': 'csr_sddmm'}


@st.composite
def problems(draw, name: str) -> dict:
    """One drawn call of operator ``name``: a dict of NumPy operands and statics."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    m, n = draw(st.sampled_from((0, 1, 5, 9))), draw(st.sampled_from((0, 1, 5, 9)))
    dtype = draw(st.sampled_from(('float32', 'float16')))
    broken = draw(st.booleans()) and m > 0
    if name == 'fcnmv_dt2t':
        k = draw(st.sampled_from((0, 1, 3))) if n else 0
        indices = rng.integers(0, max(n, 1), (m, k)).astype(np.int32)
        indptr, broken = (np.arange(m + 1) * k).astype(np.int32), False
    else:
        nnz = draw(st.sampled_from((0, 1, 6, 20))) if n or broken else 0  # valid: columns in [0, n)
        cuts = np.sort(rng.integers(0, nnz + 1, max(m - 1, 0)))
        indptr = np.concatenate([[0], cuts, [nnz]]).astype(np.int32) if m else np.zeros(1, np.int32)
        indices = rng.integers(-2 if broken else 0, n + 2 if broken else max(n, 1), nnz).astype(np.int32)
        if broken:
            indptr[0] = rng.integers(0, nnz + 1)
            indptr[-1] = rng.integers(0, nnz + 3)
    p = {'name': name, 'indices': indices, 'indptr': indptr, 'shape': (m, n), 'broken': broken, 'dtype': dtype}
    nnz = indices.size
    if name == 'csr_sddmm':
        depth = draw(st.sampled_from((0, 1, 4)))
        p['a'] = (rng.integers(-8, 9, (2, m, depth)) / 4).astype(dtype)  # 2: a batch for vmap
        p['b'] = (rng.integers(-8, 9, (depth, n)) / 4).astype(dtype)
        return p
    p['transpose'] = draw(st.booleans())
    size = n if p['transpose'] else m
    batch = 3 if name == 'csrmm_dt2t' else None
    ylead = (2,) + ((batch,) if batch else ())
    if draw(st.booleans()):
        p['y'] = rng.random((*ylead, size)) < draw(st.sampled_from((0.0, 0.3, 1.0)))
    else:
        y = rng.integers(-8, 9, (*ylead, size)) / 4
        if y.size and draw(st.booleans()):
            y.flat[rng.integers(0, y.size)] = draw(st.sampled_from((np.nan, np.inf)))
        p['y'] = y.astype(dtype)
    wshape = indices.shape if name == 'fcnmv_dt2t' else (nnz,)
    p['w'] = (rng.integers(-8, 9, (*ylead, *wshape)) / 4).astype(dtype)
    return p


def _rows(p) -> np.ndarray:
    """Each entry's row after the repair every backend applies (-1: no row)."""
    nnz = p['indices'].size
    ip = np.maximum.accumulate(np.clip(p['indptr'].astype(np.int64), 0, nnz))
    rows = np.full(nnz, -1)
    for i in range(len(ip) - 1):
        rows[ip[i]:ip[i + 1]] = i
    return rows


def oracle(p, b: int) -> np.ndarray:
    """The expected result of batch element ``b``, in float64."""
    m, n = p['shape']
    rows, cols = _rows(p), p['indices'].reshape(-1)
    ok = (rows >= 0) & (cols >= 0) & (cols < n)
    if p['name'] == 'csr_sddmm':
        a, bm = p['a'][b].astype(np.float64), p['b'].astype(np.float64)
        out = np.zeros(cols.size)
        for e in np.flatnonzero(ok):
            out[e] = a[rows[e]] @ bm[:, cols[e]] if a.shape[1] else 0.0
        return out
    if not p['transpose']:
        ok = rows >= 0
    pos = np.where(ok, cols if p['transpose'] else rows, 0)
    y, w = p['y'][b], p['w'][b].astype(np.float64).reshape(*p['w'][b].shape[:-p['indices'].ndim], -1)
    g = y[..., pos] if y.shape[-1] else np.zeros((*y.shape[:-1], pos.size), y.dtype)
    with np.errstate(invalid='ignore'):
        value = np.where(g, w, 0.0) if y.dtype == np.bool_ else w * g.astype(np.float64)
    out = np.where(ok, value, 0.0)
    return out.reshape(p['w'][b].shape)


def call(p, first, second, *, backend):
    """The operator on (w, y) or (a, b); traced broken structure is passed unvalidated."""
    name, kw = p['name'], {'shape': p['shape'], 'backend': backend, 'validate': not p['broken']}
    if name == 'csr_sddmm':
        return ej.csr_sddmm(first, second, p['indices'], p['indptr'], **kw)
    if name == 'fcnmv_dt2t':
        return ej.fcnmv_dt2t(first, p['indices'], second, transpose=p['transpose'], **kw)
    return getattr(ej, name)(second, first, p['indices'], p['indptr'], transpose=p['transpose'], **kw)


def _operands(p, b):
    return (p['a'][b], p['b']) if p['name'] == 'csr_sddmm' else (p['w'][b], p['y'][b])


def _close(got, want, dtype) -> str | None:
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    if got.shape != want.shape:
        return f'shape {got.shape}, expected {want.shape}'
    if not np.array_equal(np.isnan(got), np.isnan(want)):
        return f'NaN at {np.flatnonzero(np.isnan(got) != np.isnan(want))[:5]}'
    tol = TOLERANCE[np.dtype(dtype)]
    finite = np.isfinite(want)
    ok = np.isnan(want) | (finite & (np.abs(got - want) <= tol * (1 + np.abs(want)))) | (~finite & (got == want))
    return None if ok.all() else f'got {got[~ok][:3]}, expected {want[~ok][:3]}'


def check(p) -> list[str]:
    """What disagrees with the oracle, per backend and transformation (empty: all agree)."""
    bad: list[str] = []
    prim = 'csr_sddmm' if p['name'] == 'csr_sddmm' else 'csr_dt2t'
    for backend in ej.get_registry()[prim].available_backends('cpu'):
        _check_backend(p, backend, bad)
    return bad


def _check_backend(p, backend: str, bad: list) -> None:
    name, dtype = p['name'], p['dtype']

    def report(what, got, want):
        why = _close(got, want, dtype)
        if why:
            bad.append(f'{name} {backend} {what}: {why} (shape {p["shape"]}, dtype {dtype}, '
                       f'broken {p["broken"]})')

    f = jax.jit(lambda x, y: call(p, x, y, backend=backend))
    for b in range(2):
        report(f'jit[{b}]', f(*_operands(p, b)), oracle(p, b))
    if not p['broken']:
        report('eager', call(p, *_operands(p, 0), backend=backend), oracle(p, 0))
    first, second = (p['a'], p['b']) if name == 'csr_sddmm' else (p['w'], p['y'])
    in_axes = (0, None) if name == 'csr_sddmm' else (0, 0)
    report('vmap', jax.jit(jax.vmap(lambda x, y: call(p, x, y, backend=backend), in_axes))(first, second),
           np.stack([oracle(p, 0), oracle(p, 1)]))
    if not np.isfinite(oracle(p, 0)).all() or np.asarray(second).dtype == np.bool_:
        return
    # Bilinear: the gradient in the first operand is the oracle with the first replaced by unit steps.
    x0, y0 = _operands(p, 0)
    ct = np.ones(oracle(p, 0).shape, np.float32)
    loss = lambda x: jnp.sum(call(p, x, y0, backend=backend).astype(jnp.float32) * ct)
    grad = jax.jit(jax.grad(loss))(x0)
    want = np.zeros(x0.size)
    for i in range(x0.size):
        step = np.zeros(x0.size)
        step[i] = 1.0
        q = {**p, ('a' if name == 'csr_sddmm' else 'w'): np.stack([step.reshape(x0.shape)] * 2)}
        want[i] = np.sum(oracle(q, 0) * ct)
    report('jit(grad)', grad.reshape(-1), want)
