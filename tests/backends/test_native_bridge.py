"""The cpp backend (and the cuda backend's build): C++ source compiled against jaxlib's FFI headers.

Every distinct source compiles once per cache folder (a few seconds each):
the kernel tests use the default folder, so a later run only loads them;
the cache tests compile small sources into folders of their own.
"""

import importlib
import itertools
import os
import re
import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import eventjax as ej
from eventjax.backends.native import bridge as native_bridge
from eventjax.backends.native import build as native_build
from eventjax.backends.native.bridge import NativeKernel, c_type, compile_kernel, ffi_type
from eventjax.errors import KernelCompilationError, KernelSpecError

SCALE = textwrap.dedent('''\
    #include "xla/ffi/api/ffi.h"
    namespace ffi = xla::ffi;

    static ffi::Error Impl(ffi::Buffer<ffi::EJ_DT> x, ffi::ResultBuffer<ffi::EJ_DT> y, EJ_T scale) {
      const EJ_T* in = x.typed_data();
      for (size_t i = 0; i < x.element_count(); ++i) {
        if (in[i] < 0) return ffi::Error::InvalidArgument("negative entry in x");
        y->typed_data()[i] = scale * in[i];
      }
      return ffi::Error::Success();
    }

    XLA_FFI_DEFINE_HANDLER_SYMBOL(eventjax_test_scale, Impl,
        ffi::Ffi::Bind().Arg<ffi::Buffer<ffi::EJ_DT>>().Ret<ffi::Buffer<ffi::EJ_DT>>().Attr<EJ_T>("scale"));
    ''')

# One source for every dtype: the bridge defines EJ_DT from the input's dtype (dtype_macros).
DOUBLED = textwrap.dedent('''\
    #include "xla/ffi/api/ffi.h"
    namespace ffi = xla::ffi;

    static ffi::Error Impl(ffi::Buffer<ffi::EJ_DT> x, ffi::ResultBuffer<ffi::EJ_DT> y) {
      for (size_t i = 0; i < x.element_count(); ++i) y->typed_data()[i] = 2 * x.typed_data()[i];
      return ffi::Error::Success();
    }

    XLA_FFI_DEFINE_HANDLER_SYMBOL(eventjax_test_doubled, Impl,
        ffi::Ffi::Bind().Arg<ffi::Buffer<ffi::EJ_DT>>().Ret<ffi::Buffer<ffi::EJ_DT>>());
    ''')

HAS_CXX = bool(native_build.cpp_toolchain().path)
HAS_NVCC = bool(native_build.cuda_toolchain().path)
needs_cxx = pytest.mark.skipif(not HAS_CXX, reason='no C++ compiler on this machine')


def scale_kernel(*, scale, outs):
    dtype = outs[0].dtype
    return NativeKernel('eventjax_test_scale', source=SCALE, defines={'EJ_T': c_type(dtype), 'EJ_DT': ffi_type(dtype)},
                        attributes={'scale': np.dtype(dtype).type(scale)})


_names = itertools.count()


def make_scale(name='cpp_scale'):
    p = ej.XLACustomKernel(f'{name}_{next(_names)}')
    p.def_jax_kernel(lambda *, scale, outs: lambda x: (x * jnp.asarray(scale, x.dtype),))
    p.def_cpp_kernel(scale_kernel)
    ej.defjvp(p, lambda t, x, *, scale, **kw: [t * jnp.asarray(scale, t.dtype)])
    return p


def call(p, x, scale=3.0, **kw):
    return p(x, outs=jax.ShapeDtypeStruct(x.shape, x.dtype), scale=scale, **kw)


