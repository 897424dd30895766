"""The pallas bridge runs one kernel generator compiled on gpu/tpu and interpreted on the CPU."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental import pallas as pl

from eventjax.backends.availability import backend_status
from eventjax.backends.pallas import PallasKernelSpecError, pallas_kernel_generator


def affine_kg(*, outs):
    def body(x_ref, y_ref):
        y_ref[...] = 2 * x_ref[...] + 1

    def call(x, *, interpret):
        return pl.pallas_call(body, out_shape=outs[0], interpret=interpret)(x)

    return call


def sum_kg(*, outs):
    def body(x_ref, out_ref):
        out_ref[...] = jnp.full(out_ref.shape, jnp.sum(x_ref[...]), out_ref.dtype)

    def call(x, *, interpret):
        return pl.pallas_call(body, out_shape=outs[0], interpret=interpret)(x)

    return call


def scatter_add_kg(*, outs):
    def body(idx_ref, val_ref, out_ref):
        # Pallas outputs start uninitialised (NaN in interpret mode): zero them first.
        out_ref[...] = jnp.zeros(out_ref.shape, out_ref.dtype)

        def step(k, carry):
            j = idx_ref[k]
            out_ref[j] = out_ref[j] + val_ref[k]
            return carry

        jax.lax.fori_loop(0, idx_ref.shape[0], step, 0)

    def call(idx, val, *, interpret):
        return pl.pallas_call(body, out_shape=outs[0], interpret=interpret)(idx, val)

    return call


def sds(shape, dtype):
    return (jax.ShapeDtypeStruct(shape, dtype),)


def run_three_ways(kg, outs, *args):
    """Results eager, under jit, and of vmap over a batch of two under jit, in interpret mode."""
    f = pallas_kernel_generator(kg, 'cpu')(outs=outs)
    eager = f(*args)[0]
    jitted = jax.jit(f)(*args)[0]
    batched = jax.jit(jax.vmap(f))(*(jnp.stack([a, a]) for a in args))[0]
    return eager, jitted, batched


@pytest.fixture
def x64():
    jax.config.update('jax_enable_x64', True)
    yield
    jax.config.update('jax_enable_x64', False)


@pytest.fixture(autouse=True)
def strict_promotion():
    with jax.numpy_dtype_promotion('strict'):
        yield


class TestElementwise:
    @pytest.mark.parametrize('dtype', [jnp.float32, jnp.int32])
    def test_affine_matches_numpy_eager_jit_and_vmap(self, dtype):
        x = jnp.arange(8, dtype=dtype)
        expected = 2 * np.arange(8) + 1
        eager, jitted, batched = run_three_ways(affine_kg, sds((8,), dtype), x)
        np.testing.assert_array_equal(eager, expected)
        np.testing.assert_array_equal(jitted, expected)
        np.testing.assert_array_equal(batched, np.stack([expected, expected]))
        assert jitted.dtype == dtype

    def test_affine_in_float64_with_x64_enabled(self, x64):
        x = jnp.linspace(0, 1, 8, dtype=jnp.float64)
        _, jitted, _ = run_three_ways(affine_kg, sds((8,), jnp.float64), x)
        np.testing.assert_allclose(jitted, 2 * np.asarray(x) + 1, rtol=1e-15)
        assert jitted.dtype == jnp.float64


class TestReduction:
    @pytest.mark.parametrize('dtype', [jnp.float32, jnp.int32])
    def test_sum_matches_numpy(self, dtype):
        x = jnp.arange(10, dtype=dtype)
        eager, jitted, batched = run_three_ways(sum_kg, sds((1,), dtype), x)
        np.testing.assert_array_equal(eager, [45])
        np.testing.assert_array_equal(jitted, [45])
        np.testing.assert_array_equal(batched, [[45], [45]])

    def test_sum_in_float64_with_x64_enabled(self, x64):
        x = jnp.full(4, 0.1, jnp.float64)
        _, jitted, _ = run_three_ways(sum_kg, sds((1,), jnp.float64), x)
        np.testing.assert_allclose(jitted, [0.4], rtol=1e-15)


class TestScatterAdd:
    @pytest.mark.parametrize('dtype', [jnp.float32, jnp.int32])
    def test_duplicate_indices_accumulate(self, dtype):
        idx = jnp.array([0, 2, 2, 4, 2], jnp.int32)
        val = jnp.array([1, 2, 3, 4, 5], dtype)
        expected = np.zeros(6)
        np.add.at(expected, np.asarray(idx), np.asarray(val))
        eager, jitted, batched = run_three_ways(scatter_add_kg, sds((6,), dtype), idx, val)
        np.testing.assert_array_equal(eager, expected)
        np.testing.assert_array_equal(jitted, expected)
        np.testing.assert_array_equal(batched, np.stack([expected, expected]))


class TestGeneratorContract:
    def test_cpu_always_interprets_even_if_compiled_was_asked(self):
        seen = []

        def kg(*, outs):
            def call(x, *, interpret):
                seen.append(interpret)
                return affine_kg(outs=outs)(x, interpret=interpret)
            return call

        pallas_kernel_generator(kg, 'cpu', interpret=False)(outs=sds((8,), jnp.float32))(jnp.ones(8))
        assert seen == [True]

    def test_gpu_and_tpu_compile_unless_interpret_is_asked(self):
        seen = []

        def kg(*, outs):
            return lambda x, *, interpret: seen.append(interpret) or (x,)

        for platform, interpret in (('gpu', False), ('cuda', False), ('tpu', False), ('gpu', True)):
            pallas_kernel_generator(kg, platform, interpret=interpret)(outs=sds((8,), jnp.float32))(
                jnp.ones(8, jnp.float32))
        assert seen == [False, False, False, True]

    def test_a_single_output_may_be_returned_bare(self):
        f = pallas_kernel_generator(affine_kg, 'cpu')(outs=jax.ShapeDtypeStruct((8,), jnp.float32))
        assert isinstance(f(jnp.ones(8, jnp.float32)), tuple)

    def test_a_call_without_interpret_is_a_contract_error_showing_the_fix(self):
        kg = lambda outs: (lambda x: x)  # noqa: E731
        with pytest.raises(PallasKernelSpecError, match='interpret'):
            pallas_kernel_generator(kg, 'cpu')(outs=sds((8,), jnp.float32))

    def test_outputs_that_disagree_with_outs_are_reported(self):
        def kg(*, outs):  # ignores outs and always produces float32
            return lambda x, *, interpret: affine_kg(outs=sds((8,), jnp.float32))(x, interpret=interpret)

        f = pallas_kernel_generator(kg, 'cpu')(outs=sds((8,), jnp.int32))
        with pytest.raises(ValueError, match=r'float32\[8\] but outs\[0\] declares int32\[8\]'):
            jax.jit(f).lower(jnp.ones(8, jnp.float32))

    def test_unknown_platform_is_rejected(self):
        with pytest.raises(ValueError, match='metal'):
            pallas_kernel_generator(affine_kg, 'metal')


class TestLowering:
    def test_interpret_mode_lowers_to_plain_hlo_without_custom_calls(self):
        f = pallas_kernel_generator(affine_kg, 'cpu')(outs=sds((8,), jnp.float32))
        text = jax.jit(f).lower(jnp.ones(8, jnp.float32)).as_text()
        assert 'stablehlo.custom_call' not in text
        assert 'stablehlo.while' in text


@pytest.mark.skipif(not backend_status('pallas', 'gpu'), reason='needs a GPU visible to JAX')
class TestGpuCompiled:
    def test_affine_and_sum_compile_and_run_on_the_gpu(self):
        gpu = jax.devices('gpu')[0]
        x = jax.device_put(jnp.arange(128, dtype=jnp.float32), gpu)
        f = jax.jit(pallas_kernel_generator(affine_kg, 'gpu')(outs=sds((128,), jnp.float32)))
        text = f.lower(x).as_text()
        assert 'stablehlo.custom_call' in text
        np.testing.assert_array_equal(f(x)[0], 2 * np.arange(128) + 1)
        g = jax.jit(pallas_kernel_generator(sum_kg, 'gpu')(outs=sds((1,), jnp.float32)))
        np.testing.assert_array_equal(g(x)[0], [np.arange(128).sum()])
