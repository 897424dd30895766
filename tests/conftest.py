"""Shared fixtures: strict dtype promotion, a clean global config per test."""

import itertools

import jax
import jax.numpy as jnp
import pytest

import eventjax as ej

jax.config.update('jax_numpy_dtype_promotion', 'strict')
# Pallas kernels are registered for the CPU too (interpret mode), so they run here.
ej.config.set_pallas_cpu_interpret(True)

_names = itertools.count()


@pytest.fixture(autouse=True)
def _clean_global_backends():
    ej.clear_backends()
    yield
    ej.clear_backends()


def make_two_valued(name='two_valued', *, a=1.0, b=2.0):
    """A primitive with cpu kernels 'a' (x + a) and 'b' (x + b): the result tells which ran."""
    prim = ej.XLACustomKernel(f'{name}_{next(_names)}')
    prim.def_kernel('a', 'cpu', lambda outs: lambda x: (x + a,))
    prim.def_kernel('b', 'cpu', lambda outs: lambda x: (x + b,))
    return prim


@pytest.fixture
def two_valued():
    return make_two_valued()


def out_like(x):
    return jax.ShapeDtypeStruct(jnp.shape(x), jnp.result_type(x))
