"""Hypothesis strategies that draw problems for the standard operators.

Hypothesis draws the knobs (sizes, dtypes, densities, how much NaN/Inf, how
the structure is broken) and a seed; a NumPy generator seeded with it fills
the arrays. Knobs shrink to readable failures; filling by seed keeps a draw
cheap. Sizes come from a few buckets so compiled kernels are reused across
draws: compilation, not arithmetic, is what a draw costs.
"""

from __future__ import annotations

import attrs
import jax
import numpy as np
from hypothesis import strategies as st

FAMILIES = {
    'dense': ('binary_densemv', 'binary_densemm'),
    'csr': ('csrmv', 'csrmm', 'binary_csrmv', 'binary_csrmm'),
    'fcn': ('fcnmv', 'fcnmm', 'binary_fcnmv', 'binary_fcnmm'),
    'jitc': ('jitcmv', 'jitcmm', 'binary_jitcmv', 'binary_jitcmm'),
}
OPERATORS = tuple(name for names in FAMILIES.values() for name in names)
# Buckets: 0 and 1 are the edge cases, the others are small but not special.
SIZES = (1, 0, 5, 16)
NNZ = (6, 0, 1, 24)
CONN = (1, 0, 4)
COLS = (1, 0, 3)
BATCH = 2
# A float far beyond float16's range: a float16 x float32 product must not overflow.
BIG = 7.0e4
INVALID_KINDS = {
    'csr': ('column_high', 'column_negative', 'indptr_high', 'indptr_negative', 'indptr_unsorted',
            'indptr_start'),
    'fcn': ('column_high', 'column_negative'),
    'dense': (),
    'jitc': (),
}
LAWS = ('homo', 'uniform', 'normal')


def family(name: str) -> str:
    """The family (``'dense'``, ``'csr'``, ``'fcn'``) of operator ``name``."""
    return next(f for f, names in FAMILIES.items() if name in names)


@attrs.frozen(eq=False)
class Problem:
    """One drawn call of an operator: NumPy operands, statics, cotangent and batch.

    ``structure`` is everything before the vector/matrix operand ``x``:
    ``(weights,)``, ``(data, indices, indptr)`` or ``(weights, indices)``;
    for a JITC operator ``(params,)``, the law's parameters as one array
    (``law``, ``prob`` and ``seed`` fix the rest of the matrix).
    ``xs`` stacks ``BATCH`` operands (``xs[0] is x``) for ``vmap``; ``ct``
    is a float64 cotangent of the result's shape, exact in every float dtype.
    """

    name: str
    structure: tuple
    x: np.ndarray
    xs: np.ndarray
    ct: np.ndarray
    transpose: bool
    shape: tuple
    promotion: str
    corruption: str = 'none'
    law: str = 'homo'
    prob: float = 0.0
    seed: int = 0

    @property
    def family(self) -> str:
        return family(self.name)

    @property
    def binary(self) -> bool:
        return self.name.startswith('binary_')

    @property
    def matrix(self) -> bool:
        return self.name.endswith('mm')

    @property
    def args(self) -> tuple:
        return (*self.structure, self.x)

    @property
    def statics(self) -> dict:
        if self.family == 'dense':
            return {'transpose': self.transpose}
        if self.family == 'jitc':
            return {'transpose': self.transpose, 'shape': self.shape, 'seed': self.seed, 'prob': self.prob,
                    'law': self.law}
        return {'transpose': self.transpose, 'shape': self.shape}

    def describe(self) -> str:
        """A short, reproducible description (dtypes, shapes, statics)."""
        parts = ', '.join(f'{a.dtype}{list(a.shape)}' for a in self.args)
        return (f'{self.name}({parts}, {self.statics}) promotion={self.promotion} '
                f'corruption={self.corruption}')


def x64() -> bool:
    return bool(jax.config.jax_enable_x64)


def float_dtypes() -> tuple[str, ...]:
    return ('float32', 'float16', 'float64') if x64() else ('float32', 'float16')


def _values(rng, size, dtype, special: float, big: float = 0.0) -> np.ndarray:
    """Multiples of 1/8 in [-8, 8] (exact in every float dtype), with NaN/Inf and BIG sprinkled in."""
    v = rng.integers(-64, 65, size=size) / 8.0
    if big:
        v = np.where(rng.random(size) < big, BIG * rng.choice([-1.0, 1.0], size=size), v)
    if special:
        v = np.where(rng.random(size) < special, rng.choice([np.nan, np.inf, -np.inf], size=size), v)
    return v.astype(dtype)