@needs_cxx
class TestCppKernel:
    def test_it_runs_eager_and_jitted_and_agrees_with_the_jax_kernel(self):
        p, x = make_scale(), jnp.arange(5.0)
        np.testing.assert_allclose(call(p, x, backend='cpp'), 3 * np.arange(5.0))
        jitted = jax.jit(lambda x: call(p, x, scale=2.0, backend='cpp'))
        np.testing.assert_allclose(jitted(x), call(p, x, scale=2.0, backend='jax'))

    def test_one_source_is_specialised_per_dtype_by_the_generator(self):
        p = make_scale()
        xi = jnp.arange(4, dtype=jnp.int32)
        out = call(p, xi, scale=3, backend='cpp')
        assert out.dtype == jnp.int32 and out.tolist() == [0, 3, 6, 9]

    def test_vmap_and_grad_use_the_kernel_and_its_rule(self):
        p, xs = make_scale(), jnp.arange(6.0).reshape(2, 3)
        np.testing.assert_allclose(jax.vmap(lambda x: call(p, x, backend='cpp'))(xs), 3 * xs)
        g = jax.grad(lambda x: call(p, x, backend='cpp').sum())(jnp.arange(3.0))
        np.testing.assert_allclose(g, [3.0, 3.0, 3.0])

    def test_set_backend_override_and_backend_pick_it_like_any_backend(self):
        p, x = make_scale(), jnp.arange(3.0)
        ej.set_backend('cpu', 'cpp')
        np.testing.assert_allclose(call(p, x), 3 * x)
        with ej.config.override(cpu='jax'):
            np.testing.assert_allclose(call(p, x), 3 * x)
        assert p.available_backends('cpu') == ('jax', 'cpp')

    def test_a_kernel_error_reaches_the_caller_with_its_message_and_later_calls_work(self):
        p, x = make_scale(), jnp.arange(3.0)
        for f in (lambda x: call(p, x, backend='cpp'), jax.jit(lambda x: call(p, x, backend='cpp'))):
            with pytest.raises(Exception, match='negative entry in x'):
                f(-x - 1).block_until_ready()
            np.testing.assert_allclose(f(x), 3 * x)

    def test_dtype_macros_build_one_library_per_input_dtype(self):
        p = ej.XLACustomKernel(f'cpp_doubled_{next(_names)}')
        p.def_cpp_kernel(lambda outs: NativeKernel('eventjax_test_doubled', source=DOUBLED, dtype_macros={'EJ_DT': -1}))
        before = native_bridge.target_count()
        for x in (jnp.arange(3.0), jnp.arange(3, dtype=jnp.int32)):
            out = p(x, outs=jax.ShapeDtypeStruct(x.shape, x.dtype), backend='cpp')
            assert out.dtype == x.dtype and out.tolist() == [0, 2, 4]
        assert native_bridge.target_count() == before + 2

    def test_dtype_macros_name_the_ffi_types_and_must_name_an_input(self):
        kernel = NativeKernel('k', source='x', defines={'N': 2}, dtype_macros={'W': 0, 'S': -1})
        assert kernel.for_inputs([np.float32, np.bool_]).defines == {'N': '2', 'W': 'F32', 'S': 'PRED'}
        with pytest.raises(KernelSpecError, match=r"dtype_macros\['W'\] names input 0"):
            kernel.for_inputs([])

    def test_the_library_is_loaded_once_per_content_and_named_by_it(self):
        p, x = make_scale(), jnp.arange(3.0)
        call(p, x, backend='cpp')
        before = native_bridge.target_count()
        call(make_scale('cpp_scale_again'), x + 1, backend='cpp')
        assert native_bridge.target_count() == before
        assert 'eventjax_cpp_eventjax_test_scale_' in jax.jit(lambda x: call(p, x, backend='cpp')).lower(x).as_text()


