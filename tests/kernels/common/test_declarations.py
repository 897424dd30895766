"""Every standard primitive is declared one way: a Declaration held by its module as `_<name>`, whose primitive is
a PreparedKernel; no kernel module builds an XLACustomKernel by hand; the prepare and bounds wraps follow what each
bridge declares."""

import importlib
import pathlib
import pkgutil

import jax
import jax.numpy as jnp

import eventjax as ej
import eventjax.kernels
from eventjax.backends.registry import BRIDGES
from eventjax.kernels.common import Declaration, PreparedKernel
from eventjax.kernels.common.operator import kernel_sources

KERNELS = pathlib.Path(eventjax.kernels.__file__).parent


def _declarations():
    found = {}
    for info in pkgutil.walk_packages([str(KERNELS)], 'eventjax.kernels.'):
        module = importlib.import_module(info.name)
        for attr, value in vars(module).items():
            if isinstance(value, Declaration):
                found.setdefault(value.name, set()).add((module.__name__, attr, value))
    return found


def test_every_standard_primitive_is_a_declaration_named_after_it():
    ej.get_registry()
    declared = _declarations()
    assert set(kernel_sources()) <= set(declared)
    registry = ej.get_registry()
    for name, holders in declared.items():
        assert {attr for _, attr, _ in holders} == {f'_{name}'}, holders
        assert len({id(d) for _, _, d in holders}) == 1, holders  # one declaration, however many imports
        declaration = next(iter(holders))[2]
        assert isinstance(declaration.primitive, PreparedKernel), name
        assert registry[name] is declaration.primitive, name


def test_no_kernel_module_builds_a_primitive_by_hand():
    for path in KERNELS.rglob('*.py'):
        assert 'XLACustomKernel(' not in path.read_text(), path


def test_the_wraps_follow_the_bridges():
    calls = []
    prim = PreparedKernel('declarations_wraps_example', prepare=lambda x: (calls.append('prepare') or x,),
                          bounds=True)
    seen = {}

    def generator(name):
        def kg(outs, **static):
            seen[name] = sorted(static)
            return lambda x, *rest: (x + len(rest),)
        return kg

    for bridge in BRIDGES:
        prim.def_kernel(bridge.name, bridge.platforms[0], generator(bridge.name))
    x = jnp.zeros(2)
    out = jax.ShapeDtypeStruct(x.shape, x.dtype)
    for bridge in BRIDGES:
        if bridge.platforms[0] != 'cpu':
            continue
        calls.clear()
        y = jax.jit(lambda v, b=bridge.name: prim(v, outs=out, backend=b, w_min=0.0, w_max=None))(x)
        # a bridge that takes the bounds as an operand gets one more operand, and the static bounds go
        assert float(y[0]) == (1.0 if bridge.bounds_as_operand else 0.0), bridge.name
        assert ('w_min' in seen[bridge.name]) != bridge.bounds_as_operand, bridge.name
        assert (calls == ['prepare']) != bridge.prepares_in_kernel, bridge.name
