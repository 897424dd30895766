"""bitpack / bitunpack and BitPackedEvents: 32 neurons per word, eventjax's event rule, exact round trips."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import eventjax as ej


def test_bit_b_of_word_w_is_neuron_32w_plus_b():
    spikes = np.zeros(70, bool)
    spikes[[0, 31, 32, 69]] = True
    words = ej.bitpack(spikes)
    assert words.dtype == jnp.uint32 and words.tolist() == [1 + 2**31, 1, 2**5]


def test_only_events_are_packed_nan_and_negatives_are_not():
    assert ej.bitpack(np.array([0.5, -1.0, np.nan, np.inf, 0.0])).tolist() == [1 + 8]


@pytest.mark.parametrize('n', [0, 1, 31, 32, 33, 100])
def test_round_trip_under_jit(n):
    spikes = np.random.default_rng(n).random(n) < 0.3
    words = jax.jit(ej.bitpack)(spikes)
    assert words.shape == (-(-n // 32),)
    np.testing.assert_array_equal(jax.jit(ej.bitunpack, static_argnums=1)(words, n), spikes)


def test_a_batch_packs_along_the_chosen_axis():
    spikes = np.random.default_rng(0).random((40, 3)) < 0.5
    words = ej.bitpack(spikes, axis=0)
    assert words.shape == (2, 3)
    np.testing.assert_array_equal(ej.bitunpack(words, 40, axis=0), spikes)
    np.testing.assert_array_equal(ej.bitunpack(ej.bitpack(spikes.T, axis=1), 40, axis=1), spikes.T)


def test_bad_words_and_sizes_are_named():
    with pytest.raises(TypeError, match='words must be uint32'):
        ej.bitunpack(np.array([1], np.int32), 3)
    with pytest.raises(ValueError, match=r'n must be an int in \[0, 32\]'):
        ej.bitunpack(np.array([1], np.uint32), 33)


class TestBitPackedEvents:
    def test_bitpack_and_back_through_jit_and_matmul(self):
        spikes = np.array([True, False, True, False, True])
        W = jnp.asarray(np.arange(10, dtype=np.float32).reshape(5, 2))
        ev = ej.EventArray(spikes).bitpack()
        assert ev.shape == (5,)
        np.testing.assert_array_equal(jax.jit(lambda e: e.todense())(ev), spikes)
        np.testing.assert_allclose(ev @ W, spikes @ np.asarray(W))
        np.testing.assert_allclose(ej.CSR.fromdense(np.asarray(W).T) @ ev, np.asarray(W).T @ spikes)

    def test_words_of_the_wrong_length_are_refused(self):
        with pytest.raises(ValueError, match='1 words for size 5'):
            ej.BitPackedEvents(np.zeros(2, np.uint32), 5)
