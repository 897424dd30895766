"""``XLACustomKernel`` has one written-out ``def_<name>_kernel`` per bridge of the registry, and no other."""

import inspect
import re

import pytest

from eventjax.backends import custom_kernel
from eventjax.backends.custom_kernel import XLACustomKernel
from eventjax.backends.registry import BRIDGES

NOT_A_BRIDGE = {'def_kernel', 'def_bridge_kernel', 'def_cuda_raw_kernel'}


def test_the_methods_are_the_bridges():
    methods = {n for n in dir(XLACustomKernel) if re.fullmatch(r'def_\w+_kernel', n)} - NOT_A_BRIDGE
    assert methods == {f'def_{b.name}_kernel' for b in BRIDGES}


@pytest.mark.parametrize('bridge', BRIDGES, ids=lambda b: b.name)
def test_each_method_is_written_in_the_class_and_registers_through_its_bridge(bridge, monkeypatch):
    name = f'def_{bridge.name}_kernel'
    method = XLACustomKernel.__dict__[name]
    source = inspect.getsource(custom_kernel)
    assert re.search(rf'^    def {name}\(', source, re.MULTILINE)
    params = inspect.signature(method).parameters
    if bridge.platform_first:
        assert list(params)[1:3] == ['platform', 'kernel_generator']
    else:
        assert list(params)[1] == 'kernel_generator'
        assert params['platform'].default == bridge.default_platform
    calls = []
    monkeypatch.setattr(XLACustomKernel, 'def_bridge_kernel', lambda self, *args: calls.append(args))
    prim = XLACustomKernel(f'def_kernel_methods_{bridge.name}')
    kg = object()
    if bridge.platform_first:
        getattr(prim, name)(bridge.platforms[0], kg)
        assert calls == [(bridge.name, kg, bridge.platforms[0], False)]
    else:
        getattr(prim, name)(kg)
        assert calls == [(bridge.name, kg, bridge.default_platform, False)]
    assert f'p.{name}(' in method.__doc__
