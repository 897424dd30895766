"""A primitive pickles by reference: the module that made it, and its name there."""

import gc
import pickle
import subprocess
import sys

import pytest

import eventjax as ej

# A user-made primitive at module level: importing this module makes it again in a fresh process.
DOUBLE = ej.XLACustomKernel('pickle_test_double')
DOUBLE.def_kernel('jax', 'cpu', lambda outs: lambda x: (x * 2,))


def test_a_module_level_primitive_pickles_as_itself():
    assert pickle.loads(pickle.dumps(DOUBLE)) is DOUBLE


def test_a_standard_primitive_comes_back_in_a_fresh_process():
    data = pickle.dumps([DOUBLE, ej.get_registry()['binary_csrmv']])
    code = 'import pickle, sys; print([p.name for p in pickle.loads(sys.stdin.buffer.read())])'
    run = subprocess.run([sys.executable, '-c', code], input=data, capture_output=True, timeout=300, cwd=_ROOT)
    assert run.returncode == 0, run.stderr.decode()
    assert run.stdout.decode().strip() == "['pickle_test_double', 'binary_csrmv']"


def test_a_primitive_gone_from_the_process_fails_to_unpickle_naming_the_fix():
    made = ej.XLACustomKernel('pickle_test_made_in_a_function')
    data = pickle.dumps(made)
    del made
    gc.collect()  # the registry holds primitives weakly: now nothing makes this one
    with pytest.raises(pickle.UnpicklingError, match='create it at module level'):
        pickle.loads(data)


def test_primitives_that_share_a_name_refuse_to_pickle():
    first = ej.XLACustomKernel('pickle_test_shared')
    assert pickle.loads(pickle.dumps(first)) is first
    with pytest.warns(ej.errors.DuplicatePrimitiveWarning):
        second = ej.XLACustomKernel('pickle_test_shared')
    for kernel in (first, second):
        with pytest.raises(pickle.PicklingError, match='own name'):
            pickle.dumps(kernel)


_ROOT = __file__.rsplit('/tests/', 1)[0]
