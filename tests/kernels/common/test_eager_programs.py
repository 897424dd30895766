"""The argument helpers run as one program when called eagerly, and as written when traced."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from stress.harness import CompileCount

from eventjax.kernels.common import checks, compaction, eager, narrowing
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
    @eager.one_program_when_eager(1)
    def shifted(x, k):
        """Doc."""
        return jnp.where(x > k, x - k, 0)

    assert shifted.__name__ == 'shifted' and shifted.__doc__ == 'Doc.'
    np.testing.assert_array_equal(shifted(jnp.arange(5), 2), [0, 0, 0, 1, 2])
    np.testing.assert_array_equal(shifted(jnp.arange(5), 3), [0, 0, 0, 0, 1])  # a new static value, a new program
    np.testing.assert_array_equal(jax.jit(shifted, static_argnums=1)(jnp.arange(5), 1), [0, 0, 1, 2, 3])


class TestBoundedPrograms:
    def test_a_helper_keeps_the_programs_of_its_last_signatures_only(self):
        @eager.one_program_when_eager(1, max_programs=3)
        def shifted(x, k):
            return jnp.where(x > k, x - k, 0)

        for n in range(1, 8):
            shifted(np.arange(n, dtype=np.int32), 1)
        assert shifted.programs() == 3
        with CompileCount() as programs:
            shifted(np.arange(7, dtype=np.int32), 1)  # among the last three: kept
        assert programs.compiles == 0
        with CompileCount() as programs:
            shifted(np.arange(1, dtype=np.int32), 1)  # the least recently used: dropped, so compiled again
        assert programs.compiles == 1
        assert shifted.programs() == 3

    def test_a_use_makes_a_program_the_most_recent(self):
        @eager.one_program_when_eager(max_programs=2)
        def double(x):
            return 2 * x

        a, b, c = (np.zeros(n, np.float32) for n in (3, 4, 5))
        double(a), double(b), double(a), double(c)  # b is now the least recently used, and dropped
        with CompileCount() as programs:
            double(a)
        assert programs.compiles == 0

    def test_the_library_helpers_hold_at_most_the_documented_number(self):
        for n in range(eager.EAGER_PROGRAMS + 3):
            compaction.event_count_prefix(np.arange(n + 2000) % 3 == 0)
        assert compaction._event_count_prefix.programs() == eager.EAGER_PROGRAMS

    def test_a_bound_under_one_is_refused(self):
        with pytest.raises(ValueError, match='max_programs must be at least 1, got 0'):
            eager.one_program_when_eager(max_programs=0)


@pytest.mark.parametrize('size', [1, 127, 128, 129, 16_385, 20_001])
def test_running_maximum_and_sum_match_numpy_across_row_edges(size):
    """The row pointers' running maximum (the repair) and running sum, taken in 128-wide rows and then
    across them, equal NumPy's one pass at sizes on and past a row's edge and past a second level of rows."""
    p = np.random.default_rng(size).integers(-50, 1000, size).astype(np.int32)
    np.testing.assert_array_equal(checks._running_max(jnp.asarray(p)), np.maximum.accumulate(p))
    np.testing.assert_array_equal(checks.running_sum(jnp.asarray(p)), np.cumsum(p))
    repaired = checks.repair_indptr(jnp.asarray(p), 700)
    np.testing.assert_array_equal(repaired, np.maximum.accumulate(np.clip(p, 0, 700)))
