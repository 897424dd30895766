"""In-place outputs: ``input_output_aliases`` is checked, honoured by every CPU bridge, and never changes results."""

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import eventjax as ej
from tests.backends.inplace_toys import bump, make_bump

BACKENDS = ('jax', 'numba', 'warp', 'cpp', 'pallas')
# The bridges that hand the alias to their own custom call (jax's is a scatter XLA places itself).
CUSTOM_CALL = ('numba', 'warp', 'cpp')
_names = itertools.count()


@pytest.fixture(scope='module')
def prim():
    return make_bump(f'inplace_bump_{next(_names)}')


def _expected(w, rows):
    out = np.array(w)
    np.add.at(out, np.asarray(rows), 1)
    return out


W = np.arange(8, dtype=np.float32)
ROWS = np.array([1, 3, 3], np.int32)


def copies_of_w(compiled):
    """The compiled program's copies of a buffer the size of ``W`` (XLA's own loops copy scalars)."""
    return [line for line in compiled.splitlines() if ' copy(' in line and f'f32[{W.size}]' in line]


class TestCorrectness:
    @pytest.mark.parametrize('backend', BACKENDS)
    def test_eager_result_updates_rows_and_leaves_the_input_unchanged(self, prim, backend):
        w = jnp.asarray(W)
        out = bump(prim, w, jnp.asarray(ROWS), backend)
        np.testing.assert_array_equal(out, _expected(W, ROWS))
        np.testing.assert_array_equal(w, W)

    @pytest.mark.parametrize('backend', BACKENDS)
    def test_jit_without_donation_keeps_the_input(self, prim, backend):
        w = jnp.asarray(W)
        out = jax.jit(lambda w, r: bump(prim, w, r, backend))(w, jnp.asarray(ROWS))
        np.testing.assert_array_equal(out, _expected(W, ROWS))
        np.testing.assert_array_equal(w, W)

    @pytest.mark.parametrize('backend', BACKENDS)
    def test_jit_with_donation_gives_the_same_result(self, prim, backend):
        f = jax.jit(lambda w, r: bump(prim, w, r, backend), donate_argnums=0)
        out = f(jnp.asarray(W), jnp.asarray(ROWS))
        np.testing.assert_array_equal(out, _expected(W, ROWS))

    @pytest.mark.parametrize('backend', ('jax', 'numba', 'warp'))
    def test_scan_carry_updated_every_step(self, prim, backend):
        def step(w, r):
            return bump(prim, w, r, backend), None

        rows = jnp.asarray(np.array([[0, 1], [1, 2], [7, 7]], np.int32))
        out, _ = jax.jit(lambda w: jax.lax.scan(step, w, rows), donate_argnums=0)(jnp.asarray(W))
        np.testing.assert_array_equal(out, _expected(W, np.asarray(rows).ravel()))

    @pytest.mark.parametrize('backend', ('jax', 'numba', 'warp'))
    def test_vmap_updates_each_member_of_the_batch(self, prim, backend):
        ws = jnp.stack([jnp.asarray(W), -jnp.asarray(W)])
        rows = jnp.asarray(np.array([[0, 1, 1], [5, 6, 7]], np.int32))
        out = jax.vmap(lambda w, r: bump(prim, w, r, backend))(ws, rows)
        np.testing.assert_array_equal(out[0], _expected(W, rows[0]))
        np.testing.assert_array_equal(out[1], _expected(-W, rows[1]))


class TestLowering:
    @pytest.mark.parametrize('backend', CUSTOM_CALL)
    def test_custom_call_declares_the_alias(self, prim, backend):
        text = jax.jit(lambda w, r: bump(prim, w, r, backend), donate_argnums=0).lower(
            jnp.asarray(W), jnp.asarray(ROWS)).as_text()
        assert 'tf.aliasing_output = 0' in text
        assert 'output_operand_aliases' in text

    @pytest.mark.parametrize('backend', ('jax', 'numba', 'warp'))
    def test_donated_update_compiles_without_a_copy(self, prim, backend):
        compiled = jax.jit(lambda w, r: bump(prim, w, r, backend), donate_argnums=0).lower(
            jnp.asarray(W), jnp.asarray(ROWS)).compile().as_text()
        assert not copies_of_w(compiled), copies_of_w(compiled)

    @pytest.mark.parametrize('backend', CUSTOM_CALL)
    def test_undonated_update_copies_the_input_first(self, prim, backend):
        compiled = jax.jit(lambda w, r: bump(prim, w, r, backend)).lower(
            jnp.asarray(W), jnp.asarray(ROWS)).compile().as_text()
        assert copies_of_w(compiled)

    @pytest.mark.parametrize('backend', ('jax', 'numba'))
    def test_scan_carry_is_updated_without_a_copy_per_step(self, prim, backend):
        def step(w, r):
            return bump(prim, w, r, backend), None

        rows = jnp.zeros((4, 2), jnp.int32)
        compiled = jax.jit(lambda w: jax.lax.scan(step, w, rows)[0], donate_argnums=0).lower(
            jnp.asarray(W)).compile().as_text()
        assert not copies_of_w(compiled), copies_of_w(compiled)


class TestChecks:
    def test_alias_to_a_missing_input_names_the_inputs(self, prim):
        with pytest.raises(ValueError, match='names input 5, but the call has 2 inputs'):
            prim(jnp.asarray(W), jnp.asarray(ROWS), outs=(jax.ShapeDtypeStruct((8,), jnp.float32),),
                 input_output_aliases={5: 0})

    def test_alias_to_a_missing_output_names_the_outputs(self, prim):
        with pytest.raises(ValueError, match='to output 1, but outs declares 1 outputs'):
            prim(jnp.asarray(W), jnp.asarray(ROWS), outs=(jax.ShapeDtypeStruct((8,), jnp.float32),),
                 input_output_aliases={0: 1})

    def test_alias_with_another_shape_says_it_must_match(self, prim):
        with pytest.raises(ValueError, match="must have\\s+its input's shape and dtype"):
            prim(jnp.asarray(W), jnp.asarray(ROWS), outs=(jax.ShapeDtypeStruct((9,), jnp.float32),),
                 input_output_aliases={0: 0})

    def test_alias_with_another_dtype_says_it_must_match(self, prim):
        with pytest.raises(ValueError, match='cannot be updated in place'):
            prim(jnp.asarray(W), jnp.asarray(ROWS), outs=(jax.ShapeDtypeStruct((8,), jnp.int32),),
                 input_output_aliases={0: 0})

    def test_two_inputs_on_one_output_is_refused(self, prim):
        with pytest.raises(ValueError, match='an output can alias one input only'):
            prim(jnp.asarray(W), jnp.asarray(W), outs=(jax.ShapeDtypeStruct((8,), jnp.float32),),
                 input_output_aliases={0: 0, 1: 0})

    def test_aliases_must_be_a_dict(self, prim):
        with pytest.raises(TypeError, match='must be a dict'):
            prim(jnp.asarray(W), jnp.asarray(ROWS), outs=(jax.ShapeDtypeStruct((8,), jnp.float32),),
                 input_output_aliases=[0, 0])

    def test_a_call_without_aliases_binds_no_alias_parameter(self):
        p = ej.XLACustomKernel(f'inplace_plain_{next(_names)}')
        p.def_jax_kernel(lambda outs: lambda x: (x + 1,))
        jaxpr = jax.make_jaxpr(lambda x: p(x, outs=(jax.ShapeDtypeStruct((2,), jnp.float32),)))(jnp.ones(2))
        assert 'input_output_aliases' not in str(jaxpr)
