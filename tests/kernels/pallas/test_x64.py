"""The pallas kernels (interpret mode on the cpu) run with ``jax_enable_x64`` on, int32 structure or int64."""


import jax
import jax.numpy as jnp
import numpy as np
import pytest

import eventjax as ej
import eventjax.kernels.indexed  # noqa: F401  its primitives exist before the folder's fixture saves the tables
from eventjax.kernels.common.operator import register_backend
from eventjax.kernels.delay.csr_delay_deliver import _csr_delay_deliver

INDEXED = ('binary_csrmv_indexed', 'binary_csrmv_packed', 'csr_slice_rows')


@pytest.fixture(autouse=True)
def _registered():
    # The folder's fixture has interpret mode on, registers the products and restores the tables afterwards.
    _csr_delay_deliver.register('pallas')
    for name in INDEXED:
        register_backend(ej.get_registry()[name], 'eventjax.kernels.indexed', name, 'pallas')


def _calls(index_dtype):
    data = jnp.array([1.0, 2.0, 3.0], jnp.float32)
    indices, indptr = jnp.array([0, 1, 1], index_dtype), jnp.array([0, 2, 3], index_dtype)
    both = jnp.array([True, True])
    return {
        'binary_csrmv': lambda b: ej.binary_csrmv(data, indices, indptr, both, shape=(2, 2), transpose=True,
                                                  backend=b),
        'binary_fcnmv': lambda b: ej.binary_fcnmv(data[:2].reshape(2, 1), indices[:2].reshape(2, 1), both,
                                                  shape=(2, 2), transpose=True, backend=b),
        'binary_csrmv_indexed': lambda b: ej.binary_csrmv_indexed(
            data, indices, indptr, None, (jnp.array([1, 0], jnp.int32), jnp.int32(2)), shape=(2, 2),
            transpose=True, backend=b),
        'binary_csrmv_packed': lambda b: ej.binary_csrmv_packed(data, indices, indptr, ej.bitpack(both), shape=(2, 2),
                                                                transpose=True, backend=b),
        'csr_slice_rows': lambda b: ej.csr_slice_rows(data, indices, indptr, jnp.array([1, 0], jnp.int32),
                                                      shape=(2, 2), backend=b),
        'csr_delay_deliver': lambda b: ej.csr_delay_deliver(jnp.zeros((3, 2), jnp.float32), both, data, indices,
                                                            indptr, jnp.ones(3, jnp.int32), 5, shape=(2, 2),
                                                            backend=b),
    }


@pytest.mark.parametrize('index_dtype', ['int32', 'int64'])
@pytest.mark.parametrize('op', sorted(_calls(jnp.int32)))
def test_pallas_matches_jax_under_x64(op, index_dtype):
    with jax.enable_x64(True):
        f = _calls(index_dtype)[op]
        np.testing.assert_allclose(f('pallas'), f('jax'), rtol=1e-6)
