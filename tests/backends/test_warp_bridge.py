"""The warp bridge runs warp kernels on the CPU (and GPU) through warp's JAX FFI."""

import functools
import threading

import jax
import jax.numpy as jnp
import numpy as np
import pytest

wp = pytest.importorskip('warp')

from eventjax.backends.availability import backend_status  # noqa: E402
from eventjax.backends.warp.bridge import (  # noqa: E402
    SUPPORTED_WARP_DTYPES,
    ByInputDtypes,
    UnsupportedDtypeError,
    WarpKernelSpec,
    WarpKernelSpecError,
    _ffi_kernel,
    warp_dtype,
    warp_kernel_generator,
)

pytestmark = pytest.mark.skipif(not (backend_status('warp', 'cpu') or backend_status('warp', 'gpu')),
                                reason='warp can run neither on the CPU nor on a GPU here')


# Warp kernels are typed, so each generator builds one kernel per dtype and caches it.
@functools.cache
def affine_kernel(dtype):
    wt = warp_dtype(dtype)

    @wp.kernel
    def affine(x: wp.array(dtype=wt), y: wp.array(dtype=wt)):
        i = wp.tid()
        y[i] = wt(2) * x[i] + wt(1)

    return affine


@functools.cache
def sum_kernel(dtype):
    wt = warp_dtype(dtype)

    @wp.kernel
    def total(x: wp.array(dtype=wt), out: wp.array(dtype=wt)):
        wp.atomic_add(out, 0, x[wp.tid()])

    return total


@functools.cache
def scatter_add_kernel(dtype):
    wt = warp_dtype(dtype)

    @wp.kernel
    def scatter_add(idx: wp.array(dtype=wp.int32), val: wp.array(dtype=wt), out: wp.array(dtype=wt)):
        i = wp.tid()
        wp.atomic_add(out, idx[i], val[i])

    return scatter_add


@wp.kernel
def scale_kernel(x: wp.array(dtype=wp.float32), factor: wp.float32, y: wp.array(dtype=wp.float32)):
    i = wp.tid()
    y[i] = factor * x[i]


@wp.kernel
def sum_and_double_kernel(x: wp.array(dtype=wp.float32), total: wp.array(dtype=wp.float32),
                          doubled: wp.array(dtype=wp.float32)):
    i = wp.tid()
    wp.atomic_add(total, 0, x[i])
    doubled[i] = 2.0 * x[i]


def affine_kg(*, outs):
    return WarpKernelSpec(affine_kernel(outs[0].dtype), dim=lambda shape: shape)


def sum_kg(*, outs):
    return WarpKernelSpec(sum_kernel(outs[0].dtype), zero_outputs=True)


def scatter_add_kg(*, outs):
    return WarpKernelSpec(scatter_add_kernel(outs[0].dtype), dim=lambda idx, val: idx, zero_outputs=('out',))


def sds(shape, dtype):
    return (jax.ShapeDtypeStruct(shape, dtype),)


def run_three_ways(kg, outs, *args):
    """Results eager, under jit, and of vmap over a batch of two under jit."""
    f = warp_kernel_generator(kg, 'cpu')(outs=outs)
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


class TestDtypeMapping:
    def test_supported_dtypes_map_to_warp_scalars(self):
        assert warp_dtype(jnp.float32) is wp.float32
        assert warp_dtype(np.int32) is wp.int32
        assert warp_dtype('float64') is wp.float64
        assert 'bool' in SUPPORTED_WARP_DTYPES

    @pytest.mark.parametrize('dtype', [jnp.bfloat16, jnp.complex64])
    def test_unsupported_dtype_is_a_type_error_naming_it_and_the_supported_ones(self, dtype):
        with pytest.raises(TypeError, match=np.dtype(dtype).name) as info:
            warp_dtype(dtype)
        assert isinstance(info.value, UnsupportedDtypeError)
        assert 'float32' in str(info.value)

    def test_unsupported_input_dtype_fails_at_trace_time(self):
        f = warp_kernel_generator(affine_kg, 'cpu')(outs=sds((4,), jnp.float32))
        with pytest.raises(UnsupportedDtypeError, match='bfloat16'):
            jax.jit(f).lower(jnp.ones(4, jnp.bfloat16))

    def test_unsupported_output_dtype_fails_when_the_kernel_is_generated(self):
        with pytest.raises(UnsupportedDtypeError, match='complex64'):
            warp_kernel_generator(affine_kg, 'cpu')(outs=sds((4,), jnp.complex64))

    def test_kernel_of_another_dtype_than_outs_is_reported(self):
        kg = lambda outs: WarpKernelSpec(affine_kernel(jnp.float32))  # noqa: E731
        with pytest.raises(TypeError, match='float32.*int32'):
            warp_kernel_generator(kg, 'cpu')(outs=sds((4,), jnp.int32))


