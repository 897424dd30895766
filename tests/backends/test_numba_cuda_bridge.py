"""The numba_cuda backend: numba.cuda.jit kernels compiled to PTX here, launched on XLA's stream on a GPU.

Without a GPU the tests compile kernels to PTX, check the PTX takes exactly the
parameters the launcher packs, build the launcher, and lower a primitive for
CUDA (jax.export needs no device); the tests that launch skip.
"""

import importlib.util
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import eventjax as ej
from eventjax import cli
from eventjax.backends import numba_cuda as numba_cuda_backend
from eventjax.backends.native import build as native_build
from eventjax.errors import KernelSpecError

HAS_NUMBA_CUDA = importlib.util.find_spec('numba_cuda') is not None
HAS_CXX = bool(native_build.cpp_toolchain().path)
ON_GPU = ej.backends_available()['numba_cuda']['gpu'].available
needs_numba_cuda = pytest.mark.skipif(not HAS_NUMBA_CUDA, reason="numba-cuda is not installed (eventjax[numba-cuda])")
needs_gpu = pytest.mark.skipif(not ON_GPU, reason='no GPU for the numba_cuda backend')

if HAS_NUMBA_CUDA:
    from numba import cuda

    from eventjax.backends.numba_cuda import bridge as ncb

    @cuda.jit
    def twice(x, y):
        i = cuda.grid(1)
        if i < y.size:
            y[i] = 2 * x[i]

    @cuda.jit
    def scatter(idx, w, counts, out):
        # idx (2-d int32), w (1-d float32), counts (bool, 1-d) in; out (float32, 1-d) accumulated with atomics
        r, c = cuda.grid(2)
        if r < idx.shape[0] and c < idx.shape[1] and counts[r]:
            cuda.atomic.add(out, idx[r, c], w[r])

    @cuda.jit
    def plus_one_twice(x, a, b):
        i = cuda.grid(1)
        if i < x.size:
            a[i] += 1
            b[i] = 2 * x[i]

    @cuda.jit
    def untyped(x, y):
        y[0] = x.no_such_attribute


def _export_text(f, *specs):
    with ej.config.override(gpu='numba_cuda'):
        exported = jax.export.export(jax.jit(f), platforms=['cuda'],
                                     disabled_checks=[jax.export.DisabledSafetyCheck.custom_call(ncb.TARGET)])(*specs)
    return exported.mlir_module()


class TestStatus:
    def test_numba_cuda_is_a_gpu_backend_and_says_why_not_elsewhere(self):
        status = ej.backends_available()['numba_cuda']
        assert not status['cpu'].available and 'GPUs only' in status['cpu'].reason and "'numba'" in status['cpu'].fix
        assert not status['tpu'].available
        if not ON_GPU:
            assert status['gpu'].reason and status['gpu'].fix

    def test_eventjax_info_reports_numba_cuda_on_every_platform(self):
        lines = [line for line in cli.info_lines() if line.strip().startswith('numba_cuda')]
        assert len(lines) == 3
        assert any('gpu' in line and ('yes' in line if ON_GPU else 'no: ' in line) for line in lines)

    def test_without_numba_cuda_the_reason_names_the_extra(self, monkeypatch):
        monkeypatch.setattr(numba_cuda_backend.core, 'package_missing', lambda name: name == 'numba_cuda')
        status = numba_cuda_backend.status('gpu')
        assert not status.available and 'numba-cuda' in status.reason and 'eventjax[numba-cuda]' in status.fix

    def test_the_def_method_registers_for_the_gpu(self):
        p = ej.XLACustomKernel('numba_cuda_registers')
        p.def_numba_cuda_kernel(lambda outs: None)
        assert p.available_backends('gpu') == ('numba_cuda',)
        assert p.available_backends('cpu') == ()
        with pytest.raises(ValueError, match='register for gpu'):
            p.def_numba_cuda_kernel(lambda outs: None, platform='cpu')


