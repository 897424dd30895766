"""The backend modules the docs named before each backend had a package keep their names for one release, warning."""

import importlib
import pathlib
import re

import pytest

import eventjax

OLD = [
    ('numba_bridge', 'numba', 'bounds_checked'),
    ('numba_bridge', 'numba', 'report_error'),
    ('warp_bridge', 'warp', 'WarpKernelSpec'),
    ('warp_bridge', 'warp', 'warp_dtype'),
    ('native_bridge', 'native', 'ffi_type'),
    ('native_bridge', 'native', 'c_type'),
]
OLD_NAMES = {'numba_bridge': 'bounds_checked', 'warp_bridge': 'warp_dtype', 'native_bridge': 'c_type'}


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


def _release(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.match(r'\d+(\.\d+)*', version).group().split('.'))


def _removal_versions():
    """Every ``REMOVED_IN = '<version>'`` in the package: the shims and the old spellings that say when they go."""
    root = pathlib.Path(eventjax.__file__).parent
    for path in sorted(root.rglob('*.py')):
        for version in re.findall(r"^REMOVED_IN = '([^']+)'", path.read_text(), re.MULTILINE):
            yield str(path.relative_to(root)), version


def test_every_deprecated_shim_says_the_release_that_removes_it():
    found = dict(_removal_versions())
    assert {'backends/numba_bridge.py', 'backends/native_bridge.py', 'backends/warp_bridge.py'} <= set(found)
    for name in ('numba_bridge', 'native_bridge', 'warp_bridge'):
        module = importlib.import_module(f'eventjax.backends.{name}')
        with pytest.warns(DeprecationWarning, match=f'goes in eventjax {module.REMOVED_IN}'):
            getattr(module, OLD_NAMES[name])


@pytest.mark.parametrize('path, version', list(_removal_versions()))
def test_a_deprecated_name_is_gone_by_the_release_it_names(path, version):
    # When eventjax's version reaches a removal version, this fails until what it names is removed.
    assert _release(eventjax.__version__) < _release(version), (
        f'eventjax {eventjax.__version__} is at or past {version}: remove what {path} keeps for it.')
