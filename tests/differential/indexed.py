"""Drawn problems for the index-list operators (``binary_csrmv_indexed``, ``binary_csrmm_indexed``,
``csr_slice_rows``) and their check.

Hypothesis draws sizes (0, 1 and small ones), weight dtypes, homogeneous or
per-entry weights, a weight permutation (with entries outside ``data`` when
traced), index lists with repeats, indices outside the event side and
overflowing counts, and row lists with rows outside the matrix. Every backend
is compared, under eager, ``jit``, ``vmap`` and ``jit(grad)``, with a dense
NumPy oracle written from the Semantics page.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from hypothesis import strategies as st

import eventjax as ej
from tests.differential.oracle import TOLERANCE

OPERATORS = ('binary_csrmv_indexed', 'binary_csrmm_indexed', 'csr_slice_rows', 'binary_csrmv_packed',
             'binary_fcnmv_packed')
PACKED = ('binary_csrmv_packed', 'binary_fcnmv_packed')


@st.composite
def problems(draw, name: str) -> dict:
    """One drawn call of operator ``name``: a dict of NumPy operands and statics."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    m, n = draw(st.sampled_from((0, 1, 5, 16))), draw(st.sampled_from((0, 1, 5, 16)))
    nnz = draw(st.sampled_from((0, 1, 6, 24))) if m and n else 0  # valid structure: columns in [0, n)
    if name == 'binary_fcnmv_packed':
        k = draw(st.sampled_from((1, 3))) if n else 0
        nnz = m * k
    dtype = draw(st.sampled_from(('float32', 'float16')))
    cuts = np.sort(rng.integers(0, nnz + 1, max(m - 1, 0)))
    indptr = np.concatenate([[0], cuts, [nnz]]).astype(np.int32) if m else np.zeros(1, np.int32)
    if name == 'binary_fcnmv_packed':
        indptr = (np.arange(m + 1) * k).astype(np.int32)  # k entries per row: _dense reads it as a CSR
    indices = rng.integers(0, max(n, 1), nnz).astype(np.int32)
    homogeneous = draw(st.booleans())
    data = (rng.integers(-8, 9, 1 if homogeneous else nnz) / 4).astype(dtype)
    p = {'name': name, 'data': data, 'indices': indices, 'indptr': indptr, 'shape': (m, n)}
    if name == 'csr_slice_rows':
        k = draw(st.sampled_from((1, 3, 7)))
        p['rows'] = rng.integers(-2, m + 2, (2, k)).astype(np.int32)  # 2: a batch for vmap
        return p
    if name in PACKED:
        p['transpose'] = draw(st.booleans())
        size = m if p['transpose'] else n
        p['spikes'] = rng.random((2, size)) < draw(st.sampled_from((0.0, 0.2, 1.0)))
        words = np.stack([np.asarray(ej.bitpack(s)) for s in p['spikes']]).reshape(2, -(-size // 32))
        if size % 32 and draw(st.booleans()):
            words[:, -1] |= np.uint32(0xFFFFFFFF) << np.uint32(size % 32)  # bits past the last neuron
        p['words'] = words
        return p
    p['perm'] = rng.permutation(nnz).astype(np.int32) if draw(st.booleans()) and not homogeneous else None
    cap = draw(st.sampled_from((1, 4, 9)))
    p['ids'] = rng.integers(-2, m + 2, (2, cap)).astype(np.int32)
    p['count'] = np.array([rng.integers(0, cap + 1), rng.integers(0, cap + 2)], np.int32)  # the 2nd may overflow
    if name == 'binary_csrmm_indexed':
        k = draw(st.sampled_from((1, 3)))
        B = rng.integers(-1, 2, (2, m, k))  # > 0 are events; bool or float
        p['B'] = B > 0 if draw(st.booleans()) else B.astype(np.float32)
    return p


def _dense(p) -> np.ndarray:
    m, n = p['shape']
    A = np.zeros((m, n))
    data, perm = p['data'].astype(np.float64), p.get('perm')
    for i in range(m):
        for k in range(p['indptr'][i], p['indptr'][i + 1]):
            A[i, p['indices'][k]] += data[0] if data.size == 1 else data[k if perm is None else perm[k]]
    return A


def oracle(p, b: int) -> np.ndarray:
    """The expected result of batch element ``b``."""
    m, n = p['shape']
    A = _dense(p)
    if p['name'] == 'csr_slice_rows':
        return np.stack([A[r] if 0 <= r < m else np.zeros(n) for r in p['rows'][b]])
    if p['name'] in PACKED:
        s = p['spikes'][b].astype(float)
        return s @ A if p['transpose'] else A @ s
    ids, count = p['ids'][b], int(p['count'][b])
    if count > ids.size:
        return np.full((p['B'][b].shape[1], n) if p['name'] == 'binary_csrmm_indexed' else n, np.nan)
    t = np.zeros(m)
    for r in ids[:count]:
        if 0 <= r < m:
            t[r] += 1
    if p['name'] == 'binary_csrmm_indexed':
        return (t[:, None] * (p['B'][b] > 0)).T @ A
    return t @ A


def call(p, data, b_operand, *, backend):
    if p['name'] == 'binary_csrmv_packed':
        return ej.binary_csrmv_packed(data, p['indices'], p['indptr'], b_operand, shape=p['shape'],
                                      transpose=p['transpose'], backend=backend)
    if p['name'] == 'binary_fcnmv_packed':
        m, k = p['shape'][0], p['indptr'][1] if p['shape'][0] else 0
        weights = data if data.size == 1 else data.reshape(m, k)
        return ej.binary_fcnmv_packed(weights, p['indices'].reshape(m, k), b_operand, shape=p['shape'],
                                      transpose=p['transpose'], backend=backend)
    if p['name'] == 'csr_slice_rows':
        return ej.csr_slice_rows(data, p['indices'], p['indptr'], b_operand, shape=p['shape'], backend=backend)
    if p['name'] == 'binary_csrmm_indexed':
        return ej.binary_csrmm_indexed(data, p['indices'], p['indptr'], p['perm'], b_operand, shape=p['shape'],
                                       transpose=True, backend=backend).T
    ids, count = b_operand
    return ej.binary_csrmv_indexed(data, p['indices'], p['indptr'], p['perm'], (ids, count), shape=p['shape'],
                                   transpose=True, backend=backend)


def _operand(p, b):
    if p['name'] in PACKED:
        return p['words'][b]
    if p['name'] == 'binary_csrmm_indexed':
        return p['ids'][b], p['count'][b], p['B'][b]
    return p['rows'][b] if p['name'] == 'csr_slice_rows' else (p['ids'][b], p['count'][b])


def _close(got, want, dtype) -> str | None:
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    if got.shape != want.shape:
        return f'shape {got.shape}, expected {want.shape}'
    if not np.array_equal(np.isnan(got), np.isnan(want)):
        return f'NaN at {np.flatnonzero(np.isnan(got) != np.isnan(want))[:5]}'
    tol = TOLERANCE[np.dtype(dtype)]
    ok = np.isnan(want) | (np.abs(got - want) <= tol * (1 + np.abs(want)))
    return None if ok.all() else f'got {got[~ok][:3]}, expected {want[~ok][:3]}'


def check(p) -> list[str]:
    """What disagrees with the oracle, per backend and transformation (empty: all agree)."""
    bad: list[str] = []
    primitive = 'binary_csrmv_packed' if p['name'] in PACKED else p['name']  # one primitive for both
    for backend in ej.get_registry()[primitive].available_backends('cpu'):
        _check_backend(p, backend, bad)
    return bad


def _check_backend(p, backend: str, bad: list) -> None:
    name, dtype = p['name'], p['data'].dtype

    def report(what, got, want):
        why = _close(got, want, dtype)
        if why:
            bad.append(f'{name} {backend} {what}: {why} (shape {p["shape"]}, dtype {dtype})')

    f = jax.jit(lambda d, x: call(p, d, x, backend=backend))
    for b in range(2):
        report(f'jit[{b}]', f(p['data'], _operand(p, b)), oracle(p, b))
    if name == 'csr_slice_rows' or name in PACKED or int(p['count'][0]) <= p['ids'].shape[1]:  # overflow raises
        report('eager', call(p, p['data'], _operand(p, 0), backend=backend), oracle(p, 0))
    batched = p['rows'] if name == 'csr_slice_rows' else p['words'] if name in PACKED else (
        p['ids'], p['count'], *([p['B']] if 'B' in p else []))
    report('vmap', jax.vmap(lambda x: call(p, p['data'], x, backend=backend))(batched),
           np.stack([oracle(p, 0), oracle(p, 1)]))
    if np.isnan(oracle(p, 0)).any() or not p['data'].size:
        return
    ct = np.ones_like(oracle(p, 0), np.float32)
    loss = lambda d: jnp.sum(call(p, d, _operand(p, 0), backend=backend).astype(jnp.float32) * ct)
    grad = jax.jit(jax.grad(loss))(p['data'].astype(np.float32))
    # The product is linear in data: a unit step of one weight changes the loss by its gradient.
    want = np.array([np.sum(oracle({**p, 'data': _bump(p['data'], i)}, 0) * ct) - np.sum(oracle(p, 0) * ct)
                     for i in range(p['data'].size)])
    report('jit(grad)', grad, want)


def _bump(data, i):
    d = data.astype(np.float64).copy()
    d[i] += 1.0
    return d