class TestLaunchConfig:
    def test_launch_dims_give_grid_and_block_like_brainevent(self):
        assert ej.NumbaCudaKernel(None, launch_dims=1000).launch(()) == ((4, 1, 1), (256, 1, 1))
        assert ej.NumbaCudaKernel(None, launch_dims=(40, 3)).launch(()) == ((3, 1, 1), (16, 3, 1))
        assert ej.NumbaCudaKernel(None, launch_dims=(9, 9, 9)).launch(()) == ((2, 2, 3), (8, 8, 4))
        assert ej.NumbaCudaKernel(None, launch_dims=10, threads_per_block=4).launch(()) == ((3, 1, 1), (4, 1, 1))
        assert ej.NumbaCudaKernel(None, launch_dims=0).launch(()) == ((0, 1, 1), (1, 1, 1))

    def test_launch_dims_may_read_the_input_shapes(self):
        spec = ej.NumbaCudaKernel(None, launch_dims=lambda a, b: (a[0], b[1]))
        assert spec.launch(((20, 2), (5, 33))) == ((2, 3, 1), (16, 16, 1))

    def test_an_explicit_grid_and_block_are_kept(self):
        assert ej.NumbaCudaKernel(None, grid=(2, 3), block=64).launch(()) == ((2, 3, 1), (64, 1, 1))

    @pytest.mark.parametrize('kwargs, message', [
        ({}, 'neither'),
        ({'launch_dims': 4, 'grid': 1, 'block': 4}, 'both'),
        ({'grid': 1}, 'together'),
        ({'launch_dims': (1, 2, 3, 4)}, '1 to 3'),
        ({'launch_dims': 4, 'threads_per_block': 2048}, '1..1024'),
        ({'launch_dims': 4, 'shared_mem': -1}, 'shared_mem'),
    ])
    def test_a_bad_launch_is_refused_when_the_spec_is_made(self, kwargs, message):
        with pytest.raises(KernelSpecError, match=message):
            ej.NumbaCudaKernel(None, **kwargs).launch(())

    def test_a_block_over_1024_threads_is_refused(self):
        with pytest.raises(KernelSpecError, match='1024'):
            ej.NumbaCudaKernel(None, grid=1, block=(64, 32)).launch(())


@needs_numba_cuda
class TestPtx:
    def test_the_ptx_takes_exactly_the_parameters_the_launcher_packs(self):
        specs = (('int32', 2), ('float32', 1), ('bool', 1), ('float32', 1))
        compiled = ncb.compile_kernel(scatter, specs, cc=(8, 0))
        assert compiled.entry in compiled.ptx and 0 < compiled.key < 2 ** 63
        body = compiled.ptx.split(f'.entry {compiled.entry}(', 1)[1].split(')', 1)[0]
        assert body.count('.param') == ncb.param_count(specs) == 9 + 7 + 7 + 7

    def test_a_kernel_numba_cannot_type_raises_with_numbas_message(self):
        with pytest.raises(ncb.NumbaCudaCompileError, match='no_such_attribute'):
            ncb.compile_kernel(untyped, (('float32', 1), ('float32', 1)), cc=(8, 0))

    def test_the_ptx_is_cached_on_disk_by_fingerprint(self, tmp_path, monkeypatch):
        monkeypatch.setenv('EVENTJAX_CACHE_DIR', str(tmp_path))
        specs = (('float32', 1), ('float32', 1))
        first = ncb.compile_kernel(twice, specs, cc=(8, 0), fingerprint=('twice', 1))
        assert len(list(tmp_path.rglob('numba_cuda_*.ptx'))) == 1

        def no_compile(*args):
            raise AssertionError('compiled again')

        monkeypatch.setattr(ncb, '_compile', no_compile)
        again = ncb.compile_kernel(twice, specs, cc=(8, 0), fingerprint=('twice', 1))
        assert again == first
        with pytest.raises(AssertionError, match='compiled again'):  # another fingerprint is another kernel
            ncb.compile_kernel(twice, specs, cc=(8, 0), fingerprint=('twice', 2))

    def test_what_is_not_a_kernel_is_refused(self):
        @cuda.jit(device=True)
        def helper(x):
            return x

        for bad, message in ((lambda x: x, 'numba.cuda.jit kernel'), (helper, 'device function')):
            with pytest.raises(KernelSpecError, match=message):
                ncb.compile_kernel(bad, (('float32', 1),))

    def test_an_unsupported_dtype_is_refused_at_trace_time(self):
        f = ncb.launcher_call(ej.NumbaCudaKernel(twice, launch_dims=4), [jax.ShapeDtypeStruct((4,), jnp.float32)])
        with pytest.raises(TypeError, match='bfloat16'):
            jax.eval_shape(f, jax.ShapeDtypeStruct((4,), jnp.bfloat16))