def _events(rng, shape, dtype, density: float, special: float) -> np.ndarray:
    """Events of ``dtype`` with about ``density`` of them; non-events are 0, negative or NaN."""
    hit = rng.random(shape) < density
    if dtype == 'bool':
        return hit
    if dtype.startswith('int'):
        return np.where(hit, rng.integers(1, 4, size=shape), rng.integers(-3, 1, size=shape)).astype(dtype)
    on = rng.choice([0.5, 1.0, 2.0], size=shape)
    off = rng.choice([0.0, -0.0, -1.0], size=shape)
    if special:
        on = np.where(rng.random(shape) < special, np.inf, on)
        off = np.where(rng.random(shape) < special, rng.choice([np.nan, -np.inf], size=shape), off)
    return np.where(hit, on, off).astype(np.dtype(getattr(jax.numpy, dtype)))


def _floats(rng, shape, dtype, special: float, big: float) -> np.ndarray:
    """A float product's operand: floats (with NaN/Inf, BIG where it fits), small ints or bools."""
    if dtype == 'bool':
        return rng.random(shape) < 0.5
    if dtype.startswith('int'):
        return rng.integers(-4, 5, size=shape).astype(dtype)
    return _values(rng, shape, dtype, special, big if dtype != 'float16' else 0.0)


def _indptr(rng, m: int, nnz: int, short_tail: bool) -> np.ndarray:
    end = int(rng.integers(0, nnz + 1)) if short_tail else nnz
    cuts = np.sort(rng.integers(0, end + 1, size=max(m - 1, 0)))
    return np.concatenate([[0], cuts, [end]]) if m else np.array([0])


def _corrupt_columns(rng, indices, n, kind, index_dtype, used=None):
    """Put 1 or 2 bad columns among the first ``used`` entries (all when None).

    A CSR entry past ``indptr[-1]`` belongs to no row; whether eager validation
    must look at it is left open, so the strategies never put a bad column there.
    """
    flat = indices.reshape(-1)
    used = flat.size if used is None else used
    if used == 0:
        return indices
    limit = np.iinfo(np.int32).max  # traced int64 becomes int32 without x64
    if kind == 'column_high':
        bad = rng.choice([n, n + 1, n + 7, limit])
    else:
        bad = rng.choice([-1, -2, -n - 1, -limit - 1])
    flat = flat.copy()
    flat[rng.integers(0, used, size=int(rng.integers(1, 3)))] = bad
    return flat.reshape(indices.shape).astype(index_dtype)


def _corrupt_indptr(rng, indptr, nnz, kind):
    indptr = indptr.copy()
    pos = int(rng.integers(0, indptr.size))
    if kind == 'indptr_high':
        indptr[pos] = nnz + int(rng.integers(1, 4))
    elif kind == 'indptr_negative':
        indptr[pos] = -int(rng.integers(1, 4))
    elif kind == 'indptr_start':
        indptr[0] = rng.choice([-1, 1, 2])
    elif indptr.size > 1:  # unsorted: one pointer below its predecessor
        pos = max(pos, 1)
        indptr[pos] = indptr[pos - 1] - int(rng.integers(1, 3))
    return indptr


@st.composite
def _knobs(draw, name: str) -> dict:
    fam = family(name)
    floats = float_dtypes()
    knobs = {
        'seed': draw(st.integers(0, 2**32 - 1)),
        'm': draw(st.sampled_from(SIZES)),
        'n': draw(st.sampled_from(SIZES)),
        'cols': draw(st.sampled_from(COLS)),
        'transpose': draw(st.booleans()),
        'weight_dtype': draw(st.sampled_from(floats)),
        'index_dtype': draw(st.sampled_from(('int32', 'int64'))),
        'homogeneous': fam != 'dense' and draw(st.booleans()),
        'law': draw(st.sampled_from(LAWS)),
        # 1e-12 and a subnormal: a gap between connections beyond the int32 index (refused unless n == 0).
        'prob': draw(st.one_of(st.sampled_from((0.0, 1.0, 1e-12, 5e-324)), st.floats(0.0, 1.0))),
        'matrix_seed': draw(st.integers(0, 2**32 - 1)),
        'scalar_weight': draw(st.booleans()),
        'weight_special': draw(st.sampled_from((0.0, 0.1, 0.5))),
        'x_special': draw(st.sampled_from((0.0, 0.1, 0.5))),
        'big': draw(st.sampled_from((0.0, 0.2))),
        'density': draw(st.one_of(st.sampled_from((0.0, 1.0)), st.floats(0.0, 1.0))),
        'promotion': draw(st.sampled_from(('standard', 'strict'))),
        'nnz': draw(st.sampled_from(NNZ)),
        'conn': draw(st.sampled_from(CONN)),
        'short_tail': draw(st.booleans()) and draw(st.booleans()),
        'corruption': draw(st.sampled_from(('none',) * 2 + INVALID_KINDS[fam]))
        if INVALID_KINDS[fam] else 'none',
    }
    if name.startswith('binary_'):
        # bfloat16: no kernel language has it; events of it are widened before the kernel.
        knobs['x_dtype'] = draw(st.sampled_from(('bool', 'float32', 'int32', 'float16', 'int8', 'bfloat16',
                                                 *floats[2:])))
    else:
        knobs['x_dtype'] = draw(st.sampled_from((*floats, 'int32', 'bool')))
    return knobs


