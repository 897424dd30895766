"""Every public name of eventjax leads a reader to its definition, and pickles as a reference to it."""

import functools
import inspect
import multiprocessing
import os
import pickle
import re
import textwrap
import warnings

import jax.numpy as jnp
import numpy as np
import pytest

import eventjax as ej

SRC = os.path.dirname(ej.__file__)


def _public_callables():
    return [(name, getattr(ej, name)) for name in ej.__all__ if callable(getattr(ej, name))]


@pytest.mark.parametrize('name, obj', _public_callables(), ids=lambda x: x if isinstance(x, str) else '')
def test_the_definition_of_a_public_name_is_where_its_source_file_says_outside_compat(name, obj):
    # An editor's "go to definition" and grep land on the module that defines the name,
    # not on a wrapper: the four operators that also take brainevent's keywords included.
    path = inspect.getsourcefile(inspect.unwrap(obj))
    assert not os.path.relpath(path, SRC).startswith('compat'), f'{name} is defined in {path}'
    source = open(path, encoding='utf-8').read()
    assert re.search(rf'^\s*(def|class) {name}\b', source, re.MULTILINE), f'no def/class {name} in {path}'


def _type_checking_block(source: str) -> dict:
    """What the ``if TYPE_CHECKING:`` block of ``source`` imports, run as it is written."""
    start = source.index('if TYPE_CHECKING:')
    body = source[start:source.index('\n\n', start)].split('\n', 1)[1]
    names = {}
    exec(textwrap.dedent(body), names)  # noqa: S102 - the package's own import lines
    return names


def test_every_lazily_loaded_name_is_imported_in_the_type_checking_block():
    imported = _type_checking_block(open(os.path.join(SRC, '__init__.py'), encoding='utf-8').read())
    for name in ej._LAZY:
        assert imported.get(name) is getattr(ej, name), name


@pytest.mark.parametrize('name, obj', _public_callables(), ids=lambda x: x if isinstance(x, str) else '')
def test_a_public_callable_pickles_as_a_reference_to_itself(name, obj):
    assert pickle.loads(pickle.dumps(obj)) is obj


def test_an_operator_that_takes_brainevents_keyword_still_warns_and_pickles():
    data, indices, indptr = jnp.array([1., 2., 3.]), jnp.array([0, 1, 1]), jnp.array([0, 2, 3])
    spikes = jnp.array([True, False])
    with pytest.warns(DeprecationWarning, match='pass spikes='):
        old = ej.binary_csrmv(data, indices, indptr, v=spikes, shape=(2, 2), transpose=True)
    np.testing.assert_allclose(old, ej.binary_csrmv(data, indices, indptr, spikes, shape=(2, 2), transpose=True))
    with pytest.raises(TypeError, match='pass only spikes='):
        ej.binary_csrmv(data, indices, indptr, spikes, v=spikes, shape=(2, 2))
    with pytest.raises(TypeError, match="missing 1 required argument: 'spikes'"):
        ej.binary_csrmv(data, indices, indptr, shape=(2, 2))


def _row_sums(fn, v):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', DeprecationWarning)
        return np.asarray(fn(v))


def test_a_pool_maps_a_partial_of_a_public_operator():
    data, indices, indptr = np.array([1., 2., 3.], np.float32), np.array([0, 1, 1]), np.array([0, 2, 3])
    call = functools.partial(ej.binary_csrmv, data, indices, indptr, shape=(2, 2))
    vectors = [np.array([True, False]), np.array([False, True])]
    with multiprocessing.get_context('spawn').Pool(1) as pool:
        got = pool.map_async(functools.partial(_row_sums, call), vectors).get(timeout=300)
    np.testing.assert_allclose(got, [[1., 0.], [2., 3.]])


def test_the_numba_backends_settings_are_its_own_attributes_and_its_lazy_names_are_written_out():
    from eventjax.backends import numba

    for name in ('set_num_threads', 'requested_num_threads', 'get_num_threads', 'set_parallel', 'get_parallel',
                 'threading_layer', 'describe_kernel'):
        assert name in vars(numba), name  # no module __getattr__ between a reader and these
    imported = _type_checking_block(inspect.getsource(numba))
    for name in numba._NEEDS_NUMBA:
        assert imported.get(name) is getattr(numba, name), name
    assert set(numba.__all__) >= set(numba._NEEDS_NUMBA)