@needs_cxx
class TestBuildCache:
    def test_an_edited_source_gets_a_new_library_and_the_old_one_is_kept(self, tmp_path, monkeypatch):
        monkeypatch.setenv('EVENTJAX_CACHE_DIR', str(tmp_path))
        src = 'extern "C" int eventjax_test_value() { return 1; }\n'
        first = compile_kernel(NativeKernel('eventjax_test_value', source=src))
        again = compile_kernel(NativeKernel('eventjax_test_value', source=src))
        edited = compile_kernel(NativeKernel('eventjax_test_value', source=src.replace('1;', '2;')))
        assert first == again and edited != first
        assert native_build.load_symbol(edited, 'eventjax_test_value', 'test')() == 2
        assert native_build.load_symbol(first, 'eventjax_test_value', 'test')() == 1
        assert sorted(p.name for p in (tmp_path / 'native_kernels').iterdir() if p.suffix == '.so') == \
            sorted(os.path.basename(p) for p in (first, edited))
        with pytest.raises(native_build.NativeBuildError, match='XLA_FFI_DEFINE_HANDLER_SYMBOL'):
            native_build.load_symbol(first, 'not_there', 'test')

    def test_a_file_source_is_keyed_by_its_content_not_its_name(self, tmp_path, monkeypatch):
        monkeypatch.setenv('EVENTJAX_CACHE_DIR', str(tmp_path))
        path = tmp_path / 'k.cc'
        path.write_text('extern "C" int eventjax_test_file() { return 5; }\n')
        kernel = NativeKernel('eventjax_test_file', file=path)
        before = compile_kernel(kernel)
        path.write_text('extern "C" int eventjax_test_file() { return 6; }\n')
        after = compile_kernel(kernel)
        assert before != after and native_build.load_symbol(after, 'eventjax_test_file', 'test')() == 6

    def test_a_cache_cleared_during_a_build_builds_again(self, tmp_path, monkeypatch):
        import shutil

        monkeypatch.setenv('EVENTJAX_CACHE_DIR', str(tmp_path))
        real_run, calls = subprocess.run, []

        def clear_first(cmd, **kw):
            calls.append(cmd)
            if len(calls) == 1:
                shutil.rmtree(tmp_path / 'native_kernels')  # what eventjax cache --clear does meanwhile
            return real_run(cmd, **kw)

        monkeypatch.setattr(native_build.subprocess, 'run', clear_first)
        src = 'extern "C" int eventjax_test_cleared() { return 3; }\n'
        path = compile_kernel(NativeKernel('eventjax_test_cleared', source=src))
        assert len(calls) == 2 and native_build.load_symbol(path, 'eventjax_test_cleared', 'test')() == 3

    def test_two_processes_building_one_kernel_at_once_share_one_library_and_one_compile(self, tmp_path):
        # The compiler is a wrapper that logs each build and takes a second over it, and both processes
        # ask for the kernel once both have started: without the lock each runs the compiler.
        log = tmp_path / 'builds.log'
        wrapper = tmp_path / 'cxx'
        wrapper.write_text(f'#!/bin/sh\ncase "$*" in *--version*) ;; *) echo build >> {log}; sleep 1 ;; esac\n'
                           f'exec {native_build.cpp_toolchain().path} "$@"\n')
        wrapper.chmod(0o755)
        script = textwrap.dedent('''\
            import os, sys, time
            from eventjax.backends.native.bridge import NativeKernel, compile_kernel
            open(sys.argv[1] + sys.argv[2], 'w').close()
            deadline = time.monotonic() + 120
            while not all(os.path.exists(sys.argv[1] + n) for n in '01') and time.monotonic() < deadline:
                time.sleep(0.01)
            src = 'extern "C" int eventjax_test_race() { return 7; }\\n'
            print(compile_kernel(NativeKernel('eventjax_test_race', source=src)))
            ''')
        env = {**os.environ, 'EVENTJAX_CACHE_DIR': str(tmp_path), 'CXX': str(wrapper)}
        procs = [subprocess.Popen([sys.executable, '-c', script, str(tmp_path / 'ready'), str(i)], env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(2)]
        outputs = []
        try:
            for proc in procs:
                out, err = proc.communicate(timeout=240)
                assert proc.returncode == 0, err
                outputs.append(out.strip())
        finally:
            for proc in procs:
                proc.kill()
                proc.wait(timeout=30)
        assert outputs[0] == outputs[1]
        files = sorted(p.name for p in (tmp_path / 'native_kernels').iterdir())
        assert [f for f in files if f.endswith('.so')] == [os.path.basename(outputs[0])]
        assert not [f for f in files if f.endswith('.tmp')]
        assert log.read_text().split() == ['build']


@needs_cxx
class TestBuildErrors:
    def test_a_compile_error_shows_the_compiler_message_with_the_source_line(self, tmp_path, monkeypatch):
        monkeypatch.setenv('EVENTJAX_CACHE_DIR', str(tmp_path))
        src = 'extern "C" int eventjax_test_bad() {\n  return 1\n}\n'  # missing ';' on line 2
        with pytest.raises(native_build.NativeBuildError, match=r'<eventjax_test_bad: inline source>:[23]:') as info:
            compile_kernel(NativeKernel('eventjax_test_bad', source=src))
        assert isinstance(info.value, KernelCompilationError) and 'error' in str(info.value)

    def test_a_compile_error_in_a_file_names_the_file_and_line(self, tmp_path, monkeypatch):
        monkeypatch.setenv('EVENTJAX_CACHE_DIR', str(tmp_path))
        path = tmp_path / 'broken.cc'
        path.write_text('// a comment\n\nint broken( {\n')
        with pytest.raises(native_build.NativeBuildError, match=f'{path}:3:'):
            compile_kernel(NativeKernel('broken', file=path))

    def test_a_compile_error_at_lowering_is_an_eventjax_error_naming_the_primitive(self, tmp_path, monkeypatch):
        monkeypatch.setenv('EVENTJAX_CACHE_DIR', str(tmp_path))
        p = ej.XLACustomKernel('cpp_broken')
        p.def_cpp_kernel(lambda outs: NativeKernel('broken', source='int broken( {\n'))
        with pytest.raises(KernelCompilationError, match='could not compile') as info:
            p(jnp.ones(2), outs=jax.ShapeDtypeStruct((2,), jnp.float32))
        assert "primitive 'cpp_broken'" in ''.join(getattr(info.value, '__notes__', []))


class TestToolchainReport:
    def test_a_missing_compiler_is_reported_with_the_reason_and_the_fix(self, monkeypatch):
        monkeypatch.setenv('PATH', '')
        monkeypatch.setenv('CXX', '')
        tool = native_build.cpp_toolchain.__wrapped__()
        assert tool.path == '' and 'No C++ compiler' in tool.reason and 'CXX' in tool.fix
        monkeypatch.setattr(native_build, 'cpp_toolchain', lambda: tool)
        status = ej.backends_available()['cpp']['cpu']
        assert not status.available and status.reason == tool.reason
        p = ej.XLACustomKernel('cpp_without_compiler')
        p.def_cpp_kernel(scale_kernel)
        with pytest.raises(KernelCompilationError, match=re.escape('No C++ compiler')):
            call(p, jnp.ones(2))

    def test_a_missing_nvcc_is_reported_for_the_gpu(self, monkeypatch):
        monkeypatch.setenv('PATH', '')
        for name in ('NVCC', 'CUDA_HOME', 'CUDA_PATH'):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setattr(native_build.shutil, 'which', lambda name: None)
        tool = native_build.cuda_toolchain.__wrapped__()
        monkeypatch.setattr(native_build, 'cuda_toolchain', lambda: tool)
        status = ej.backends_available()['cuda']['gpu']
        assert not status.available and 'nvcc' in status.reason

    def test_eventjax_info_lists_both_backends(self):
        from eventjax.cli import info_lines

        rows = [line.split()[:2] for line in info_lines() if line.strip()]
        assert ['cpp', 'cpu'] in rows
        assert ['cuda', 'gpu'] in rows

    def test_the_cache_report_lists_the_library_folder(self, tmp_path, monkeypatch):
        from eventjax.config import cache

        monkeypatch.setenv('EVENTJAX_CACHE_DIR', str(tmp_path))
        (tmp_path / 'native_kernels').mkdir()
        (tmp_path / 'native_kernels' / 'k-0.so').write_bytes(b'1234')
        folder = cache.cache_folders('')[-1]
        assert (folder.role, folder.files, folder.size_bytes) == ('C++ and CUDA kernel libraries', 1, 4)


class TestKernelSpec:
    def test_exactly_one_of_source_and_file(self):
        with pytest.raises(KernelSpecError, match='exactly one'):
            NativeKernel('k')
        with pytest.raises(KernelSpecError, match='exactly one'):
            NativeKernel('k', source='x', file='y.cc')

    def test_the_entry_must_be_a_c_symbol(self):
        with pytest.raises(KernelSpecError, match='C symbol'):
            NativeKernel('not a symbol', source='x')

    def test_a_generator_returning_something_else_is_refused(self):
        p = ej.XLACustomKernel('cpp_wrong_return')
        p.def_cpp_kernel(lambda outs: 'int main() {}')
        with pytest.raises(KernelCompilationError, match='NativeKernel'):
            p(jnp.ones(2), outs=jax.ShapeDtypeStruct((2,), jnp.float32))

    def test_type_names_for_sources(self):
        assert (ffi_type(np.float64), c_type(np.uint8), ffi_type(jnp.bfloat16)) == ('F64', 'uint8_t', 'BF16')
        with pytest.raises(KernelSpecError, match='NativeType'):
            c_type(np.float16)


# The input dtypes of a call to each standard family's binary product (float32 weights, int32 indices, bool events).
STANDARD_INPUTS = {'csr': (np.float32, np.int32, np.int32, np.bool_), 'fcn': (np.float32, np.int32, np.bool_)}


def standard_kernel(family, backend):
    impl = importlib.import_module(f'eventjax.kernels.{family}.{backend}_impl')
    kg = getattr(impl, {'csr': 'binary_csrmv_kernel', 'fcn': 'binary_fcnmv_kernel'}[family])
    return kg(shape=(3, 4), transpose=True, outs=None)


@needs_cxx
class TestStandardCppSources:
    def test_a_call_builds_only_its_dtype_combination(self):
        kernel = standard_kernel('csr', 'cpp').for_inputs(STANDARD_INPUTS['csr'])
        assert kernel.defines == {'EJ_WEIGHT': 'F32', 'EJ_INDEX': 'S32', 'EJ_OPERAND': 'PRED'}

    # Every (weights, indices, operand) combination instantiated at once: over a minute of g++ per source.
    @pytest.mark.long
    @pytest.mark.parametrize('family', ['csr', 'fcn'])
    def test_every_dtype_combination_compiles(self, family):
        kernel = standard_kernel(family, 'cpp')
        assert native_build.load_symbol(compile_kernel(kernel), kernel.entry, 'test') is not None


@pytest.mark.skipif(not HAS_NVCC, reason='nvcc is not installed')
class TestCudaBuild:
    def test_a_cuda_handler_compiles_and_links_without_a_gpu(self):
        path = compile_kernel(NativeKernel('eventjax_test_twice', source=TWICE_CU), 'cuda')
        assert path.endswith('.so') and os.path.getsize(path) > 0
        assert native_build.load_symbol(path, 'eventjax_test_twice', 'test') is not None

    # A call builds its own dtype combination only (nvcc's start-up dominates it: ~25 s under load 11, so
    # the default run builds the CSR source, which shares the header and the dispatch with the others);
    # with no dtype macros a source instantiates all 72, which the long run checks for every source.
    @pytest.mark.parametrize('family', ['csr', pytest.param('fcn', marks=pytest.mark.long)])
    def test_the_standard_cuda_kernels_compile_for_a_call(self, family):
        kernel = standard_kernel(family, 'cuda').for_inputs(STANDARD_INPUTS[family])
        assert native_build.load_symbol(compile_kernel(kernel, 'cuda'), kernel.entry, 'test') is not None

    @pytest.mark.long
    @pytest.mark.parametrize('family', ['csr', 'fcn'])
    def test_the_standard_cuda_kernels_compile_for_every_dtype(self, family):
        kernel = standard_kernel(family, 'cuda')
        assert native_build.load_symbol(compile_kernel(kernel, 'cuda'), kernel.entry, 'test') is not None

    @pytest.mark.skipif(not ej.backends_available()['cuda']['gpu'].available, reason='no GPU for the cuda backend')
    def test_a_cuda_kernel_runs_through_a_primitive_on_the_gpu(self):
        p = ej.XLACustomKernel('cuda_twice')
        p.def_cuda_kernel(lambda outs: NativeKernel('eventjax_test_twice', source=TWICE_CU))
        x = jnp.arange(1000.0, dtype=jnp.float32)
        f = lambda x: p(x, outs=jax.ShapeDtypeStruct(x.shape, x.dtype), backend='cuda')  # noqa: E731
        np.testing.assert_allclose(f(x), 2 * np.arange(1000.0))
        np.testing.assert_allclose(jax.jit(jax.vmap(f))(jnp.stack([x, x + 1])), 2 * np.stack([x, x + 1]))


TWICE_CU = textwrap.dedent('''\
            #include "xla/ffi/api/ffi.h"
            namespace ffi = xla::ffi;
            __global__ void twice(const float* x, float* y, size_t n) {
              size_t i = blockIdx.x * blockDim.x + threadIdx.x;
              if (i < n) y[i] = 2 * x[i];
            }
            static ffi::Error Impl(cudaStream_t stream, ffi::Buffer<ffi::F32> x, ffi::ResultBuffer<ffi::F32> y) {
              size_t n = x.element_count();
              twice<<<(n + 255) / 256, 256, 0, stream>>>(x.typed_data(), y->typed_data(), n);
              cudaError_t e = cudaGetLastError();
              if (e != cudaSuccess) return ffi::Error::Internal(cudaGetErrorString(e));
              return ffi::Error::Success();
            }
            XLA_FFI_DEFINE_HANDLER_SYMBOL(eventjax_test_twice, Impl, ffi::Ffi::Bind()
                .Ctx<ffi::PlatformStream<cudaStream_t>>().Arg<ffi::Buffer<ffi::F32>>().Ret<ffi::Buffer<ffi::F32>>());
            ''')
