"""Register the pallas kernels when the first pallas test runs, not at collection.

Registering at collection would add ``'pallas'`` to the backends every other
kernel test module parametrizes over, and interpret mode is too slow for
the whole suite; this folder runs a bounded set of cases instead.
"""

import pytest

import eventjax as ej
from eventjax.kernels.pallas_registration import register_pallas_kernels


@pytest.fixture(autouse=True)
def _pallas_registered():
    # The cpu entry exists only while interpret mode is on at registration.
    ej.config.set_pallas_cpu_interpret(True)
    register_pallas_kernels()
    yield
