"""One primitive, four backends: jax, numba, warp (cpu) and pallas (interpret) agree with NumPy."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import eventjax as ej
from eventjax.backends import bridge
from eventjax.errors import BackendUnavailableError
from tests.backends.toys import make_toys

BACKENDS = ('jax', 'numba', 'warp', 'pallas')


@pytest.fixture(scope='module')
def toys():
    assert ej.backends.pallas.get_cpu_interpret(), 'tests/conftest.py turns pallas interpret mode on'
    return make_toys()


def cases(toys, dtype=np.float32):
    rng = np.random.default_rng(0)
    x = rng.normal(size=16).astype(dtype)
    idx = np.array([0, 3, 3, 1, 7, 3, 0, 2], np.int32)
    val = rng.normal(size=8).astype(dtype)
    expected_scatter = np.zeros(8, dtype)
    np.add.at(expected_scatter, idx, val)
    struct = lambda shape: jax.ShapeDtypeStruct(shape, dtype)
    return {
        'affine': ((x,), struct(x.shape), 2 * x + 1),
        'total': ((x,), struct((1,)), np.sum(x, keepdims=True)),
        'scatter_add': ((idx, val), struct((8,)), expected_scatter),
    }


@pytest.mark.parametrize('backend', BACKENDS)
@pytest.mark.parametrize('toy', ['affine', 'total', 'scatter_add'])
class TestEveryBackendAgreesWithNumpy:
    def test_eager(self, toys, toy, backend):
        args, out, expected = cases(toys)[toy]
        np.testing.assert_allclose(toys[toy](*args, outs=out, backend=backend), expected, rtol=1e-5, atol=1e-5)

    def test_jit(self, toys, toy, backend):
        args, out, expected = cases(toys)[toy]
        f = jax.jit(lambda *a: toys[toy](*a, outs=out, backend=backend))
        np.testing.assert_allclose(f(*args), expected, rtol=1e-5, atol=1e-5)

    def test_vmap(self, toys, toy, backend):
        args, out, expected = cases(toys)[toy]
        batched = [np.stack([a, a, a]) for a in args]
        f = jax.jit(jax.vmap(lambda *a: toys[toy](*a, outs=out, backend=backend)))
        np.testing.assert_allclose(f(*batched), np.stack([expected] * 3), rtol=1e-5, atol=1e-5)


def lowered(toys, toy, **kw):
    args, out, _ = cases(toys)[toy]
    return jax.jit(lambda *a: toys[toy](*a, outs=out, **kw)).lower(*args).as_text()


def signature(text):
    """Which backend a lowering came from, read off the StableHLO text."""
    if 'numba' in text and 'custom_call' in text:
        return 'numba'
    if 'custom_call' in text:
        return 'warp'
    if 'while' in text and 'toy' not in text:
        return 'pallas-or-jax'
    return 'jax'


class TestChoosingTheBackend:
    @pytest.mark.parametrize('backend', ['numba', 'warp'])
    def test_per_call_backend_picks_each_ffi_kernel(self, toys, backend):
        assert signature(lowered(toys, 'affine', backend=backend)) == backend

    def test_the_jax_kernel_lowers_without_a_custom_call(self, toys):
        assert 'custom_call' not in lowered(toys, 'affine', backend='jax')

    def test_the_pallas_kernel_on_cpu_lowers_to_its_interpreter_loop(self, toys):
        assert 'custom_call' not in lowered(toys, 'total', backend='pallas')

    def test_set_backend_switches_every_toy(self, toys):
        ej.set_backend('cpu', 'warp')
        assert all(signature(lowered(toys, name)) == 'warp' for name in toys)
        ej.set_backend('cpu', 'numba')
        assert all(signature(lowered(toys, name)) == 'numba' for name in toys)

    def test_every_backend_is_registered_for_cpu(self, toys):
        assert toys['affine'].available_backends('cpu') == ('jax', 'numba', 'warp', 'pallas')
        assert toys['affine'].available_backends('gpu') == ('jax', 'warp', 'pallas')


class TestUnavailableBackend:
    def test_a_missing_package_gives_an_error_saying_how_to_get_it(self, toys, monkeypatch):
        monkeypatch.setattr(bridge, 'package_missing', lambda module: True)
        x = jnp.ones(5, jnp.float32)  # a shape not compiled before, so it is lowered again
        with pytest.raises(BackendUnavailableError, match='pip install warp-lang'):
            toys['affine'](x, outs=jax.ShapeDtypeStruct(x.shape, x.dtype), backend='warp')


class TestNumbaKernelErrors:
    def test_an_out_of_range_index_raises_and_later_calls_work(self, toys):
        val = np.ones(2, np.float32)
        out = jax.ShapeDtypeStruct((8,), np.float32)
        with pytest.raises(Exception, match='index out of range'):
            jax.block_until_ready(toys['scatter_add'](np.array([1, 99], np.int32), val, outs=out, backend='numba'))
        res = toys['scatter_add'](np.array([1, 1], np.int32), val, outs=out, backend='numba')
        assert float(res[1]) == 2.0
