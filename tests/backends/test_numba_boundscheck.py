"""Bounds-checked numba kernels fail with an error instead of reading or writing out of bounds."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

numba = pytest.importorskip('numba')

import eventjax as ej  # noqa: E402
from eventjax.backends.numba import bridge as nb  # noqa: E402

OUT = (jax.ShapeDtypeStruct((4,), np.float32),)


def overrun_kg(outs):
    # Writes one element past its output: heap corruption without checks.
    @numba.njit
    def overrun(x, out):
        for i in range(out.size + 1):
            out[i] = x[0]

    return overrun


def reads_past_kg(outs):
    @numba.njit(parallel=True)
    def reads_past(x, out):
        for i in numba.prange(out.size):
            out[i] = x[i + 3]

    return reads_past


class TestBoundsChecked:
    def test_a_write_past_the_output_is_an_out_of_range_error_naming_the_kernel(self):
        f = jax.jit(nb.numba_kernel_generator(nb.bounds_checked(overrun_kg))(outs=OUT))
        with pytest.raises(jax.errors.JaxRuntimeError, match=r'OUT_OF_RANGE.*overrun.*out of bounds'):
            jax.block_until_ready(f(np.ones(4, np.float32)))

    def test_a_parallel_kernel_reading_past_its_input_fails_without_harm_and_later_calls_work(self):
        f = jax.jit(nb.numba_kernel_generator(reads_past_kg, boundscheck=True)(outs=OUT))
        with pytest.raises(jax.errors.JaxRuntimeError, match='bounds checking on'):
            jax.block_until_ready(f(np.ones(4, np.float32)))
        ok = f(np.arange(7, dtype=np.float32))[0]
        np.testing.assert_array_equal(ok, [3.0, 4.0, 5.0, 6.0])

    def test_a_primitive_registers_a_checked_generator_the_documented_way(self):
        p = ej.XLACustomKernel('eventjax_test_bounds_checked_overrun')
        p.def_numba_kernel(nb.bounds_checked(overrun_kg))
        x = jnp.ones(4, jnp.float32)
        with pytest.raises(jax.errors.JaxRuntimeError, match='out of bounds'):
            jax.block_until_ready(jax.jit(lambda x: p(x, outs=OUT[0]))(x))

    def test_the_checked_kernel_is_a_separate_target_from_the_unchecked_one(self):
        def fine_kg(outs):
            @numba.njit
            def fine(x, out):
                out[...] = x

            return fine

        before = nb.target_count()
        for kg in (fine_kg, nb.bounds_checked(fine_kg)):
            np.testing.assert_array_equal(nb.numba_kernel_generator(kg)(outs=OUT)(np.ones(4, np.float32))[0], 1.0)
        assert nb.target_count() - before == 2

    def test_a_generator_that_returns_no_njit_kernel_is_refused(self):
        with pytest.raises(nb.NumbaKernelError, match='@numba.njit'):
            nb.bounds_checked(lambda outs: None)(outs=OUT)