@needs_numba_cuda
@pytest.mark.skipif(not HAS_CXX, reason='no C++ compiler for the launcher')
class TestLowering:
    def test_the_launcher_builds_and_exports_its_handler(self):
        path = ncb.launcher_path()
        for symbol in (ncb.TARGET, 'eventjax_numba_cuda_add_module'):
            assert native_build.load_symbol(path, symbol, 'test') is not None

    def test_a_primitive_lowers_for_cuda_to_the_launcher_with_its_launch(self):
        p = ej.XLACustomKernel('numba_cuda_lowers')
        p.def_jax_kernel(lambda outs: lambda x: (2 * x,))
        p.def_numba_cuda_kernel(lambda outs: ej.NumbaCudaKernel(twice, launch_dims=lambda s: s[0]))
        f = lambda x: p(x, outs=jax.ShapeDtypeStruct(x.shape, x.dtype))  # noqa: E731
        text = _export_text(f, jax.ShapeDtypeStruct((1000,), jnp.float32))
        call = re.search(r'custom_call @eventjax_numba_cuda_launch\(.*', text).group(0)
        assert 'grid = dense<[4, 1, 1]>' in call and 'block = dense<[256, 1, 1]>' in call
        key = int(re.search(r'module = (\d+)', call).group(1))
        count = len(ncb._REGISTRY)
        # A fresh closure of the same kernel, and a new shape, reuse the compiled module.
        text2 = _export_text(f, jax.ShapeDtypeStruct((10,), jnp.float32))
        assert f'module = {key}' in text2 and len(ncb._REGISTRY) == count
        assert 'grid = dense<1>' in text2 and 'block = dense<[10, 1, 1]>' in text2
        assert np.allclose(f(jnp.arange(3.0)), [0, 2, 4])  # the CPU still runs the jax kernel

    def test_zero_outputs_spares_an_aliased_output(self):
        p = ej.XLACustomKernel('numba_cuda_zero_mask')
        p.def_numba_cuda_kernel(lambda outs: ej.NumbaCudaKernel(plus_one_twice, launch_dims=4, zero_outputs=True))
        out = jax.ShapeDtypeStruct((4,), jnp.float32)
        text = _export_text(lambda x: p(x, outs=(out, out), input_output_aliases={0: 1}), out)
        assert 'zero_mask = 1 : i64' in text  # output 0 zeroed, output 1 is input 0's buffer

    def test_a_kernel_taking_the_wrong_number_of_arrays_is_refused_at_trace_time(self):
        f = ncb.launcher_call(ej.NumbaCudaKernel(twice, launch_dims=4), [jax.ShapeDtypeStruct((4,), jnp.float32)] * 2)
        with pytest.raises(KernelSpecError, match='takes 2 arguments; expected 1 inputs \\+ 2 outputs'):
            jax.eval_shape(f, jax.ShapeDtypeStruct((4,), jnp.float32))

    def test_brainevents_numba_cuda_kernel_lowers_the_same_way(self):
        # A brainevent-style generator returns the JAX function numba_cuda_kernel makes.
        p = ej.XLACustomKernel('numba_cuda_brainevent_style')
        p.def_numba_cuda_kernel(lambda outs: ej.numba_cuda_kernel(twice, outs[0], launch_dims=outs[0].shape[0]))
        text = _export_text(lambda x: p(x, outs=jax.ShapeDtypeStruct(x.shape, x.dtype)),
                            jax.ShapeDtypeStruct((300,), jnp.float32))
        assert 'custom_call @eventjax_numba_cuda_launch' in text and 'grid = dense<[2, 1, 1]>' in text


@needs_gpu
class TestGpu:
    def test_a_primitive_runs_under_jit_and_vmap(self):
        p = ej.XLACustomKernel('numba_cuda_twice_gpu')
        p.def_numba_cuda_kernel(lambda outs: ej.NumbaCudaKernel(twice, launch_dims=lambda s: s[0]))
        f = lambda x: p(x, outs=jax.ShapeDtypeStruct(x.shape, x.dtype))  # noqa: E731
        x = jnp.arange(1000.0, dtype=jnp.float32)
        np.testing.assert_allclose(f(x), 2 * np.arange(1000.0))
        np.testing.assert_allclose(jax.jit(f)(x[:7]), 2 * np.arange(7.0))
        np.testing.assert_allclose(jax.jit(jax.vmap(f))(jnp.stack([x, x + 1])), 2 * np.stack([x, x + 1]))

    def test_a_2d_launch_with_atomics_and_zeroed_outputs(self):
        rng = np.random.default_rng(0)
        idx = rng.integers(0, 50, (30, 8)).astype(np.int32)
        w = rng.random(30).astype(np.float32)
        fired = rng.random(30) < 0.5
        f = ej.numba_cuda_kernel(scatter, jax.ShapeDtypeStruct((50,), jnp.float32), launch_dims=(30, 8),
                                 zero_outputs=True)
        expected = np.zeros(50, np.float32)
        np.add.at(expected, idx[fired].ravel(), np.repeat(w[fired], 8))
        for _ in range(2):  # zeroed again on every call
            np.testing.assert_allclose(jax.jit(f)(idx, w, fired), expected, rtol=1e-5)

    def test_an_aliased_output_starts_with_the_input_values(self):
        @cuda.jit
        def add_one(x, y):
            i = cuda.grid(1)
            if i < y.size:
                y[i] += 1

        f = ej.numba_cuda_kernel(add_one, jax.ShapeDtypeStruct((5,), jnp.float32), launch_dims=5,
                                 input_output_aliases={0: 0})
        np.testing.assert_allclose(jax.jit(f)(jnp.arange(5.0, dtype=jnp.float32)), np.arange(5.0) + 1)

