"""Drawn problems for the per-synapse products (CSR, CSC, fixed-connection and JITC ``*_dt2t``, ``csr_sddmm``).

Hypothesis draws sizes (0, 1 and small ones), weight dtypes, float or event
(bool) vectors with NaN and Inf among the floats, both directions, and
structure that is valid or, when traced, broken (columns outside ``[0, n)``
and an ``indptr`` that does not start at 0 or overshoots). Every backend is
compared, under eager (valid structure), ``jit``, ``vmap`` and ``jit(grad)``,
with a dense NumPy oracle written from the Semantics page: an entry of no
row, or with a bad column, is 0 with zero gradients. The CSC products are
checked as the CSR products of the transpose they are defined as; the JITC
ones (``jitsmv_dt2t``, ``jitumv_dt2t``, ``jitnmv_dt2t``) against the
connections and draws of ``JITCMatrix.todense()`` (see ``jitc_oracle.py``),
in row-major order, with law parameters that may be NaN or Inf.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from hypothesis import strategies as st

import eventjax as ej
from eventjax.compat import legacy
from tests.differential.jitc_oracle import unit_dense
from tests.differential.oracle import TOLERANCE

OPERATORS = ('csrmv_dt2t', 'csrmm_dt2t', 'cscmv_dt2t', 'cscmm_dt2t', 'fcnmv_dt2t', 'csr_sddmm',
             'jitsmv_dt2t', 'jitumv_dt2t', 'jitnmv_dt2t')
_CSC = {'cscmv_dt2t': 'csrmv_dt2t', 'cscmm_dt2t': 'csrmm_dt2t'}  # each is the CSR product of the transpose
_JITC = {'jitsmv_dt2t': 'homo', 'jitumv_dt2t': 'uniform', 'jitnmv_dt2t': 'normal'}


@st.composite
def problems(draw, name: str) -> dict:
    """One drawn call of operator ``name``: a dict of NumPy operands and statics."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    m, n = draw(st.sampled_from((0, 1, 5, 9))), draw(st.sampled_from((0, 1, 5, 9)))
    if name in _JITC:
        return _jitc_problem(draw, rng, name, (m, n))
    dtype = draw(st.sampled_from(('float32', 'float16')))
    sm, sn = (n, m) if name in _CSC else (m, n)  # the stored arrays' (pointers, indices) extents
    broken = draw(st.booleans()) and sm > 0
    if name == 'fcnmv_dt2t':
        k = draw(st.sampled_from((0, 1, 3))) if n else 0
        indices = rng.integers(0, max(n, 1), (m, k)).astype(np.int32)
        indptr, broken = (np.arange(m + 1) * k).astype(np.int32), False
    else:
        nnz = draw(st.sampled_from((0, 1, 6, 20))) if sn or broken else 0  # valid: indices in [0, sn)
        cuts = np.sort(rng.integers(0, nnz + 1, max(sm - 1, 0)))
        indptr = np.concatenate([[0], cuts, [nnz]]).astype(np.int32) if sm else np.zeros(1, np.int32)
        indices = rng.integers(-2 if broken else 0, sn + 2 if broken else max(sn, 1), nnz).astype(np.int32)
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
    batch = 3 if name in ('csrmm_dt2t', 'cscmm_dt2t') else None
    ylead = (2,) + ((batch,) if batch else ())
    p['y'] = _y(draw, rng, ylead, size, dtype)
    wshape = indices.shape if name == 'fcnmv_dt2t' else (nnz,)
    p['w'] = (rng.integers(-8, 9, (*ylead, *wshape)) / 4).astype(dtype)
    return p


def _y(draw, rng, lead: tuple, size: int, dtype: str) -> np.ndarray:
    """Events (bool, density 0..1) or floats on a 1/4 grid with a NaN or Inf now and then."""
    if draw(st.booleans()):
        return rng.random((*lead, size)) < draw(st.sampled_from((0.0, 0.3, 1.0)))
    y = rng.integers(-8, 9, (*lead, size)) / 4
    if y.size and draw(st.booleans()):
        y.flat[rng.integers(0, y.size)] = draw(st.sampled_from((np.nan, np.inf)))
    return y.astype(dtype)


def _jitc_problem(draw, rng, name: str, shape: tuple) -> dict:
    """A JITC per-synapse call: the law's parameters (a batch of 2, NaN/Inf now and then), prob, seed, y."""
    law = _JITC[name]
    k = 1 if law == 'homo' else 2
    params = (rng.integers(-8, 9, (2, k)) / 4).astype(np.float32)
    if draw(st.booleans()):
        params.flat[rng.integers(0, params.size)] = draw(st.sampled_from((np.nan, np.inf, -np.inf)))
    if law == 'uniform':
        params = np.sort(params, axis=1)  # low <= high, or an eager call rightly raises
    elif law == 'normal':
        params[:, 1] = np.abs(params[:, 1])  # scale >= 0, likewise
    transpose = draw(st.booleans())
    return {'name': name, 'law': law, 'params': params, 'prob': draw(st.sampled_from((0.0, 0.3, 1.0))),
            'seed': draw(st.integers(0, 2**31 - 1)), 'shape': shape, 'transpose': transpose, 'broken': False,
            'dtype': 'float32', 'y': _y(draw, rng, (2,), shape[1] if transpose else shape[0], 'float32')}


