"""A bad call raises the same exception class on every backend, before any kernel runs."""

import jax
import numpy as np
import pytest

import eventjax as ej
from tests.differential import transforms

OPERATORS = transforms.standard_operators()
SPARSE = [n for n in OPERATORS if 'dense' not in n]
STORED = [n for n in SPARSE if 'jitc' not in n]  # a JITC matrix has no column indices to get wrong


def _args(name, *, weights=None, indices=None, x_len=None):
    """Small valid operands of ``name`` (shape (2, 3)), with parts replaced."""
    events = name.startswith('binary_')
    x = np.array([True, False, True]) if events else np.array([1.0, 2.0, 3.0], np.float32)
    if x_len is not None:
        x = x[:x_len]
    if name.endswith('mm'):
        x = np.stack([x, x], axis=1)
    if 'dense' in name:
        w = np.ones((2, 3), np.float32) if weights is None else weights
        return (w, x), {}
    if 'jitc' in name:
        w = np.float32(1.0) if weights is None else weights
        return (w, x), {'shape': (2, 3), 'seed': 0, 'prob': 0.5}
    if 'csr' in name:
        idx = np.array([0, 2, 1], np.int32) if indices is None else indices
        w = np.ones(3, np.float32) if weights is None else weights
        return (w, idx, np.array([0, 2, 3], idx.dtype), x), {'shape': (2, 3)}
    idx = np.array([[0, 2], [1, 2]], np.int32) if indices is None else indices
    w = np.ones((2, 2), np.float32) if weights is None else weights
    return (w, idx, x), {'shape': (2, 3)}


def _raised(fn) -> type | None:
    try:
        fn()
    except Exception as exc:  # the class is what is compared
        return type(exc)
    return None


def assert_same_error_everywhere(name, fn, expected):
    """``fn(backend)`` raises a subclass of ``expected``, the same class on every backend."""
    got = {b: _raised(lambda b=b: fn(b)) for b in transforms.backends(name)}
    assert all(cls is not None and issubclass(cls, expected) for cls in got.values()), \
        f'{name}: expected {expected.__name__} on every backend, got {got}'
    assert len(set(got.values())) == 1, f'{name}: different exception classes by backend: {got}'


@pytest.mark.parametrize('name', OPERATORS)
def test_integer_weights_raise_type_error(name):
    args, kw = _args(name)
    bad = np.asarray(args[0]).astype(np.int32)
    args, kw = _args(name, weights=bad)
    assert_same_error_everywhere(name, lambda b: getattr(ej, name)(*args, **kw, backend=b), TypeError)


@pytest.mark.parametrize('name', STORED)
@pytest.mark.parametrize('bad', [3, -1, 2**32 + 1], ids=['past_n', 'negative', 'beyond_int32'])
def test_a_concrete_bad_column_raises_value_error(name, bad):
    good, _ = _args(name)
    indices = np.array(good[1], np.int64)
    indices.reshape(-1)[1] = bad
    args, kw = _args(name, indices=indices)
    assert_same_error_everywhere(name, lambda b: getattr(ej, name)(*args, **kw, backend=b), ValueError)


@pytest.mark.parametrize('name', [n for n in SPARSE if 'csr' in n])
@pytest.mark.parametrize('indptr', [[1, 2, 3], [0, 3, 2], [0, 2, 4], [0, -1, 3]],
                         ids=['start', 'decreasing', 'past_nnz', 'negative'])
def test_a_concrete_bad_indptr_raises_value_error(name, indptr):
    (data, indices, _, x), kw = _args(name)
    args = (data, indices, np.array(indptr, np.int32), x)
    assert_same_error_everywhere(name, lambda b: getattr(ej, name)(*args, **kw, backend=b), ValueError)


@pytest.mark.parametrize('name', SPARSE)
def test_a_dimension_beyond_int32_indices_raises_value_error_before_any_kernel(name):
    args, kw = _args(name)
    n = 2**31
    x = args[-1]
    big = jax.ShapeDtypeStruct((n, *x.shape[1:]), x.dtype)
    kw = {**kw, 'shape': (2, n)}

    def call(backend):
        return jax.eval_shape(lambda x: getattr(ej, name)(*args[:-1], x, **kw, backend=backend), big)

    assert_same_error_everywhere(name, call, ValueError)


class TestContainers:
    def test_csr_with_a_bad_column_raises_value_error_at_construction(self):
        with pytest.raises(ValueError):
            ej.CSR((np.ones(2, np.float32), np.array([0, 5]), np.array([0, 1, 2])), shape=(2, 3))

    def test_csr_with_a_decreasing_indptr_raises_value_error_at_construction(self):
        with pytest.raises(ValueError):
            ej.CSR((np.ones(2, np.float32), np.array([0, 1]), np.array([0, 2, 1])), shape=(2, 3))

    def test_fixed_num_conn_with_a_negative_column_raises_value_error_at_construction(self):
        with pytest.raises(ValueError):
            ej.FixedNumConn((np.ones((2, 1), np.float32), np.array([[0], [-1]])), shape=(2, 3))
