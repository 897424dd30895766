"""An operator declaration: what it derives, and the mistakes it refuses."""

import pytest

import eventjax as ej
from eventjax.kernels.common import Operator
from eventjax.kernels.csr.csrmv import _csrmv


def test_a_vector_operator_must_name_its_matrix_counterpart():
    with pytest.raises(TypeError, match=r"'toy_mv'.*mm_op"):
        Operator('toy_mv', 'eventjax.kernels.csr', ('w', 'x'), events=False, matrix=False,
                 weight_cotangent=lambda *a, **k: None, kernels=())


def test_a_declaration_registers_every_backend_and_the_rules():
    prim = _csrmv.primitive
    assert isinstance(prim, ej.XLACustomKernel)
    assert set(prim.available_backends('cpu')) >= {'jax', 'numba', 'warp', 'cpp'}
    assert prim.available_backends('gpu') == ('jax', 'warp', 'pallas', 'cuda')
    assert prim.get_default('gpu') == 'warp'  # pallas and cuda are registered, never the default
    assert prim.get_default('cpu') == 'numba'
    assert ej.primitives()['csrmv']['cpu'] == prim.available_backends('cpu')
