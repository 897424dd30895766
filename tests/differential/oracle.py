"""A dense NumPy oracle written from the semantics contract, and the tolerance check.

Nothing here calls eventjax. Every product is a sum of terms over the
stored entries that survive the index policy: a binary operator sums the
weights of the entries whose source is an event (a non-event contributes
nothing, NaN weight or not); a float operator sums ``w * x`` in IEEE
arithmetic. Sums are exact in float64 for the drawn values, then rounded
to the result's dtype. JAX is used only for its dtype promotion rules.
"""

from __future__ import annotations

import attrs
import jax
import jax.numpy as jnp
import numpy as np

from tests.differential.strategies import Problem

# Contract tolerances: |got - want| <= atol + rtol * (sum of |terms|).
TOLERANCE = {np.dtype(jnp.bfloat16): 2e-2, np.dtype('float16'): 1e-2, np.dtype('float32'): 1e-5,
             np.dtype('float64'): 1e-12}


@attrs.frozen(eq=False)
class Value:
    """An expected array: float64 values already rounded to ``dtype``, and the sum of |terms|."""

    value: np.ndarray
    scale: np.ndarray
    dtype: np.dtype
    precision: np.dtype | None = None  # the dtype the value was computed in, when coarser than ``dtype``


@attrs.frozen(eq=False)
class Entries:
    """The stored entries that count: destination, source, and which weight each uses."""

    dst: np.ndarray
    src: np.ndarray
    weight: np.ndarray  # index into the flattened weights


def canonical(dtype) -> np.dtype:
    """The dtype JAX gives a NumPy array of ``dtype`` (float64 becomes float32 without x64)."""
    return np.dtype(jax.dtypes.canonicalize_dtype(np.dtype(dtype)))


def structure_error(problem: Problem) -> str | None:
    """Why the structure is invalid under the contract's index policy, or None."""
    m, n = problem.shape
    if problem.family in ('dense', 'jitc'):  # a JITC matrix has no stored structure to break
        return None
    indices = np.asarray(problem.structure[1]).reshape(-1)
    bad = np.flatnonzero((indices < 0) | (indices >= n))
    if bad.size:
        return f'column index {indices[bad[0]]} at {bad[0]} outside [0, {n})'
    if problem.family == 'csr':
        indptr = np.asarray(problem.structure[2])
        if indptr[0] != 0 or np.any(np.diff(indptr) < 0) or indptr[-1] > indices.size:
            return f'indptr {indptr.tolist()} is not a valid row pointer for {indices.size} entries'
    return None


def entries(problem: Problem) -> Entries:
    """The entries that contribute, after dropping bad columns and repairing ``indptr``."""
    m, n = problem.shape
    if problem.family == 'dense':
        rows, cols = np.divmod(np.arange(m * n), n) if n else (np.zeros(0, int), np.zeros(0, int))
        windex = np.arange(m * n)
    elif problem.family == 'csr':
        _, indices, indptr = problem.structure
        nnz = indices.size
        p = np.maximum.accumulate(np.clip(indptr.astype(np.int64), 0, nnz))
        owner = np.full(nnz, -1)
        for i in range(m):
            owner[p[i]:p[i + 1]] = i
        keep = owner >= 0
        rows, cols, windex = owner[keep], indices.astype(np.int64)[keep], np.flatnonzero(keep)
    else:
        _, indices = problem.structure
        conn = indices.shape[1]
        rows, cols = np.repeat(np.arange(m), conn), indices.astype(np.int64).reshape(-1)
        windex = np.arange(m * conn)
    keep = (cols >= 0) & (cols < n)
    rows, cols, windex = rows[keep], cols[keep], windex[keep]
    if np.asarray(problem.structure[0]).size == 1 and problem.family != 'dense':
        windex = np.zeros_like(windex)  # one homogeneous weight
    if problem.transpose:
        return Entries(dst=cols, src=rows, weight=windex)
    return Entries(dst=rows, src=cols, weight=windex)


def result_dtype(problem: Problem) -> np.dtype:
    """JAX's promotion of weights and operand (the weights' dtype for a binary operator).

    Raises whatever JAX raises for the pair under the problem's promotion mode.
    """
    wdt = canonical(problem.structure[0].dtype)
    if problem.binary:
        return wdt
    with jax.numpy_dtype_promotion(problem.promotion):
        return np.dtype(jnp.result_type(wdt, canonical(problem.x.dtype)))


def is_event(x) -> np.ndarray:
    x = np.asarray(x)
    return x if x.dtype == bool else x > 0


def _as_2d(x) -> np.ndarray:
    """A vector as one column, a matrix as it is."""
    x = np.asarray(x)
    return x.reshape(x.shape[0], 1) if x.ndim == 1 else x


