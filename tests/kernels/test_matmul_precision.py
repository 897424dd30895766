"""Products of the jax kernels ask for full float32 precision: on a TPU, XLA's default multiplies float32
in one bfloat16 pass (errors near 1e-3), which no other backend does. On the CPU the request is a no-op,
so the lowered program is read instead of the numbers."""

import re

import jax
import jax.numpy as jnp
import pytest

import eventjax as ej


def _dot_precisions(fn, *args):
    text = jax.jit(fn).lower(*args).as_text()
    return re.findall(r'stablehlo\.(?:dot_general|dot)\b[^\n]*', text)


def _assert_highest(lines):
    assert lines, 'expected the program to hold a product'
    for line in lines:
        assert 'HIGHEST' in line, f'a product without full float32 precision: {line}'


@pytest.mark.parametrize('transpose', [False, True])
@pytest.mark.parametrize('events', ['bool', 'float'])
def test_binary_densemv_jax_products_are_full_precision(transpose, events):
    w = jnp.ones((40, 30), jnp.float32)
    s = jnp.ones(30 if not transpose else 40, jnp.bool_ if events == 'bool' else jnp.float32)
    lines = _dot_precisions(lambda w, s: ej.binary_densemv(w, s, transpose=transpose, backend='jax'), w, s)
    for line in lines:
        assert 'HIGHEST' in line, f'a product without full float32 precision: {line}'


@pytest.mark.parametrize('transpose', [False, True])
def test_binary_densemm_jax_products_are_full_precision(transpose):
    w = jnp.ones((40, 30), jnp.float32)
    s = jnp.ones((30, 5) if not transpose else (40, 5), jnp.bool_)
    lines = _dot_precisions(lambda w, s: ej.binary_densemm(w, s, transpose=transpose, backend='jax'), w, s)
    _assert_highest(lines)


def test_csr_sddmm_jax_products_are_full_precision():
    indptr = jnp.array([0, 2, 3], jnp.int32)
    indices = jnp.array([0, 2, 1], jnp.int32)
    a, b = jnp.ones((2, 4), jnp.float32), jnp.ones((4, 3), jnp.float32)
    lines = _dot_precisions(lambda a, b: ej.csr_sddmm(a, b, indices, indptr, shape=(2, 3), backend='jax'), a, b)
    _assert_highest(lines)
