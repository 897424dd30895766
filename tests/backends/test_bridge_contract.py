"""The contract every bridge in backends/registry.py keeps, checked the same way for each.

Bridge-specific behaviour (warp's launch dims, pallas' interpret flag, numba's
error buffer) is tested in each bridge's own file; this suite is what they
share: the declaration, the availability probe, and a wrapped kernel that
runs eager, under jit and vmap, directly and through a primitive.
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import eventjax as ej
from eventjax.backends.bridge import BackendStatus
from eventjax.backends.registry import BRIDGES
from eventjax.config import PLATFORMS


def _affine_jax(*, outs):
    return lambda x: (2 * x + 1,)


def _affine_numba(*, outs):
    import numba

    @numba.njit
    def affine(x, y):
        for i in range(x.size):
            y[i] = 2 * x[i] + 1

    return affine


def _affine_warp(*, outs):
    from tests.backends.toys import WarpKernelSpec, _affine_warp

    return WarpKernelSpec(_affine_warp(outs[0].dtype))


def _affine_pallas(*, outs):
    from tests.backends.toys import _affine_pallas

    return _affine_pallas(outs)


_AFFINE_SOURCE = r"""
#include "xla/ffi/api/ffi.h"
namespace ffi = xla::ffi;
static ffi::Error Affine(ffi::Buffer<ffi::F32> x, ffi::ResultBuffer<ffi::F32> y) {
  for (size_t i = 0; i < x.element_count(); ++i) y->typed_data()[i] = 2 * x.typed_data()[i] + 1;
  return ffi::Error::Success();
}
XLA_FFI_DEFINE_HANDLER_SYMBOL(eventjax_contract_affine, Affine,
    ffi::Ffi::Bind().Arg<ffi::Buffer<ffi::F32>>().Ret<ffi::Buffer<ffi::F32>>());
"""


def _affine_native(*, outs):
    return ej.NativeKernel('eventjax_contract_affine', source=_AFFINE_SOURCE)


@functools.cache
def _numba_cuda_affine_kernel():
    from numba import cuda  # seconds to import: only where a GPU runs it

    @cuda.jit
    def affine(x, y):
        i = cuda.grid(1)
        if i < y.size:
            y[i] = 2 * x[i] + 1

    return affine


def _affine_numba_cuda(*, outs):
    return ej.NumbaCudaKernel(_numba_cuda_affine_kernel(), launch_dims=lambda shape: shape[0])


# y = 2x + 1 in each bridge's own kernel format: a new bridge adds its entry here.
AFFINE = {'jax': _affine_jax, 'numba': _affine_numba, 'warp': _affine_warp, 'pallas': _affine_pallas,
          'cpp': _affine_native, 'cuda': _affine_native, 'numba_cuda': _affine_numba_cuda}


@pytest.fixture(params=BRIDGES, ids=lambda b: b.name)
def bridge(request):
    return request.param


@functools.cache
def _runs_on_cpu(bridge) -> bool:
    served = 'cpu' in bridge.platforms or any('cpu' in bridge.companions(p) for p in bridge.platforms)
    return served and bridge.status('cpu').available


@pytest.fixture
def cpu_bridge(bridge):
    if not _runs_on_cpu(bridge):
        pytest.skip(f'{bridge.name} cannot run on the cpu here: {bridge.status("cpu").reason}')
    return bridge


X = jnp.arange(8, dtype=jnp.float32)
OUTS = (jax.ShapeDtypeStruct((8,), jnp.float32),)


class TestDeclaration:
    def test_every_bridge_has_a_kernel_format_in_this_suite(self, bridge):
        assert bridge.name in AFFINE

    def test_platforms_are_known_and_the_default_is_one_of_them(self, bridge):
        assert bridge.platforms and set(bridge.platforms) <= set(PLATFORMS)
        assert bridge.default_platform is None or bridge.default_platform in bridge.platforms

    def test_names_are_unique(self):
        names = [b.name for b in BRIDGES]
        assert len(names) == len(set(names))

    def test_the_public_class_has_its_def_method(self, bridge):
        method = getattr(ej.XLACustomKernel, f'def_{bridge.name}_kernel')
        assert bridge.name in method.__doc__

    def test_a_platform_it_does_not_serve_is_refused_naming_those_it_serves(self, bridge):
        others = [p for p in PLATFORMS if p not in bridge.platforms]
        if not others:
            pytest.skip(f'{bridge.name} serves every platform')
        p = ej.XLACustomKernel(f'contract_refuse_{bridge.name}')
        with pytest.raises(ValueError, match=bridge.platforms[0]):
            p.def_bridge_kernel(bridge.name, AFFINE[bridge.name], platform=others[0])

    def test_set_backend_knows_its_name_where_it_serves(self, bridge):
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter('error')
            ej.set_backend(bridge.platforms[0], bridge.name)


class TestStatus:
    def test_every_platform_gets_a_status_with_a_reason_when_unavailable(self, bridge):
        for platform in PLATFORMS:
            status = bridge.status(platform)
            assert isinstance(status, BackendStatus)
            assert (status.backend, status.platform) == (bridge.name, platform)
            assert status.available or status.reason

    def test_the_report_lists_it(self, bridge):
        assert set(ej.backends_available()[bridge.name]) == set(PLATFORMS)


class TestWrappedKernel:
    def test_jit_and_vmap_match_numpy(self, cpu_bridge):
        f = cpu_bridge.wrap(AFFINE[cpu_bridge.name], 'cpu')(outs=OUTS)
        result = jax.jit(f)(X)
        assert isinstance(result, tuple) and len(result) == 1
        np.testing.assert_array_equal(result[0], 2 * np.arange(8) + 1)
        batched = jax.jit(jax.vmap(f))(jnp.stack([X, X + 1]))[0]
        np.testing.assert_array_equal(batched, np.stack([2 * np.arange(8) + 1, 2 * np.arange(8) + 3]))

    def test_through_a_primitive_eager_and_jit(self, cpu_bridge):
        p = ej.XLACustomKernel(f'contract_affine_{cpu_bridge.name}')
        p.def_kernel(cpu_bridge.name, 'cpu', cpu_bridge.wrap(AFFINE[cpu_bridge.name], 'cpu'))
        call = lambda x: p(x, outs=OUTS[0], backend=cpu_bridge.name)  # noqa: E731
        np.testing.assert_array_equal(call(X), 2 * np.arange(8) + 1)
        np.testing.assert_array_equal(jax.jit(call)(X + 1), 2 * np.arange(8) + 3)