def _source_values(problem: Problem, x) -> np.ndarray:
    """What each source entry multiplies by, in float64, 2-D (rows, columns)."""
    x = np.asarray(x)
    x2 = _as_2d(x)
    if problem.binary:
        return is_event(x2)
    return x2.astype(canonical(x.dtype)).astype(np.float64)


def _weights(problem: Problem) -> np.ndarray:
    w = np.asarray(problem.structure[0])
    return w.astype(canonical(w.dtype)).astype(np.float64).reshape(-1)


def _round(value, scale, dtype, shape) -> Value:
    dtype = np.dtype(dtype)
    with np.errstate(over='ignore', invalid='ignore'):
        rounded = value.astype(dtype).astype(np.float64)
    return Value(rounded.reshape(shape), scale.reshape(shape), dtype)


def forward(problem: Problem, x) -> Value:
    """``op(*structure, x)`` as the contract defines it."""
    e = entries(problem)
    dtype = result_dtype(problem)
    src = _source_values(problem, x)
    w = _weights(problem)
    out_len = problem.shape[1] if problem.transpose else problem.shape[0]
    value = np.zeros((out_len, src.shape[1]))
    scale = np.zeros_like(value)
    with np.errstate(invalid='ignore', over='ignore'):
        if problem.binary:
            terms = np.where(src[e.src], w[e.weight][:, None], 0.0)  # a non-event adds exactly nothing
        else:
            terms = w[e.weight][:, None] * src[e.src]
        np.add.at(value, e.dst, terms)
        np.add.at(scale, e.dst, np.abs(terms))
    return _round(value, scale, dtype, (out_len, *np.shape(x)[1:]))


def weight_grad(problem: Problem) -> Value:
    """d/d weights of ``sum(op(...) * ct)``, in the weights' dtype; dropped entries get 0."""
    e = entries(problem)
    w = np.asarray(problem.structure[0])
    src = _source_values(problem, problem.x).astype(np.float64)
    ct = _as_2d(problem.ct)
    with np.errstate(invalid='ignore', over='ignore'):
        terms = (ct[e.dst] * src[e.src]).sum(axis=1)
        abs_terms = np.abs(ct[e.dst] * src[e.src]).sum(axis=1)
        value = np.zeros(w.size)
        scale = np.zeros(w.size)
        np.add.at(value, e.weight, terms)
        np.add.at(scale, e.weight, abs_terms)
    return _round(value, scale, canonical(w.dtype), w.shape)


def operand_grad(problem: Problem) -> Value:
    """d/d x of ``sum(op(...) * ct)`` for a float operator: ``A^T ct``, in x's dtype."""
    e = entries(problem)
    w = _weights(problem)
    ct = _as_2d(problem.ct)
    x2 = _as_2d(problem.x)
    value = np.zeros(x2.shape)
    scale = np.zeros(x2.shape)
    with np.errstate(invalid='ignore', over='ignore'):
        terms = w[e.weight][:, None] * ct[e.dst]
        np.add.at(value, e.src, terms)
        np.add.at(scale, e.src, np.abs(terms))
    return _round(value, scale, canonical(problem.x.dtype), problem.x.shape)


def mismatch(got, want: Value) -> str | None:
    """None when ``got`` equals ``want`` within the contract's tolerance, else what differs.

    Shapes and dtypes must be equal, NaN positions equal, infinities equal,
    and finite values within ``tol * (1 + sum of |terms|)``.
    """
    got = np.asarray(got)
    if got.shape != want.value.shape:
        return f'shape {got.shape}, expected {want.value.shape}'
    if got.dtype != want.dtype:
        return f'dtype {got.dtype}, expected {want.dtype}'
    g = got.astype(np.float64)
    w = want.value
    nan = np.isnan(w)
    if np.any(np.isnan(g) != nan):
        at = np.argwhere(np.isnan(g) != nan)[0]
        return f'NaN differs at {tuple(at)}: got {g[tuple(at)]}, expected {w[tuple(at)]}'
    inf = np.isinf(w) | np.isinf(g)
    if np.any(inf & (g != w)):
        at = np.argwhere(inf & (g != w))[0]
        return f'infinity differs at {tuple(at)}: got {g[tuple(at)]}, expected {w[tuple(at)]}'
    tol = max(TOLERANCE.get(want.dtype, 0.0), TOLERANCE.get(np.dtype(want.precision or want.dtype), 0.0))
    with np.errstate(invalid='ignore'):
        bad = ~nan & ~inf & ~(np.abs(g - w) <= tol * (1 + want.scale))
    if np.any(bad):
        at = tuple(np.argwhere(bad)[0])
        return f'value differs at {at}: got {g[at]}, expected {w[at]} (tolerance {tol} x (1 + {want.scale[at]}))'
    return None
