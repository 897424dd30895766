"""The numba disk cache gives the answer of the code as it reads now, across edits and damaged files.

Each run is a fresh process sharing one private ``NUMBA_CACHE_DIR``. Between
runs the test edits a module global an njit helper reads, an ``@overload``'s
implementation, an njit callee and a factory's closure value; within the
first run the global changes between two calls. A recursive callee runs in
every process. Then the cache files are damaged (handler sources emptied or
cut short, numba's index and machine-code files cut short): each run must
still give the oracle's answer, warning once about what it compiled again.
"""

import json
import os
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip('numba')

_EDITS = textwrap.dedent('''\
    import numba
    from numba.extending import overload

    SCALE = {scale}


    def stub(x):
        return x


    @overload(stub)
    def _stub_impl(x):
        return lambda x: x * {times}


    @numba.njit
    def callee(x):
        return x + {add}


    @numba.njit
    def helper(x):
        return x * SCALE
''')

_SCRIPT = textwrap.dedent('''\
    import json, sys, warnings
    import jax, numba, numpy as np
    import ej_edits as m
    from eventjax.backends.numba import bridge as nb


    def factory(c):
        @numba.njit
        def scaled(x, out):
            out[...] = x * c
        return scaled


    @numba.njit
    def via_global(x, out):
        out[...] = m.helper(x)


    @numba.njit
    def via_overload(x, out):
        out[...] = m.stub(x)


    @numba.njit
    def via_callee(x, out):
        out[...] = m.callee(x)


    @numba.njit
    def fib(n):
        return n if n < 2 else fib(n - 1) + fib(n - 2)


    @numba.njit
    def via_recursion(x, out):
        out[...] = x * fib(10)


    def run(kernel):
        out = (jax.ShapeDtypeStruct((3,), np.float32),)
        return float(nb.numba_kernel_generator(lambda outs: kernel)(outs=out)(np.ones(3, np.float32))[0][0])


    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        got = {'closure': run(factory(float(sys.argv[1]))), 'global': run(via_global),
               'overload': run(via_overload), 'callee': run(via_callee), 'recursion': run(via_recursion)}
        if len(sys.argv) > 2:
            m.SCALE = float(sys.argv[2])
            got['global after'] = run(via_global)
    got['warnings'] = sorted({type(w.message).__name__ for w in caught})
    print('RESULT', json.dumps(got))
''')


class _Runs:
    """Fresh processes over one private cache folder."""

    def __init__(self, folder):
        self.folder = folder
        self.cache = folder / 'cache'
        (folder / 'script.py').write_text(_SCRIPT)
        self.env = dict(
            os.environ,
            NUMBA_CACHE_DIR=str(self.cache),
            PYTHONPATH=os.pathsep.join([str(folder), *sys.path]),
            PYTHONDONTWRITEBYTECODE='1',  # an edited module must not be read from a stale .pyc
        )

    def edit(self, scale, times, add):
        (self.folder / 'ej_edits.py').write_text(_EDITS.format(scale=scale, times=times, add=add))

    def run(self, *args):
        r = subprocess.run([sys.executable, str(self.folder / 'script.py'), *map(str, args)], env=self.env,
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, f'exit status {r.returncode}:\n{r.stderr[-3000:]}'
        return json.loads(r.stdout.split('RESULT', 1)[1])

    def damage(self, pattern, keep_bytes):
        files = sorted(self.cache.rglob(pattern))
        assert files, f'no {pattern} files to damage'
        for f in files:
            f.write_bytes(f.read_bytes()[:keep_bytes])


def _oracle(closure, scale, times, add, **later):
    return {'closure': closure, 'global': 1.0 * scale, 'overload': 1.0 * times, 'callee': 1.0 + add,
            'recursion': 55.0, **later}


@pytest.fixture(scope='module')
def runs(tmp_path_factory):
    return _Runs(tmp_path_factory.mktemp('edits'))


@pytest.mark.long  # three fresh processes compiling from cold, about a minute, so make test-long
class TestEditsBetweenProcesses:
    # The three tests share one cache folder and run in this order.

    def test_a_global_changed_within_the_process_reaches_the_next_handler(self, runs):
        runs.edit(scale=2.0, times=2.0, add=1.0)
        assert runs.run(5.0, 3.0) == {**_oracle(5.0, 2.0, 2.0, 1.0, **{'global after': 3.0}), 'warnings': []}

    def test_edited_globals_overloads_callees_and_closures_are_compiled_afresh(self, runs):
        # The handler for SCALE = 3 was filed by the previous process, after its helper had been compiled for 2.
        runs.edit(scale=3.0, times=3.0, add=10.0)
        assert runs.run(7.0) == {**_oracle(7.0, 3.0, 3.0, 10.0), 'warnings': []}

    def test_emptied_handler_sources_and_cut_indexes_cost_a_compile_and_a_warning(self, runs):
        runs.damage('numba_handlers/*.py', 0)
        runs.damage('*.nbi', 20)
        assert runs.run(7.0) == {**_oracle(7.0, 3.0, 3.0, 10.0), 'warnings': ['DiskCacheWarning']}


@pytest.mark.long  # one fresh process per kind of damage
@pytest.mark.parametrize('pattern, keep', [('numba_handlers/*.py', 200), ('*.nbc', 100), ('*.nbi', 0)])
def test_each_kind_of_damaged_file_is_compiled_again_once_then_served(tmp_path, pattern, keep):
    runs = _Runs(tmp_path)
    runs.edit(scale=4.0, times=5.0, add=6.0)
    want = _oracle(2.0, 4.0, 5.0, 6.0)
    assert runs.run(2.0) == {**want, 'warnings': []}
    runs.damage(pattern, keep)
    assert runs.run(2.0) == {**want, 'warnings': ['DiskCacheWarning']}
    assert runs.run(2.0) == {**want, 'warnings': []}
