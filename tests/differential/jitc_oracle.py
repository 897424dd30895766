"""The contract's oracle for the JITC operators, built from the ``jax`` backend's ``JITCMatrix.todense()``.

A JITC matrix is a fixed 0/1 pattern (from ``seed`` and ``prob``) times
per-connection weights ``params[0]`` (homo), ``low + (high - low) * u``
(uniform) or ``loc + scale * z`` (normal), with ``u`` and ``z`` fixed by
the seed too. The pattern, ``u`` and ``z`` are read off ``todense()`` with
unit parameters (exact in float32); the weights are then formed in NumPy
from the drawn parameters, NaN and Inf included, so the products follow
IEEE arithmetic exactly as the other families' oracle does.
"""

from __future__ import annotations

import functools

import numpy as np

import eventjax as ej
from eventjax.kernels.jitc.generator import span_of
from tests.differential.oracle import Value, _as_2d, _round, _source_values, canonical, result_dtype
from tests.differential.strategies import Problem

UNIT = {'homo': np.float32(1.0), 'uniform': (np.float32(0.0), np.float32(1.0)),
        'normal': (np.float32(0.0), np.float32(1.0))}


def call_error(problem: Problem) -> type | None:
    """``ValueError`` when rows, or columns plus the largest gap between connections, reach 2**31.

    The column index is int32; a tiny ``prob`` makes the gap (``span``) huge.
    """
    m, n = problem.shape
    return ValueError if max(m, n + span_of(problem.prob)) >= 2**31 else None


@functools.lru_cache(maxsize=256)
def unit_dense(seed: int, prob: float, shape: tuple, law: str) -> np.ndarray:
    """``todense()`` of the ``jax`` backend's matrix with unit parameters (pattern, ``u`` or ``z``), float64."""
    m, n = shape
    if m == 0 or n == 0:
        return np.zeros(shape)
    A = ej.JITCMatrix(UNIT[law], prob=prob, seed=seed, shape=shape, law=law, backend='jax')
    return np.asarray(A.todense(), np.float64)


def parts(problem: Problem):
    """``(mask, coefficients)``: the pattern and, per parameter, the matrix it multiplies."""
    key = (problem.seed, problem.prob, tuple(problem.shape))
    mask = unit_dense(*key, 'homo') != 0
    if problem.law == 'homo':
        return mask, (mask * 1.0,)
    draws = np.where(mask, unit_dense(*key, problem.law), 0.0)
    if problem.law == 'uniform':
        return mask, (np.where(mask, 1.0 - draws, 0.0), draws)
    return mask, (mask * 1.0, draws)


def weights(problem: Problem) -> np.ndarray:
    """Each connection's weight (float64), formed in the dtype the product computes in."""
    mask, _ = parts(problem)
    dtype = result_dtype(problem)
    acc = np.float64 if dtype == np.float64 else np.float32
    p = np.asarray(problem.structure[0]).reshape(-1).astype(canonical(problem.structure[0].dtype))
    p = p.astype(dtype).astype(acc)
    key = (problem.seed, problem.prob, tuple(problem.shape))
    with np.errstate(invalid='ignore', over='ignore'):
        if problem.law == 'homo':
            w = np.full(problem.shape, p[0], acc)
        else:
            d = unit_dense(*key, problem.law).astype(acc)
            w = p[0] + (p[1] - p[0]) * d if problem.law == 'uniform' else p[0] + p[1] * d
        w = w.astype(dtype).astype(np.float64)
    return np.where(mask, w, 0.0)


def _oriented(a: np.ndarray, problem: Problem) -> np.ndarray:
    """``a`` as (destination, source)."""
    return a.T if problem.transpose else a


def _sum_terms(mask, w, src, ct=None):
    """Sums over connections of ``w * src`` (or ``w * src * ct``), and of their absolute values."""
    terms = np.where(mask[:, :, None], w[:, :, None] * src[None, :, :], 0.0)
    if ct is not None:
        terms = np.where(mask[:, :, None], terms * ct[:, None, :], 0.0)
    return terms, np.abs(terms)


def forward(problem: Problem, x) -> Value:
    """``op(params, x)``: non-events add nothing (NaN weight or not); float products are IEEE."""
    mask, _ = parts(problem)
    mask, w = _oriented(mask, problem), _oriented(weights(problem), problem)
    src = _source_values(problem, x)
    with np.errstate(invalid='ignore', over='ignore'):
        if problem.binary:
            terms = np.where(mask[:, :, None] & src[None, :, :].astype(bool), w[:, :, None], 0.0)
        else:
            terms, _ = _sum_terms(mask, w, src)
        value, scale = terms.sum(1), np.abs(terms).sum(1)
    return _round(value, scale, result_dtype(problem), (mask.shape[0], *np.shape(x)[1:]))


def weight_grad(problem: Problem) -> Value:
    """d/d params of ``sum(op(...) * ct)``: ``<ct, A_k x>`` for each parameter's matrix ``A_k``."""
    mask, coefs = parts(problem)
    mask = _oriented(mask, problem)
    src = _source_values(problem, problem.x).astype(np.float64)
    ct = _as_2d(problem.ct)
    value, scale = [], []
    with np.errstate(invalid='ignore', over='ignore'):
        for c in coefs:
            terms, abs_terms = _sum_terms(mask, _oriented(c, problem), src, ct)
            value.append(terms.sum())
            scale.append(abs_terms.sum())
    w = np.asarray(problem.structure[0])
    return _round(np.array(value), np.array(scale), canonical(w.dtype), w.shape)


def operand_grad(problem: Problem) -> Value:
    """d/d x of ``sum(op(...) * ct)`` for a float operator: ``A^T ct``, in x's dtype."""
    mask, _ = parts(problem)
    mask, w = _oriented(mask, problem), _oriented(weights(problem), problem)
    ct = _as_2d(problem.ct)
    with np.errstate(invalid='ignore', over='ignore'):
        terms = np.where(mask[:, :, None], w[:, :, None] * ct[:, None, :], 0.0)
        value, scale = terms.sum(0), np.abs(terms).sum(0)
    return _round(value, scale, canonical(problem.x.dtype), problem.x.shape)
