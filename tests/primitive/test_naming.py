"""Messages name the primitive, and primitives that share a name are told apart."""

import jax
import jax.numpy as jnp
import pytest

import eventjax as ej
from eventjax.errors import DuplicatePrimitiveWarning, PlatformNotSupportedError
from tests.conftest import out_like


def test_a_platform_without_a_kernel_names_the_primitive():
    p = ej.XLACustomKernel('gpu_only_naming')
    p.def_kernel('a', 'gpu', lambda outs: lambda x: (x,))
    x = jnp.ones(3)
    with pytest.raises(PlatformNotSupportedError, match="primitive 'gpu_only_naming' has no kernel for platform 'cpu'"):
        jax.jit(lambda x: p(x, outs=out_like(x))).lower(x)


class TestSameName:
    def test_a_second_primitive_with_a_name_warns(self):
        ej.XLACustomKernel('shared_name_warns')
        with pytest.warns(DuplicatePrimitiveWarning, match='shared_name_warns'):
            ej.XLACustomKernel('shared_name_warns')

    def test_the_listing_shows_the_newest_under_the_plain_name(self):
        old = ej.XLACustomKernel('shared_name_listing')
        old.def_kernel('old', 'cpu', lambda outs: lambda x: (x,))
        with pytest.warns(DuplicatePrimitiveWarning):
            new = ej.XLACustomKernel('shared_name_listing')
        new.def_kernel('new', 'cpu', lambda outs: lambda x: (x,))
        listing = ej.primitives()
        assert listing['shared_name_listing']['cpu'] == ('new',)
        older = [k for k in listing if k.startswith('shared_name_listing#')]
        assert len(older) == 1 and listing[older[0]]['cpu'] == ('old',)