def _jitc_oracle(p, b: int) -> np.ndarray:
    """Each connection (row-major, as ``todense()`` lays them out) of batch element ``b``: its weight times ``y``."""
    key = (p['seed'], p['prob'], tuple(p['shape']))
    mask = unit_dense(*key, 'homo') != 0
    rows, cols = np.nonzero(mask)
    q = p['params'][b].astype(np.float64)
    with np.errstate(invalid='ignore', over='ignore'):
        if p['law'] == 'homo':
            w = np.full(rows.size, q[0])
        else:
            d = unit_dense(*key, p['law'])[rows, cols]
            w = q[0] + (q[1] - q[0]) * d if p['law'] == 'uniform' else q[0] + q[1] * d
        g = p['y'][b][cols if p['transpose'] else rows]
        return np.where(g, w, 0.0) if g.dtype == np.bool_ else w * g.astype(np.float64)


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
    if p['name'] in _JITC:
        return _jitc_oracle(p, b)
    if p['name'] in _CSC:  # the CSR product of the transpose, read the other way
        p = {**p, 'name': _CSC[p['name']], 'shape': tuple(p['shape'])[::-1], 'transpose': not p['transpose']}
    m, n = p['shape']
    rows, cols = _rows(p), p['indices'].reshape(-1)
    ok = (rows >= 0) & (cols >= 0) & (cols < n)
    if p['name'] == 'csr_sddmm':
        a, bm = p['a'][b].astype(np.float64), p['b'].astype(np.float64)
        out = np.zeros(cols.size)
        for e in np.flatnonzero(ok):
            out[e] = a[rows[e]] @ bm[:, cols[e]] if a.shape[1] else 0.0
        return out
    pos = np.where(ok, cols if p['transpose'] else rows, 0)
    y, w = p['y'][b], p['w'][b].astype(np.float64).reshape(*p['w'][b].shape[:-p['indices'].ndim], -1)
    g = y[..., pos] if y.shape[-1] else np.zeros((*y.shape[:-1], pos.size), y.dtype)
    with np.errstate(invalid='ignore'):
        value = np.where(g, w, 0.0) if y.dtype == np.bool_ else w * g.astype(np.float64)
    out = np.where(ok, value, 0.0)
    return out.reshape(p['w'][b].shape)


def call(p, first, second, *, backend):
    """The operator on (w, y), (a, b) or (law parameters, y); traced broken structure is passed unvalidated."""
    name, kw = p['name'], {'shape': p['shape'], 'backend': backend, 'validate': not p['broken']}
    if name in _JITC:
        return getattr(legacy, name)(*(first[i] for i in range(first.shape[0])), p['prob'], second, p['seed'],
                                     shape=p['shape'], transpose=p['transpose'], backend=backend)
    if name == 'csr_sddmm':
        return ej.csr_sddmm(first, second, p['indices'], p['indptr'], **kw)
    if name == 'fcnmv_dt2t':
        return ej.fcnmv_dt2t(first, p['indices'], second, transpose=p['transpose'], **kw)
    return getattr(ej, name)(second, first, p['indices'], p['indptr'], transpose=p['transpose'], **kw)


def _first(p) -> str:
    """The key of the operand the gradient is taken in (the second is ``y``, or ``b`` for SDDMM)."""
    return 'a' if p['name'] == 'csr_sddmm' else 'params' if p['name'] in _JITC else 'w'


def _operands(p, b):
    return (p['a'][b], p['b']) if p['name'] == 'csr_sddmm' else (p[_first(p)][b], p['y'][b])


def _close(got, want, dtype) -> str | None:
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    if got.shape != want.shape:
        return f'shape {got.shape}, expected {want.shape}'
    if not np.array_equal(np.isnan(got), np.isnan(want)):
        return f'NaN at {np.flatnonzero(np.isnan(got) != np.isnan(want))[:5]}'
    tol = TOLERANCE[np.dtype(dtype)]
    finite = np.isfinite(want)
    with np.errstate(invalid='ignore'):  # inf - inf where an infinity is expected: compared exactly below
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
    first, second = p[_first(p)], (p['b'] if name == 'csr_sddmm' else p['y'])
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
        q = {**p, _first(p): np.stack([step.reshape(x0.shape)] * 2)}
        want[i] = np.sum(oracle(q, 0) * ct)
    report('jit(grad)', grad.reshape(-1), want)