def _jitc_params(rng, k) -> np.ndarray:
    """The law's parameters, NaN/Inf included, kept valid (``low <= high``, ``scale >= 0`` unless NaN)."""
    if k['law'] == 'homo':
        return _values(rng, () if k['scalar_weight'] else (1,), k['weight_dtype'], k['weight_special'])
    a, b = _values(rng, (2,), 'float64', k['weight_special'])
    if k['law'] == 'uniform' and a > b:
        a, b = b, a
    if k['law'] == 'normal':
        b = abs(b)
    return np.array([a, b]).astype(k['weight_dtype'])


def _structure(rng, name, k) -> tuple:
    fam, m, n = family(name), k['m'], k['n']
    wdt, idt = k['weight_dtype'], k['index_dtype']
    if fam == 'jitc':
        return (_jitc_params(rng, k),)
    if fam == 'dense':
        return (_values(rng, (m, n), wdt, k['weight_special']),)
    if fam == 'csr':
        nnz = k['nnz'] if n else 0
        indices = rng.integers(0, max(n, 1), size=nnz).astype(idt)
        indptr = _indptr(rng, m, nnz, k['short_tail']).astype(idt)
        if k['corruption'].startswith('column'):
            indices = _corrupt_columns(rng, indices, n, k['corruption'], idt, used=int(indptr[-1]))
        elif k['corruption'] != 'none':
            indptr = _corrupt_indptr(rng, indptr, nnz, k['corruption']).astype(idt)
        wshape = ((1,) if not k['scalar_weight'] else ()) if k['homogeneous'] else (nnz,)
        return _values(rng, wshape, wdt, k['weight_special']), indices, indptr
    conn = k['conn'] if n or k['corruption'] != 'none' else 0
    indices = rng.integers(0, max(n, 1), size=(m, conn)).astype(idt)
    if k['corruption'] != 'none':
        indices = _corrupt_columns(rng, indices, n, k['corruption'], idt)
    wshape = ((1,) if not k['scalar_weight'] else ()) if k['homogeneous'] else (m, conn)
    return _values(rng, wshape, wdt, k['weight_special']), indices


@st.composite
def problems(draw, name: str) -> Problem:
    """Problems for operator ``name`` (valid and, for CSR and FCN, broken structure).

    A JITC problem draws the law, its parameters (NaN/Inf included), ``prob``
    (0 and 1 included) and the matrix seed instead of stored structure.

    Example:
        >>> from hypothesis import given
        >>> @given(problems('csrmv'))
        ... def test(problem): ...
    """
    k = draw(_knobs(name))
    rng = np.random.default_rng(k['seed'])
    m, n, transpose = k['m'], k['n'], k['transpose']
    structure = _structure(rng, name, k)
    length = m if transpose else n
    shape = (length, k['cols']) if name.endswith('mm') else (length,)
    out_shape = ((n if transpose else m), *shape[1:])
    if name.startswith('binary_'):
        xs = np.stack([_events(rng, shape, k['x_dtype'], k['density'], k['x_special']) for _ in range(BATCH)])
    else:
        xs = np.stack([_floats(rng, shape, k['x_dtype'], k['x_special'], k['big']) for _ in range(BATCH)])
    ct = rng.integers(-8, 9, size=out_shape) / 4.0
    return Problem(name=name, structure=structure, x=xs[0], xs=xs, ct=ct, transpose=transpose,
                   shape=(m, n), promotion=k['promotion'], corruption=k['corruption'],
                   law=k['law'], prob=k['prob'], seed=k['matrix_seed'])
