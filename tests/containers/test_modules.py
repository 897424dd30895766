"""Each container class lives in a module of its name, and the package and the top level both offer it."""

import pickle
import re

import jax.numpy as jnp
import pytest

import eventjax as ej
import eventjax.containers as containers

CLASSES = [getattr(containers, n) for n in containers.__all__ if isinstance(getattr(containers, n), type)]


def _snake(name: str) -> str:
    """``BitPackedEvents`` -> ``bit_packed_events``, ``JITCMatrix`` -> ``jitc_matrix``, ``CSR`` -> ``csr``."""
    return re.sub(r'(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])', '_', name).lower()


def test_the_snake_case_names_split_words_and_keep_acronyms_whole():
    assert [_snake(n) for n in ('BitPackedEvents', 'JITCMatrix', 'DelayedCSR', 'COO')] == \
        ['bit_packed_events', 'jitc_matrix', 'delayed_csr', 'coo']


def test_every_public_container_is_listed():
    assert {c.__name__ for c in CLASSES} >= {'CSR', 'CSC', 'COO', 'EventArray', 'IndexedEvents', 'BitPackedEvents',
                                             'CompactEvents', 'GradedEvents', 'FixedNumConn', 'FixedNumPerPre',
                                             'FixedNumPerPost', 'DelayedCSR', 'JITCMatrix'}


@pytest.mark.parametrize('cls', CLASSES, ids=lambda c: c.__name__)
def test_a_container_lives_in_a_module_of_its_name(cls):
    assert cls.__module__ == f'eventjax.containers.{_snake(cls.__name__)}'
    assert getattr(ej, cls.__name__) is cls


@pytest.mark.parametrize('make', [
    lambda: ej.EventArray(jnp.array([True, False, True])).compact(2),
    lambda: ej.EventArray(jnp.array([True, False, True])).bitpack(),
    lambda: ej.EventArray(jnp.array([True, False, True])).compact_bitpack(2),
    lambda: ej.COO((jnp.array([1., 2.]), jnp.array([1, 0]), jnp.array([0, 1])), shape=(2, 3)),
    lambda: ej.FixedNumPerPost(jnp.ones((3, 1)), jnp.array([[0], [1], [0]]), shape=(2, 3)),
], ids=['indexed', 'bitpacked', 'compact', 'coo', 'per_post'])
def test_a_container_pickles_and_comes_back_equal(make):
    obj = make()
    again = pickle.loads(pickle.dumps(obj))
    assert type(again) is type(obj)
    assert jnp.array_equal(again.todense(), obj.todense())
