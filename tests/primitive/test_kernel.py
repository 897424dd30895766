"""XLACustomKernel: registration, resolution, calling, and its error paths."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import eventjax as ej
from eventjax.errors import (
    BackendNotFoundError,
    KernelCompilationError,
    KernelOutputError,
    PlatformNotSupportedError,
)
from tests.conftest import make_two_valued, out_like


class TestRegistration:
    def test_first_registered_kernel_is_the_default(self, two_valued):
        assert two_valued.get_default('cpu') == 'a'
        assert two_valued.available_backends('cpu') == ('a', 'b')

    def test_asdefault_makes_a_kernel_the_default(self):
        p = ej.XLACustomKernel('asdefault')
        p.def_kernel('a', 'cpu', lambda outs: lambda x: (x,))
        p.def_kernel('b', 'cpu', lambda outs: lambda x: (x,), asdefault=True)
        assert p.get_default('cpu') == 'b'

    def test_def_jax_kernel_registers_every_platform(self):
        p = ej.XLACustomKernel('jaxk')
        p.def_jax_kernel(lambda outs: lambda x: (x,))
        assert p.defaults == {'cpu': 'jax', 'gpu': 'jax', 'tpu': 'jax'}

    def test_registration_bumps_the_version(self):
        p = ej.XLACustomKernel('bump')
        before = ej.config.snapshot().version
        p.def_kernel('a', 'cpu', lambda outs: lambda x: (x,))
        assert ej.config.snapshot().version == before + 1

    def test_set_default_with_current_value_is_a_noop(self, two_valued):
        two_valued.set_default('cpu', 'b')
        snap = ej.config.snapshot()
        two_valued.set_default('cpu', 'b')
        assert ej.config.snapshot() is snap

    def test_set_default_to_unknown_backend_names_the_available_ones(self, two_valued):
        with pytest.raises(BackendNotFoundError, match="'a', 'b'"):
            two_valued.set_default('cpu', 'zz')

    def test_set_default_none_reverts_to_first_registered(self, two_valued):
        two_valued.set_default('cpu', 'b')
        two_valued.set_default('cpu', None)
        assert two_valued.get_default('cpu') == 'a'

    def test_primitives_lists_every_primitive_with_its_backends(self, two_valued):
        table = ej.primitives()[two_valued.name]
        assert table == {'cpu': ('a', 'b'), 'gpu': (), 'tpu': ()}

    def test_def_kernel_validates_its_arguments(self):
        p = ej.XLACustomKernel('validate')
        with pytest.raises(ValueError, match='empty'):
            p.def_kernel('', 'cpu', lambda outs: None)
        with pytest.raises(ValueError, match='valid platforms'):
            p.def_kernel('a', 'npu', lambda outs: None)
        with pytest.raises(TypeError, match='callable'):
            p.def_kernel('a', 'cpu', 3)
        with pytest.raises(TypeError, match='name'):
            ej.XLACustomKernel('')


class TestCalling:
    def test_outs_pytree_structure_is_preserved(self):
        p = ej.XLACustomKernel('pytree_outs')
        p.def_jax_kernel(lambda outs: lambda x: (x + 1, x * 2))
        x = jnp.arange(3.0)
        res = p(x, outs={'plus': out_like(x), 'times': out_like(x)})
        assert set(res) == {'plus', 'times'}
        np.testing.assert_allclose(res['plus'] + res['times'], [1, 4, 7])

    def test_single_struct_returns_a_single_array(self):
        p = ej.XLACustomKernel('single')
        p.def_jax_kernel(lambda outs: lambda x: x + 1)
        x = jnp.arange(3.0)
        np.testing.assert_allclose(p(x, outs=out_like(x)), [1, 2, 3])

    def test_static_params_reach_the_kernel_generator(self):
        p = ej.XLACustomKernel('static')
        p.def_jax_kernel(lambda outs, scale, shift=0.0: lambda x: (x * scale + shift,))
        x = jnp.arange(3.0)
        np.testing.assert_allclose(p(x, outs=out_like(x), scale=2.0, shift=1.0), [1, 3, 5])

    def test_outs_in_generator_is_a_tuple_of_structs(self):
        seen = []

        def kg(outs):
            seen.append(outs)
            return lambda x: (x,)

        p = ej.XLACustomKernel('see_outs')
        p.def_jax_kernel(kg)
        x = jnp.zeros((2, 3), jnp.float32)
        p(x, outs=out_like(x))
        assert seen[0] == (jax.ShapeDtypeStruct((2, 3), jnp.float32),)

    def test_several_inputs_and_outputs(self):
        p = ej.XLACustomKernel('multi')
        p.def_jax_kernel(lambda outs: lambda x, y: (x + y, x - y))
        x, y = jnp.ones(2), jnp.arange(2.0)
        a, b = p(x, y, outs=(out_like(x), out_like(x)))
        np.testing.assert_allclose(a, [1, 2])
        np.testing.assert_allclose(b, [1, 0])

    @pytest.mark.parametrize('dtype', [np.float64, np.int64], ids=['float64', 'int64'])
    @pytest.mark.parametrize('backend', ['jax', 'numba'])
    def test_64_bit_outs_without_x64_mean_their_32_bit_twin_as_in_jax(self, backend, dtype):
        if backend == 'numba':
            numba = pytest.importorskip('numba')
        p = ej.XLACustomKernel(f'doubles_{backend}_{np.dtype(dtype).name}')
        p.def_jax_kernel(lambda outs: lambda x: (x * 2,))
        if backend == 'numba':
            @numba.njit
            def double(x, out):
                for i in range(x.size):
                    out[i] = x[i] * 2

            p.def_numba_kernel(lambda outs: double)
        x = jnp.arange(3, dtype=jax.dtypes.canonicalize_dtype(dtype))
        outs = jax.ShapeDtypeStruct((3,), dtype)
        for f in (lambda x: p(x, outs=outs, backend=backend), jax.jit(lambda x: p(x, outs=outs, backend=backend))):
            y = f(x)
            assert y.dtype == jax.dtypes.canonicalize_dtype(dtype)  # what jnp makes of the same request
            np.testing.assert_array_equal(y, [0, 2, 4])

    def test_jit_and_eager_agree(self, two_valued):
        x = jnp.arange(4.0)
        np.testing.assert_allclose(two_valued(x, outs=out_like(x)),
                                   jax.jit(lambda x: two_valued(x, outs=out_like(x)))(x))

    def test_bind_params_carry_version_and_every_platform_choice(self, two_valued):
        x = jnp.zeros(2)
        jaxpr = jax.make_jaxpr(lambda x: two_valued(x, outs=out_like(x)))(x)
        params = jaxpr.eqns[0].params
        assert params['config_version'] == ej.config.snapshot().version
        assert repr(params['kernels']) == 'cpu=a@cpu,gpu=None,tpu=None'

    def test_lowering_text_shows_the_chosen_kernel(self, two_valued):
        x = jnp.zeros(2)
        text_a = jax.jit(lambda x: two_valued(x, outs=out_like(x), backend='a')).lower(x).as_text()
        text_b = jax.jit(lambda x: two_valued(x, outs=out_like(x), backend='b')).lower(x).as_text()
        assert '1.000000e+00' in text_a and '2.000000e+00' in text_b


class TestErrors:
    def test_per_call_backend_missing_names_the_available_ones(self, two_valued):
        x = jnp.zeros(2)
        with pytest.raises(BackendNotFoundError, match="'a', 'b'") as info:
            two_valued(x, outs=out_like(x), backend='numba')
        assert two_valued.name in str(info.value) and "'cpu'" in str(info.value)

    def test_per_call_backend_missing_is_a_value_error(self, two_valued):
        x = jnp.zeros(2)
        with pytest.raises(ValueError):
            jax.jit(lambda x: two_valued(x, outs=out_like(x), backend='zz'))(x)

    def test_non_string_per_call_backend_is_a_type_error(self, two_valued):
        x = jnp.zeros(2)
        with pytest.raises(TypeError, match='string'):
            two_valued(x, outs=out_like(x), backend=1)

    def test_unhashable_static_param_names_the_parameter(self, two_valued):
        x = jnp.zeros(2)
        with pytest.raises(TypeError, match="'sizes'.*hashable"):
            two_valued(x, outs=out_like(x), sizes=[1, 2])

    def test_reserved_param_name_is_rejected(self, two_valued):
        x = jnp.zeros(2)
        with pytest.raises(ValueError, match="'kernels' is reserved"):
            two_valued(x, outs=out_like(x), kernels='mine')

    def test_forwarded_params_of_a_call_are_accepted(self, two_valued):
        x = jnp.zeros(2)
        params = jax.make_jaxpr(lambda x: two_valued(x, outs=out_like(x)))(x).eqns[0].params
        np.testing.assert_allclose(two_valued(x, **params)[0], [1, 1])

    def test_bad_outs_is_a_clear_error(self, two_valued):
        x = jnp.zeros(2)
        with pytest.raises(TypeError, match='ShapeDtypeStruct'):
            two_valued(x, outs=[3])
        with pytest.raises(ValueError, match='outs'):
            two_valued(x, outs=())

    def test_raising_generator_is_a_compilation_error_chaining_the_cause(self, two_valued):
        def broken(outs):
            raise ZeroDivisionError('boom')

        two_valued.def_kernel('broken', 'cpu', broken)
        x = jnp.zeros(2)
        with pytest.raises(KernelCompilationError, match="boom.*'a', 'b'") as info:
            two_valued(x, outs=out_like(x), backend='broken')
        assert isinstance(info.value.__cause__, ZeroDivisionError)
        np.testing.assert_allclose(two_valued(x, outs=out_like(x)), [1, 1])

    def test_kernel_with_wrong_output_shape_is_reported(self):
        p = ej.XLACustomKernel('wrong_shape')
        p.def_jax_kernel(lambda outs: lambda x: (x[:1],))
        x = jnp.zeros(2)
        with pytest.raises(KernelOutputError, match=r'shape \(1,\).*\(2,\)'):
            p(x, outs=out_like(x))

    def test_platform_without_kernel_names_the_platforms_with_one(self):
        p = ej.XLACustomKernel('gpu_only')
        p.def_kernel('warp', 'gpu', lambda outs: lambda x: (x,))
        x = jnp.zeros(2)
        with pytest.raises(PlatformNotSupportedError, match="'cpu'.*gpu"):
            p(x, outs=out_like(x))


def test_registration_after_a_call_reaches_the_next_call():
    p = make_two_valued()
    x = jnp.zeros(2)
    f = jax.jit(lambda x: p(x, outs=out_like(x)))
    assert float(f(x)[0]) == 1.0
    p.def_kernel('a', 'cpu', lambda outs: lambda x: (x + 5,))
    assert float(f(x)[0]) == 5.0


class TestLoweringPlatform:
    def test_per_call_backend_follows_the_platform_lowered_for(self):
        """A backend the default platform lacks is chosen when compiling for a platform that has it."""
        prim = ej.XLACustomKernel('lowered_for_tpu_example')
        prim.def_kernel('a', 'cpu', lambda outs: lambda x: (x + 1,))
        prim.def_kernel('b', 'tpu', lambda outs: lambda x: (x * 7,))
        x = jnp.zeros(2)
        text = jax.jit(lambda x: prim(x, outs=out_like(x), backend='b')).trace(x).lower(
            lowering_platforms=('tpu',)).as_text()
        assert 'multiply' in text and 'add' not in text

    def test_per_call_backend_missing_on_the_platform_lowered_for_raises_there(self):
        """The same call lowered for the cpu, which lacks 'b', names the cpu's backends."""
        prim = ej.XLACustomKernel('lowered_for_cpu_example')
        prim.def_kernel('a', 'cpu', lambda outs: lambda x: (x + 1,))
        prim.def_kernel('b', 'tpu', lambda outs: lambda x: (x * 7,))
        x = jnp.zeros(2)
        with pytest.raises(BackendNotFoundError, match="no 'b' kernel for platform 'cpu'.*'a'"):
            prim(x, outs=out_like(x), backend='b')
