"""BitPackedEvents and CompactEvents multiply CSR, CSC and FixedNumConn with `@` like the bool events they stand for."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import eventjax as ej
from tests.extras import UNITS_EXTRA

DENSE = np.array([[0., 2., 0., 1.], [3., 0., 4., 0.], [0., 5., 0., 6.]], np.float32)
ROWS = np.array([True, False, True])       # events over the 3 rows
COLS = np.array([False, True, True, False])  # events over the 4 columns


@pytest.fixture(autouse=True)
def _jax_kernels():
    with ej.config.override(cpu='jax'):
        yield


def matrices():
    csr = ej.CSR.fromdense(DENSE)
    fcn = ej.FixedNumConn((jnp.array([[2., 1.], [3., 4.], [5., 6.]]), jnp.array([[1, 3], [0, 2], [1, 3]])),
                          shape=(3, 4))
    return {'csr': csr, 'fcn': fcn}


@pytest.mark.parametrize('kind', ['csr', 'fcn'])
@pytest.mark.parametrize('form', ['bitpack', 'compact_bitpack', 'compact'])
def test_every_form_gives_the_bool_product_on_both_sides(kind, form):
    A = matrices()[kind]
    rows, cols = getattr(ej.EventArray(ROWS), form)(), getattr(ej.EventArray(COLS), form)()
    np.testing.assert_allclose(rows @ A, ROWS @ DENSE)
    np.testing.assert_allclose(A @ cols, DENSE @ COLS)
    np.testing.assert_allclose(A.T @ rows, ROWS @ DENSE)
    np.testing.assert_allclose(cols @ A.T, DENSE @ COLS)


def test_conversions_round_trip():
    ev = ej.EventArray(ROWS)
    assert ev.bitpack().compact(2).bitpack().todense().tolist() == ROWS.tolist()
    assert ev.compact(2).bitpack().words.tolist() == [5]
    assert ej.CompactEvents.from_array(ROWS, 2).to_event_array().value.tolist() == ROWS.tolist()


def test_compact_events_pass_through_jit_and_keep_the_overflow():
    A = ej.CSR.fromdense(DENSE)
    f = jax.jit(lambda s: ej.EventArray(s).compact_bitpack(1) @ A)
    assert np.isnan(f(jnp.asarray(ROWS))).all()  # two events in a list of one: NaN, never a silent drop
    np.testing.assert_allclose(f(jnp.array([False, True, False])), DENSE[1])


def test_packed_events_of_the_wrong_size_name_the_side():
    with pytest.raises(ValueError, match='BitPackedEvents of 4 neurons cannot multiply'):
        ej.EventArray(COLS).bitpack() @ ej.CSR.fromdense(DENSE)


def test_units_of_the_weights_come_back():
    u = pytest.importorskip('brainunit', reason=UNITS_EXTRA)
    A = ej.CSR.fromdense(DENSE)
    got = ej.binary_csrmv_packed(A.data * u.mV, A.indices, A.indptr, ej.bitpack(ROWS), shape=(3, 4),
                                 transpose=True)
    assert got.unit == u.mV
    np.testing.assert_allclose(got.mantissa, ROWS @ DENSE)
    got = ej.binary_csrmm_indexed(A.data * u.mV, A.indices, A.indptr, None, ROWS[:, None], shape=(3, 4),
                                  transpose=True)
    assert got.unit == u.mV
