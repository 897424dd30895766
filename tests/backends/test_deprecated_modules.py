"""The backend modules the docs named before each backend had a package keep their names for one release, warning."""

import importlib

import pytest

OLD = [
    ('numba_bridge', 'numba', 'bounds_checked'),
    ('numba_bridge', 'numba', 'report_error'),
    ('warp_bridge', 'warp', 'WarpKernelSpec'),
    ('warp_bridge', 'warp', 'warp_dtype'),
    ('native_bridge', 'native', 'ffi_type'),
    ('native_bridge', 'native', 'c_type'),
]


@pytest.mark.parametrize('old, new, name', OLD)
def test_an_old_spelling_warns_naming_the_new_one_and_gives_the_same_object(old, new, name):
    module = importlib.import_module(f'eventjax.backends.{old}')
    with pytest.warns(DeprecationWarning, match=f'from eventjax.backends.{new} import {name}'):
        value = getattr(module, name)
    assert value is getattr(importlib.import_module(f'eventjax.backends.{new}'), name)


def test_a_name_the_old_module_never_documented_is_an_attribute_error():
    module = importlib.import_module('eventjax.backends.warp_bridge')
    with pytest.raises(AttributeError, match='no attribute'):
        _ = module.no_such_name
