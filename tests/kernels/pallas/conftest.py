"""Register the pallas kernels for the cpu (interpret mode) when the first pallas test runs, not at collection.

Registering at collection would add ``'pallas'`` to the backends every other
kernel test module parametrizes over, and interpret mode is too slow for
the whole suite; this folder runs a bounded set of cases instead.
"""

import attrs
import pytest

import eventjax as ej
from eventjax.kernels.csr.binary_csrmm import _binary_csrmm
from eventjax.kernels.csr.binary_csrmv import _binary_csrmv
from eventjax.kernels.csr.csrmm import _csrmm
from eventjax.kernels.csr.csrmv import _csrmv
from eventjax.kernels.dense.binary_densemm import _binary_densemm
from eventjax.kernels.dense.binary_densemv import _binary_densemv
from eventjax.kernels.fcn.binary_fcnmm import _binary_fcnmm
from eventjax.kernels.fcn.binary_fcnmv import _binary_fcnmv
from eventjax.kernels.fcn.fcnmm import _fcnmm
from eventjax.kernels.fcn.fcnmv import _fcnmv

OPERATORS = (_binary_densemv, _binary_densemm, _csrmv, _csrmm, _binary_csrmv, _binary_csrmm,
             _fcnmv, _fcnmm, _binary_fcnmv, _binary_fcnmm)


@pytest.fixture(autouse=True)
def _pallas_registered():
    # The cpu entry exists only while interpret mode is on at registration.
    before = ej.config.snapshot()
    ej.backends.pallas.set_cpu_interpret(True)
    for op in OPERATORS:
        op.register('pallas')
    yield
    # Put the kernel tables back, so tests that run later in this process
    # (the CLI's "no usable backend" check) do not see cpu pallas kernels.
    ej.config.update(lambda snap: attrs.evolve(snap, primitives=before.primitives,
                                               settings=before.settings))
