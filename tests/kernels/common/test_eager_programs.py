"""The argument helpers run as one program when called eagerly, and as written when traced."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from stress.harness import CompileCount

from eventjax.kernels.common import checks, compaction, narrowing
from eventjax.kernels.csr import reference


def _structure(k):
    return jnp.arange(k + 7, dtype=jnp.int32) - 1, jnp.array([0, 2, k + 9], jnp.int32)


# name: (inputs of size k, the call, the programs an eager call may ask for)
HELPERS = {
    'repair_indptr': (lambda k: (jnp.array([0, 3, 1] + [9] * k, jnp.int32),),
                      lambda p: checks.repair_indptr(p, 4), 1),
    'kept_entries': (_structure, lambda i, p: reference.kept_entries(i, p, (2, i.shape[0] - 4)), 1),
    'compact': (lambda k: (jnp.arange(k + 11) % 3 == 0,), lambda m: compaction.compact(m, 5), 1),
    'event_count_prefix': (lambda k: (jnp.arange(k + 13) % 2 == 0,), compaction.event_count_prefix, 1),
    'narrow_in_range': (lambda k: (jnp.arange(k + 17, dtype=jnp.int32) - 2,),
                        lambda d: narrowing.narrow_in_range(d, 1, 8, 0), 1),
}


@pytest.mark.parametrize('name', sorted(HELPERS))
def test_an_eager_call_on_a_new_shape_asks_for_one_program(name):
    make, call, most = HELPERS[name]
    args = jax.block_until_ready(make(1031))  # a size no other test uses: nothing of it is in JAX's caches
    with CompileCount() as programs:
        jax.block_until_ready(call(*args))
    assert 1 <= programs.compiles <= most


@pytest.mark.parametrize('name', sorted(HELPERS))
def test_eager_and_jitted_calls_agree(name):
    make, call, _ = HELPERS[name]
    args = make(5)
    for a, b in zip(jax.tree.leaves(call(*args)), jax.tree.leaves(jax.jit(call)(*args))):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)


def test_a_traced_call_stages_the_helper_as_written():
    indptr = jnp.array([0, 3, 1, 9], jnp.int32)
    decorated = jax.make_jaxpr(lambda p: checks.repair_indptr(p, 4))(indptr)
    plain = jax.make_jaxpr(lambda p: checks._repaired.__wrapped__(p, 4))(indptr)
    assert str(decorated) == str(plain)
    assert 'pjit' not in str(decorated)  # no nested program in the caller's


def test_the_wrapped_helper_keeps_its_name_and_static_arguments():
    @checks.one_program_when_eager(1)
    def shifted(x, k):
        """Doc."""
        return jnp.where(x > k, x - k, 0)

    assert shifted.__name__ == 'shifted' and shifted.__doc__ == 'Doc.'
    np.testing.assert_array_equal(shifted(jnp.arange(5), 2), [0, 0, 0, 1, 2])
    np.testing.assert_array_equal(shifted(jnp.arange(5), 3), [0, 0, 0, 0, 1])  # a new static value, a new program
    np.testing.assert_array_equal(jax.jit(shifted, static_argnums=1)(jnp.arange(5), 1), [0, 0, 1, 2, 3])
