"""defjvp, def_jvp_rule, def_transpose_rule: grad through custom primitives."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.interpreters import ad

import eventjax as ej
from eventjax.primitive.autodiff import defjvp_by_name
from tests.conftest import out_like


def make_scale():
    """y = w * x, linear in x, with a jvp per operand and a transpose for x."""
    p = ej.XLACustomKernel('scale_ad')
    p.def_jax_kernel(lambda outs: lambda w, x: (w * x,))

    def transpose(cts, w, x, **params):
        assert ad.is_undefined_primal(x) and not ad.is_undefined_primal(w)
        (ct,) = cts
        return [None, p(w, ct, **params)[0]]

    p.def_jvp_rule2(lambda dw, w, x, **params: [dw * x], lambda dx, w, x, **params: p(w, dx, **params))
    p.def_transpose_rule(transpose)
    return p


@pytest.fixture(scope='module')
def scale():
    return make_scale()


class TestDefjvp:
    def test_jvp_sums_the_contributions_of_each_operand(self, scale):
        w, x = jnp.float32(3.0), jnp.arange(3.0)
        f = lambda w, x: scale(w, x, outs=(out_like(x),))[0]
        _, t = jax.jvp(f, (w, x), (jnp.float32(1.0), jnp.ones(3)))
        np.testing.assert_allclose(t, x + 3.0)

    def test_grad_through_the_transpose_rule(self, scale):
        w, x = jnp.float32(3.0), jnp.arange(3.0)
        g = jax.grad(lambda x: scale(w, x, outs=(out_like(x),))[0].sum())(x)
        np.testing.assert_allclose(g, [3, 3, 3])

    def test_grad_wrt_a_non_linear_operand(self, scale):
        x = jnp.arange(3.0)
        g = jax.grad(lambda w: scale(w, x, outs=(out_like(x),))[0].sum())(jnp.float32(2.0))
        np.testing.assert_allclose(g, 3.0)

    def test_several_results(self):
        p = ej.XLACustomKernel('two_results_ad')
        p.def_jax_kernel(lambda outs: lambda x: (2 * x, 3 * x))
        ej.defjvp(p, lambda t, x, **kw: [2 * t, 3 * t])
        x = jnp.arange(2.0)
        _, (ta, tb) = jax.jvp(lambda x: p(x, outs=(out_like(x), out_like(x))), (x,), (jnp.ones(2),))
        np.testing.assert_allclose(ta, [2, 2])
        np.testing.assert_allclose(tb, [3, 3])

    def test_a_none_entry_gives_a_zero_tangent(self):
        p = ej.XLACustomKernel('partial_tangent')
        p.def_jax_kernel(lambda outs: lambda x: (2 * x, 3 * x))
        ej.defjvp(p, lambda t, x, **kw: [2 * t, None])
        x = jnp.arange(2.0)
        _, (ta, tb) = jax.jvp(lambda x: p(x, outs=(out_like(x), out_like(x))), (x,), (jnp.ones(2),))
        np.testing.assert_allclose(tb, [0, 0])

    def test_wrong_rule_count_is_an_error(self):
        p = ej.XLACustomKernel('wrong_rule_count')
        p.def_jax_kernel(lambda outs: lambda x, y: (x + y,))
        ej.defjvp(p, lambda t, x, y, **kw: [t])
        x = jnp.ones(2)
        with pytest.raises(TypeError, match='one rule'):
            jax.jvp(lambda x: p(x, x, outs=out_like(x)), (x,), (x,))

    def test_a_none_rule_contributes_no_tangent_as_in_jax(self):
        p = ej.XLACustomKernel('none_rule')
        p.def_jax_kernel(lambda outs: lambda x, i: (x * i,))
        ej.defjvp(p, lambda t, x, i, **kw: [t * i], None)
        x = jnp.ones(2)
        _, t_i = jax.jvp(lambda i: p(x, i, outs=out_like(x)), (x,), (x,))
        np.testing.assert_array_equal(t_i, [0.0, 0.0])
        _, t_both = jax.jvp(lambda x, i: p(x, i, outs=out_like(x)), (x, 3 * x), (x, x))
        np.testing.assert_array_equal(t_both, [3.0, 3.0])

    def test_a_bare_array_for_a_two_result_primitive_is_a_type_error(self):
        p = ej.XLACustomKernel('two_results_bare')
        p.def_jax_kernel(lambda outs: lambda x: (x, 2 * x))
        ej.defjvp(p, lambda t, x, **kw: t)
        x = jnp.ones(2)
        with pytest.raises(TypeError, match='two_results_bare.*2 results.*one tangent'):
            jax.jvp(lambda x: p(x, outs=(out_like(x), out_like(x))), (x,), (x,))

    def test_a_wrong_number_of_tangents_is_a_type_error(self):
        p = ej.XLACustomKernel('two_results_short')
        p.def_jax_kernel(lambda outs: lambda x: (x, 2 * x))
        ej.defjvp(p, lambda t, x, **kw: [t])
        x = jnp.ones(2)
        with pytest.raises(TypeError, match='returned 1 tangents.*2 result'):
            jax.jvp(lambda x: p(x, outs=(out_like(x), out_like(x))), (x,), (x,))


class TestDefjvpSingleResult:
    """A plain JAX primitive with multiple_results=False, as JAX users write them."""

    @staticmethod
    def cube_primitive(name):
        from jax.extend.core import Primitive
        from jax.interpreters import mlir

        prim = Primitive(name)
        prim.def_impl(lambda x: x ** 3)
        prim.def_abstract_eval(lambda x: jax.core.ShapedArray(x.shape, x.dtype))
        mlir.register_lowering(prim, mlir.lower_fun(lambda x: x ** 3, multiple_results=False))
        return prim

    @pytest.mark.parametrize('x', [jnp.float32(2.0), jnp.full(3, 2.0, jnp.float32)])
    def test_jvp_works_for_0d_and_1d_inputs(self, x):
        prim = self.cube_primitive('cube_single')
        ej.defjvp(prim, lambda t, x: 3 * x ** 2 * t)
        y, t = jax.jvp(prim.bind, (x,), (jnp.ones_like(x),))
        np.testing.assert_allclose(y, 8.0)
        np.testing.assert_allclose(t, 12.0)
        np.testing.assert_allclose(jax.grad(lambda x: prim.bind(x).sum())(x), 12.0)

    def test_a_rule_may_return_a_one_element_list(self):
        prim = self.cube_primitive('cube_single_list')
        ej.defjvp(prim, lambda t, x: [3 * x ** 2 * t])
        _, t = jax.jvp(prim.bind, (jnp.float32(1.0),), (jnp.float32(1.0),))
        np.testing.assert_allclose(t, 3.0)


class TestDefjvpByName:
    def test_rules_attach_by_operand_name(self):
        p = ej.XLACustomKernel('by_name')
        p.def_jax_kernel(lambda outs: lambda a, b: (a * b,))
        defjvp_by_name(p, ('a', 'b'), b=lambda t, a, b, **kw: [a * t], a=lambda t, a, b, **kw: [t * b])
        a, b = jnp.float32(2.0), jnp.float32(5.0)
        _, ta = jax.jvp(lambda a: p(a, b, outs=out_like(a)), (a,), (jnp.float32(1.0),))
        np.testing.assert_allclose(ta, 5.0)

    def test_unknown_operand_name_is_an_error(self):
        p = ej.XLACustomKernel('by_name_bad')
        with pytest.raises(ValueError, match='unknown operands'):
            defjvp_by_name(p, ('a',), c=lambda t, a, **kw: [t])


def test_def_jvp_rule_installs_a_full_rule():
    p = ej.XLACustomKernel('full_jvp')
    p.def_jax_kernel(lambda outs: lambda x: (jnp.sin(x),))

    def jvp(primals, tangents, **params):
        (x,), (t,) = primals, tangents
        return p.primitive.bind(x, **params), [jnp.cos(x) * t]

    p.def_jvp_rule(jvp)
    _, t = jax.jvp(lambda x: p(x, outs=out_like(x)), (jnp.zeros(3),), (jnp.ones(3),))
    np.testing.assert_allclose(t, 1.0)