class TestElementwise:
    @pytest.mark.parametrize('dtype', [jnp.float32, jnp.int32])
    def test_affine_matches_numpy_eager_jit_and_vmap(self, dtype):
        x = jnp.arange(7, dtype=dtype)
        expected = 2 * np.arange(7) + 1
        eager, jitted, batched = run_three_ways(affine_kg, sds((7,), dtype), x)
        np.testing.assert_array_equal(eager, expected)
        np.testing.assert_array_equal(jitted, expected)
        np.testing.assert_array_equal(batched, np.stack([expected, expected]))
        assert eager.dtype == dtype

    def test_affine_in_float64_with_x64_enabled(self, x64):
        x = jnp.linspace(0, 1, 9, dtype=jnp.float64)
        eager, jitted, batched = run_three_ways(affine_kg, sds((9,), jnp.float64), x)
        np.testing.assert_allclose(jitted, 2 * np.asarray(x) + 1, rtol=1e-15)
        assert jitted.dtype == jnp.float64

    def test_scalar_parameters_are_given_by_name(self):
        kg = lambda outs, factor: WarpKernelSpec(scale_kernel, scalars={'factor': factor})  # noqa: E731
        f = warp_kernel_generator(kg, 'cpu')(outs=sds((3,), jnp.float32), factor=3.0)
        np.testing.assert_allclose(jax.jit(f)(jnp.ones(3, jnp.float32))[0], [3.0, 3.0, 3.0])


class TestByInputDtypes:
    def test_the_kernel_is_typed_from_the_input_arrays_at_trace_time(self):
        seen = []

        def kg(*, outs):
            return ByInputDtypes(lambda dtypes: seen.append(dtypes) or WarpKernelSpec(affine_kernel(dtypes[0])))

        f = warp_kernel_generator(kg, 'cpu')(outs=sds((4,), jnp.float32))
        np.testing.assert_array_equal(jax.jit(f)(jnp.arange(4, dtype=jnp.float32))[0], [1, 3, 5, 7])
        assert seen == [(np.dtype('float32'),)]

    def test_an_empty_input_gives_zeros_without_a_launch(self):
        def kg(*, outs):
            return ByInputDtypes(lambda dtypes: pytest.fail('an empty call must not build a kernel'))

        f = warp_kernel_generator(kg, 'cpu')(outs=sds((3,), jnp.float32))
        np.testing.assert_array_equal(jax.jit(f)(jnp.zeros(0, jnp.float32))[0], [0, 0, 0])


class TestReduction:
    @pytest.mark.parametrize('dtype', [jnp.float32, jnp.int32])
    def test_sum_into_zeroed_output_matches_numpy(self, dtype):
        x = jnp.arange(10, dtype=dtype)
        eager, jitted, batched = run_three_ways(sum_kg, sds((1,), dtype), x)
        np.testing.assert_array_equal(eager, [45])
        np.testing.assert_array_equal(jitted, [45])
        np.testing.assert_array_equal(batched, [[45], [45]])

    def test_repeated_jitted_calls_start_from_zero_each_time(self):
        f = jax.jit(warp_kernel_generator(sum_kg, 'cpu')(outs=sds((1,), jnp.float32)))
        x = jnp.ones(5, jnp.float32)
        results = [float(f(x)[0][0]) for _ in range(3)]
        assert results == [5.0, 5.0, 5.0]

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


