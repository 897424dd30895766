"""The standard operators as the stress workers see them: random cases and NumPy answers.

Whatever operators and backends the installed eventjax has are discovered at
import (``eventjax.primitives()``), so the scenarios run unchanged while
families and backends land. Every case carries its dense float64 NumPy
answer; no eventjax code computes it.
"""

from __future__ import annotations

import functools

import attrs
import jax
import numpy as np

import eventjax as ej

# Families, in the order the DESIGN lists them; a family absent here is skipped.
FAMILIES = {
    'dense': ('binary_densemv', 'binary_densemm'),
    'csr': ('csrmv', 'csrmm', 'binary_csrmv', 'binary_csrmm'),
    'fcn': ('fcnmv', 'fcnmm', 'binary_fcnmv', 'binary_fcnmm'),
}
# A small set of shapes, so caches are both hit and missed. Every drawn
# structure of one shape has the same number of stored entries (DENSITY), so
# cases of one (operator, shape, transpose, homogeneous weights, event dtype)
# share their compiled code: the set of executables a run can compile is
# bounded, and a long run pays for all of it early.
SHAPES = ((8, 12), (16, 16), (5, 33))
DENSITY = 0.3
MM_COLS = (3,)
FCN_CONN = 4
# Pallas in interpret mode costs tens of ms per call and is not registered on
# the cpu unless asked for; the standard kernels have no pallas cpu kernel.
CPU_BACKENDS = ('jax', 'numba', 'warp')
RTOL = ATOL = 1e-4


def operators() -> tuple[str, ...]:
    """The standard operators this eventjax has (exported and registered)."""
    registered = set(ej.primitives())
    return tuple(name for names in FAMILIES.values() for name in names
                 if hasattr(ej, name) and name in registered)


def backends(name: str) -> tuple[str, ...]:
    """The cpu backends of operator ``name`` that this machine can run."""
    have = ej.primitives()[name]['cpu']
    return tuple(b for b in have if b in usable_cpu_backends())


@functools.cache
def usable_cpu_backends() -> frozenset[str]:
    status = ej.backends_available()
    return frozenset(b for b in CPU_BACKENDS if b in status and status[b]['cpu'].available)


@attrs.frozen(eq=False)
class Case:
    """One call: operator, operands, statics and the float64 answer."""

    name: str
    args: tuple
    statics: dict
    expected: np.ndarray
    dense: np.ndarray  # the matrix A, float64

    @property
    def structure(self) -> tuple:
        """The matrix operands (everything but the vector/matrix operand)."""
        return self.args[:-1]

    @property
    def operand(self):
        return self.args[-1]

    def product(self, x) -> np.ndarray:
        """``A @ x`` (``A.T @ x`` when transposed) in float64; events count as 1."""
        x = np.asarray(x)
        x = (x > 0).astype(np.float64) if self.name.startswith('binary_') else x.astype(np.float64)
        return (self.dense.T if self.statics['transpose'] else self.dense) @ x

    def fn(self, backend=None):
        """``x -> op(*structure, x)`` with this case's statics."""
        op = getattr(ej, self.name)
        return lambda x: op(*self.structure, x, **self.statics, backend=backend)

    def call(self, backend=None, *, jit=False):
        fn = JITTED[self.name] if jit else getattr(ej, self.name)
        return fn(*self.args, **self.statics, backend=backend)

    def check(self, result) -> str | None:
        """None if ``result`` matches the answer, else what differs."""
        got = np.asarray(result, np.float64)
        if got.shape != self.expected.shape:
            return f'{self.name}: shape {got.shape}, expected {self.expected.shape}'
        if not np.allclose(got, self.expected, rtol=RTOL, atol=ATOL):
            err = float(np.max(np.abs(got - self.expected)))
            return f'{self.name} {self.statics}: max error {err:.3g}'
        return None


def _jitted(name):
    statics = ('transpose', 'backend') + (() if name.startswith('binary_dense') else ('shape',))
    return jax.jit(getattr(ej, name), static_argnames=statics)


JITTED = {name: _jitted(name) for name in operators()}


def _events(rng, shape, boolean=None):
    if rng.random() < 0.5 if boolean is None else boolean:
        return rng.random(shape) < 0.4
    return rng.choice(np.array([-1.0, 0.0, 0.5, 2.0], np.float32), size=shape)


