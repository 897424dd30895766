"""A kernel is found from its operator by grep: every backend registered for a primitive of a kernel family has
``<name>_kernel`` written in that family's ``<backend>_impl.py`` (where the registration imports it from)."""

import importlib
import pathlib
import pkgutil

import pytest

import eventjax.kernels as kernels
from eventjax.backends import XLACustomKernel

FAMILIES = sorted(m.name for m in pkgutil.iter_modules(kernels.__path__) if m.ispkg and m.name != 'common')


def _primitives(family: str) -> dict[str, XLACustomKernel]:
    """Every primitive a module of ``family`` declares (directly, or as an Operator's ``primitive``)."""
    found = {}
    package = importlib.import_module(f'eventjax.kernels.{family}')
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f'{package.__name__}.{info.name}')
        for value in vars(module).values():
            prim = value if isinstance(value, XLACustomKernel) else getattr(value, 'primitive', None)
            if isinstance(prim, XLACustomKernel) and module.__name__.startswith('eventjax.kernels.'):
                found[prim.name] = prim
    return found


@pytest.mark.parametrize('family', FAMILIES)
def test_each_backend_kernel_of_an_operator_is_written_under_its_name(family):
    folder = pathlib.Path(kernels.__file__).parent / family
    prims = _primitives(family)
    assert prims, family
    missing = []
    for name, prim in prims.items():
        backends = {b for p in ('cpu', 'gpu', 'tpu') for b in prim.available_backends(p)} - {'jax'}
        for backend in sorted(backends):
            impl = folder / f'{backend}_impl.py'
            if not impl.is_file() or f'{name}_kernel' not in impl.read_text():
                missing.append(f'{family}/{backend}_impl.py: {name}_kernel')
    assert missing == []


def test_the_kernel_table_is_what_the_registry_registers():
    # kernels/table.py names, per operator and backend, the file of the kernel: a
    # newcomer's grep. It must say what registration actually does.
    import importlib.util

    path = pathlib.Path(__file__).parents[2] / 'tools' / 'kernel_table.py'
    spec = importlib.util.spec_from_file_location('kernel_table', path)
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    assert tool.main(['--check']) == 0, 'run python tools/kernel_table.py'
    from eventjax.kernels.table import KERNELS

    assert KERNELS['binary_csrmv'] == 'csr/{cpp,cuda,jax,numba,pallas,warp}_impl.py'
    assert KERNELS['jitcmv'] == 'jitc/{numba,warp}_impl.py jitc/reference.py'