class TestSpecForms:
    def test_kernel_dim_tuple_is_accepted(self):
        kg = lambda outs: (affine_kernel(jnp.float32), outs[0].shape)  # noqa: E731
        f = warp_kernel_generator(kg, 'cpu')(outs=sds((3,), jnp.float32))
        np.testing.assert_array_equal(f(jnp.zeros(3, jnp.float32))[0], [1, 1, 1])

    def test_bare_kernel_launches_over_the_first_input(self):
        kg = lambda outs: affine_kernel(jnp.float32)  # noqa: E731
        f = warp_kernel_generator(kg, 'cpu')(outs=sds((3,), jnp.float32))
        np.testing.assert_array_equal(jax.jit(f)(jnp.zeros(3, jnp.float32))[0], [1, 1, 1])

    def test_anything_else_is_a_spec_error_showing_the_fix(self):
        with pytest.raises(WarpKernelSpecError, match='WarpKernelSpec'):
            warp_kernel_generator(lambda outs: 'nope', 'cpu')(outs=sds((3,), jnp.float32))

    def test_only_the_named_outputs_are_zeroed_and_order_follows_outs(self):
        kg = lambda outs: WarpKernelSpec(sum_and_double_kernel, zero_outputs=('total',))
        outs = (jax.ShapeDtypeStruct((1,), jnp.float32), jax.ShapeDtypeStruct((4,), jnp.float32))
        total, doubled = jax.jit(warp_kernel_generator(kg, 'cpu')(outs=outs))(jnp.arange(4, dtype=jnp.float32))
        np.testing.assert_array_equal(total, [6])
        np.testing.assert_array_equal(doubled, [0, 2, 4, 6])

    def test_bad_dim_is_rejected_when_the_spec_is_built(self):
        with pytest.raises(WarpKernelSpecError, match='dim'):
            WarpKernelSpec(affine_kernel(jnp.float32), dim='rows')

    def test_zero_outputs_must_name_leading_outputs(self):
        kg = lambda outs: WarpKernelSpec(scatter_add_kernel(jnp.float32), zero_outputs=('val',))  # noqa: E731
        with pytest.raises(WarpKernelSpecError, match='leading run'):
            warp_kernel_generator(kg, 'cpu')(outs=sds((3,), jnp.float32))

    def test_missing_scalar_value_names_the_parameter(self):
        f = warp_kernel_generator(lambda outs: scale_kernel, 'cpu')(outs=sds((3,), jnp.float32))
        with pytest.raises(WarpKernelSpecError, match="'factor'"):
            f(jnp.ones(3, jnp.float32))

    def test_platform_other_than_cpu_or_gpu_is_rejected(self):
        with pytest.raises(ValueError, match='tpu'):
            warp_kernel_generator(affine_kg, 'tpu')


class TestCaching:
    def test_new_shapes_reuse_one_ffi_target_per_kernel(self):
        from warp._src.jax import ffi as warp_ffi

        kg2 = warp_kernel_generator(affine_kg, 'cpu')
        kg2(outs=sds((2,), jnp.float32))(jnp.ones(2, jnp.float32))
        targets = len(warp_ffi._FFI_KERNEL_REGISTRY)
        misses = _ffi_kernel.cache_info().misses
        for n in (3, 5, 8):
            f = jax.jit(kg2(outs=sds((n,), jnp.float32)))
            for _ in range(2):
                f(jnp.ones(n, jnp.float32))
        assert len(warp_ffi._FFI_KERNEL_REGISTRY) == targets
        assert _ffi_kernel.cache_info().misses == misses


class TestLowering:
    def test_jit_lowers_to_one_custom_call_to_the_warp_target(self):
        f = warp_kernel_generator(affine_kg, 'cpu')(outs=sds((4,), jnp.float32))
        text = jax.jit(f).lower(jnp.ones(4, jnp.float32)).as_text()
        assert text.count('stablehlo.custom_call') == 1
        assert 'affine' in text

    def test_zeroed_outputs_are_aliased_inputs(self):
        f = warp_kernel_generator(sum_kg, 'cpu')(outs=sds((1,), jnp.float32))
        text = jax.jit(f).lower(jnp.ones(4, jnp.float32)).as_text()
        assert 'output_operand_aliases' in text


class TestThreads:
    def test_concurrent_callers_each_get_their_own_result(self):
        f = jax.jit(warp_kernel_generator(scatter_add_kg, 'cpu')(outs=sds((4,), jnp.float32)))
        idx = jnp.array([0, 1, 1, 3], jnp.int32)
        errors = []

        def worker(k):
            val = jnp.full(4, float(k), jnp.float32)
            for _ in range(20):
                got = np.asarray(f(idx, val)[0])
                if not np.array_equal(got, [k, 2 * k, 0, k]):
                    errors.append((k, got))

        threads = [threading.Thread(target=worker, args=(k,)) for k in range(1, 5)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
        assert not errors


def _gpu_ready():
    return bool(backend_status('warp', 'gpu'))


@pytest.mark.skipif(not _gpu_ready(), reason='needs a CUDA GPU visible to both warp and JAX')
class TestGpu:
    def test_affine_and_scatter_add_run_on_the_gpu(self):
        gpu = jax.devices('gpu')[0]
        x = jax.device_put(jnp.arange(256, dtype=jnp.float32), gpu)
        f = jax.jit(warp_kernel_generator(affine_kg, 'gpu')(outs=sds((256,), jnp.float32)))
        np.testing.assert_array_equal(f(x)[0], 2 * np.arange(256) + 1)
        idx = jax.device_put(jnp.array([0, 2, 2, 4, 2], jnp.int32), gpu)
        val = jax.device_put(jnp.ones(5, jnp.float32), gpu)
        g = jax.jit(warp_kernel_generator(scatter_add_kg, 'gpu')(outs=sds((6,), jnp.float32)))
        np.testing.assert_array_equal(g(idx, val)[0], [1, 0, 3, 0, 1, 0])