def operand_like(rng, name, shape, boolean=None):
    """A random operand of ``shape`` for operator ``name`` (events: ``boolean`` or float, drawn if None)."""
    return _events(rng, shape, boolean) if name.startswith('binary_') else rng.normal(size=shape).astype(np.float32)


def _operand(rng, name, length, boolean=None):
    """The vector/matrix operand and its float64 value as the product sees it."""
    mm = name.endswith('mm')
    shape = (length, MM_COLS[rng.integers(len(MM_COLS))]) if mm else (length,)
    if name.startswith('binary_'):
        x = _events(rng, shape, boolean)
        return x, (x > 0).astype(np.float64)
    x = rng.normal(size=shape).astype(np.float32)
    return x, x.astype(np.float64)


def _homogeneous(rng, homogeneous):
    return rng.random() < 0.25 if homogeneous is None else homogeneous


def _dense(rng, m, n, homogeneous=None):
    w = rng.normal(size=(m, n)).astype(np.float32)
    return (w,), w.astype(np.float64)


def _csr(rng, m, n, homogeneous=None):
    # A fixed count of stored entries per shape, spread over random rows (any row may be empty).
    counts = np.bincount(rng.integers(0, m, size=round(DENSITY * m * n)), minlength=m)
    indices = rng.integers(0, n, size=int(counts.sum())).astype(np.int32)
    indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
    homogeneous = _homogeneous(rng, homogeneous)
    data = rng.normal(size=1 if homogeneous else indices.size).astype(np.float32)
    dense = np.zeros((m, n))
    rows = np.repeat(np.arange(m), counts)
    np.add.at(dense, (rows, indices), np.broadcast_to(data.astype(np.float64), indices.shape))
    return (data, indices, indptr), dense


def _fcn(rng, m, n, homogeneous=None):
    indices = rng.integers(0, n, size=(m, FCN_CONN)).astype(np.int32)
    homogeneous = _homogeneous(rng, homogeneous)
    weights = rng.normal(size=(1,) if homogeneous else (m, FCN_CONN)).astype(np.float32)
    dense = np.zeros((m, n))
    rows = np.repeat(np.arange(m), FCN_CONN)
    np.add.at(dense, (rows, indices.ravel()),
              np.broadcast_to(weights.astype(np.float64).reshape(-1), (m * FCN_CONN,))
              if homogeneous else weights.astype(np.float64).ravel())
    return (weights, indices), dense


_STRUCTURES = {'dense': _dense, 'csr': _csr, 'fcn': _fcn}


def family(name: str) -> str:
    return next(f for f, names in FAMILIES.items() if name in names)


def random_case(rng: np.random.Generator, name: str, *, shape=None, transpose=None,
                homogeneous=None, boolean=None) -> Case:
    """A random call of operator ``name`` with its NumPy answer.

    Unset choices are drawn: the shape (from ``SHAPES``), ``transpose``, one
    weight for every connection or ``homogeneous``, and for events a
    ``boolean`` array or a float one.
    """
    m, n = shape or SHAPES[rng.integers(len(SHAPES))]
    transpose = bool(rng.integers(2)) if transpose is None else transpose
    fam = family(name)
    structure, dense = _STRUCTURES[fam](rng, m, n, homogeneous)
    x, x64 = _operand(rng, name, m if transpose else n, boolean)
    expected = (dense.T if transpose else dense) @ x64
    statics = {'transpose': transpose} if fam == 'dense' else {'transpose': transpose, 'shape': (m, n)}
    return Case(name, (*structure, x), statics, expected, dense)


def redraw(rng: np.random.Generator, case: Case) -> Case:
    """A case of the same operator, shapes and dtypes as ``case`` with new random values.

    It runs the code compiled for ``case``: new data through warm caches.
    """
    m, n = case.dense.shape
    homogeneous = family(case.name) != 'dense' and np.asarray(case.structure[0]).size == 1
    return random_case(rng, case.name, shape=(m, n), transpose=case.statics['transpose'],
                       homogeneous=homogeneous, boolean=np.asarray(case.operand).dtype == np.bool_)
