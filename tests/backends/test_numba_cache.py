"""A compiled numba handler serves only the kernel it was compiled from, in memory and on disk."""

import os
import subprocess
import sys
import textwrap

import jax
import numpy as np
import pytest

numba = pytest.importorskip('numba')

from eventjax.backends.numba import bridge as nb  # noqa: E402
from eventjax.backends.numba import codegen as numba_codegen  # noqa: E402
from eventjax.backends.numba import keying as numba_keying  # noqa: E402

OUT = (jax.ShapeDtypeStruct((3,), np.float32),)
X = np.ones(3, np.float32)


def scale_kg(s):
    def kg(outs):
        @numba.njit
        def scale(x, out):
            out[...] = x * s

        return scale

    return kg


def run(kg):
    return np.asarray(nb.numba_kernel_generator(kg)(outs=OUT)(X)[0]).tolist()


SCALE = 2.0


@numba.njit
def scaled(x):
    return x * SCALE


@numba.njit
def calls_scaled(x, out):
    out[...] = scaled(x)


@numba.vectorize
def shifted(x):
    return x + SCALE


@numba.njit
def calls_shifted(x, out):
    out[...] = shifted(x)


class TestInProcess:
    def test_closures_over_different_arrays_give_their_own_results(self):
        assert run(scale_kg(np.array(2.0, np.float32))) == [2.0] * 3
        assert run(scale_kg(np.array(3.0, np.float32))) == [3.0] * 3

    def test_closures_over_equal_arrays_share_one_target(self):
        run(scale_kg(np.array(4.0, np.float32)))
        before = nb.target_count()
        assert run(scale_kg(np.array(4.0, np.float32))) == [4.0] * 3
        assert nb.target_count() == before

    def test_a_rebound_global_array_reaches_a_fresh_kernel(self):
        glb = {'G': np.array(2.0, np.float32)}
        exec('def k(x, out):\n    out[...] = x * G\n', glb)
        assert run(lambda outs: numba.njit(glb['k'])) == [2.0] * 3
        glb['G'] = np.array(6.0, np.float32)
        assert run(lambda outs: numba.njit(glb['k'])) == [6.0] * 3

    @pytest.mark.parametrize('boundscheck', [False, True])
    def test_kernels_differing_only_in_locals_give_their_own_results(self, boundscheck):
        def total(x, out):
            acc = 0
            for v in x:
                acc += v
            out[0] = acc

        def run_with(acc_type):
            kernel = numba.njit(locals={'acc': acc_type})(total)
            kg = nb.numba_kernel_generator(lambda outs: kernel, boundscheck=boundscheck)
            return np.asarray(kg(outs=(jax.ShapeDtypeStruct((1,), np.float32),))(np.full(4, 0.5, np.float32))[0])

        # numba alone: the int64 accumulator truncates every step, the float one does not.
        assert run_with(numba.int64).tolist() == [0.0]
        assert run_with(numba.float64).tolist() == [2.0]

    def test_a_global_changed_after_its_helper_compiled_reaches_the_next_handler(self, tmp_path, monkeypatch):
        monkeypatch.setattr(numba.config, 'CACHE_DIR', str(tmp_path))
        assert run(lambda outs: calls_scaled) == [2.0] * 3
        monkeypatch.setitem(globals(), 'SCALE', 3.0)
        assert run(lambda outs: calls_scaled) == [3.0] * 3

    def test_a_handler_linking_a_ufunc_compiled_for_an_older_global_stays_off_the_disk(self, tmp_path, monkeypatch):
        # numba compiles a @vectorize function once per process: the handler for the new value cannot be
        # trusted to hold code for it, so nothing is filed under its key.
        monkeypatch.setattr(numba.config, 'CACHE_DIR', str(tmp_path))
        assert run(lambda outs: calls_shifted) == [3.0] * 3
        filed = sorted(p.name for p in tmp_path.rglob('*.nbi'))
        monkeypatch.setitem(globals(), 'SCALE', 5.0)
        run(lambda outs: calls_shifted)
        assert sorted(p.name for p in tmp_path.rglob('*.nbi')) == filed

    def test_a_kernel_without_fingerprint_is_compiled_but_never_cached_on_disk(self, tmp_path, monkeypatch):
        monkeypatch.setattr(numba.config, 'CACHE_DIR', str(tmp_path))
        monkeypatch.setattr(numba_keying, 'describe_kernel', lambda kernel: (None, False))
        assert run(scale_kg(np.array(7.0, np.float32))) == [7.0] * 3
        assert run(scale_kg(np.array(8.0, np.float32))) == [8.0] * 3
        assert list(tmp_path.rglob('*')) == []


# Two processes, one NUMBA_CACHE_DIR. Between them the closure value and a
# module-level array change (plus_one does not, and must come from disk), and
# the test edits a @numba.vectorize helper's file, a module attribute a kernel
# reads through a closure cell, and the accumulator type a kernel declares in
# locals=. One pair of processes serves both classes below: each process pays
# the import and numba's first compile, the larger part of its time.
_SCRIPT = textwrap.dedent("""
    import sys
    import jax, numba, numpy as np
    from eventjax.backends.numba import bridge as nb

    S, G = float(sys.argv[1]), np.array(float(sys.argv[2]), np.float32)
    ACC = {'int64': numba.int64, 'float64': numba.float64}[sys.argv[3]]
    OUT = (jax.ShapeDtypeStruct((3,), np.float32),)

    def scale_kg(outs):
        s = np.array(S, np.float32)

        @numba.njit
        def scale(x, out):
            out[...] = x * s

        return scale

    @numba.njit
    def shift(x, out):
        out[...] = x + G

    @numba.njit
    def plus_one(x, out):
        out[...] = x + 1

    x = np.ones(3, np.float32)
    got = [float(nb.numba_kernel_generator(kg)(outs=OUT)(x)[0][0])
           for kg in (scale_kg, lambda outs: shift, lambda outs: plus_one)]
    hits = [t.handler.cache_hits for t in nb._REGISTRY._targets.values() if t.kernel is plus_one]
    print('captured', got[0], got[1], got[2], hits[0])

    def helper_kg(outs):
        from ej_helpermod import helper

        @numba.njit
        def calls_helper(x, out):
            out[...] = helper(x)

        return calls_helper

    def cell_kg(outs):
        import ej_cfgmod as m

        @numba.njit
        def reads_cell(x, out):
            out[...] = x * m.K

        return reads_cell

    def total(x, out):
        acc = 0
        for v in x:
            acc += v
        out[...] = acc

    total = numba.njit(locals={'acc': ACC})(total)

    x = np.full(2, 0.5, np.float32)
    out = (jax.ShapeDtypeStruct((2,), np.float32),)
    got = [float(nb.numba_kernel_generator(kg)(outs=out)(x)[0][0])
           for kg in (helper_kg, cell_kg, lambda outs: total)]
    print('edited', *got)
""")


@pytest.fixture(scope='module')
def two_runs(tmp_path_factory):
    """The printed lines of the two runs, by their first word: ``[{'captured': [...], 'edited': [...]}, ...]``."""
    tmp_path = tmp_path_factory.mktemp('two_runs')
    env = dict(
        os.environ,
        NUMBA_CACHE_DIR=str(tmp_path / 'cache'),
        PYTHONPATH=os.pathsep.join([str(tmp_path), *sys.path]),
        PYTHONDONTWRITEBYTECODE='1',  # the edited modules have the same size: no stale .pyc
    )
    script = tmp_path / 'script.py'
    script.write_text(_SCRIPT)
    runs = []
    for s, g, add, k, acc in (('2.0', '10.0', '1.0', '3.0', 'int64'), ('5.0', '40.0', '100.0', '5.0', 'float64')):
        helper = f'import numba\n\n@numba.vectorize\ndef helper(x):\n    return x + {add}\n'
        (tmp_path / 'ej_helpermod.py').write_text(helper)
        (tmp_path / 'ej_cfgmod.py').write_text(f'K = {k}\n')
        r = subprocess.run([sys.executable, str(script), s, g, acc], env=env, capture_output=True, text=True,
                           timeout=300)
        assert r.returncode == 0, r.stderr[-2000:]
        runs.append({line.split()[0]: line.split()[1:] for line in r.stdout.splitlines()
                     if line.split()[:1] in (['captured'], ['edited'])})
    return runs


class TestAcrossProcesses:
    def test_a_new_process_with_other_captured_values_compiles_its_own_handler(self, two_runs):
        first, second = (run['captured'] for run in two_runs)
        assert first == ['2.0', '11.0', '2.0', '0']
        assert second == ['5.0', '41.0', '2.0', '1']


class TestEditsAcrossProcesses:
    def test_edited_helpers_module_attributes_and_locals_are_compiled_afresh(self, two_runs):
        first, second = (run['edited'] for run in two_runs)
        assert first == ['1.5', '1.5', '0.0']
        assert second == ['100.5', '2.5', '1.0']


# Each value a factory's kernel closes over, in its own process first, then all
# of them in one process, where every handler comes from the disk cache.
_FACTORY = textwrap.dedent("""
    import sys
    import jax, numba, numpy as np
    from eventjax.backends.numba import bridge as nb

    OUT = (jax.ShapeDtypeStruct((3,), np.float32),)

    def scale_kg(s):
        def kg(outs):
            @numba.njit
            def scale(x, out):
                out[...] = x * s
            return scale
        return kg

    x = np.ones(3, np.float32)
    print(*[float(nb.numba_kernel_generator(scale_kg(float(s)))(outs=OUT)(x)[0][0]) for s in sys.argv[1:]])
""")


@pytest.mark.long  # four fresh processes; the cached-handler test below keeps a cross-process check in the default run
def test_kernels_of_one_factory_compiled_in_separate_processes_keep_their_own_code_when_loaded_together(tmp_path):
    # numba names compiled code after the function and a per-process counter: once a first process has cached
    # the shared helpers, the next two compile the same sequence and name their kernels alike; without a name
    # of its own per handler the last process then ran the first kernel for both values.
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / 'cache'), PYTHONPATH=os.pathsep.join(sys.path))
    script = tmp_path / 'factory.py'
    script.write_text(_FACTORY)
    outputs = []
    for args in (['9.0'], ['2.0'], ['5.0'], ['2.0', '5.0']):
        r = subprocess.run([sys.executable, str(script), *args], env=env, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr[-2000:]
        outputs.append(r.stdout.split()[-len(args):])
    assert outputs == [['9.0'], ['2.0'], ['5.0'], ['2.0', '5.0']]


class TestDiskNames:
    def test_the_handler_file_name_depends_on_the_captured_values(self, tmp_path, monkeypatch):
        monkeypatch.setattr(numba.config, 'CACHE_DIR', str(tmp_path))
        source = 'def handler(frame_p):\n    return frame_p\n'
        for s in (2.0, 3.0):
            fingerprint = numba_keying.kernel_fingerprint(scale_kg(np.array(s))(OUT))
            numba_codegen._cached_module(fingerprint, source)
        assert len(list((tmp_path / 'numba_handlers').glob('*.py'))) == 2


# A handler from the disk cache is loaded as machine code: numba's compiler registries (its numpy
# implementations among them) stay unloaded, and what the code needs at run time is bound first —
# numba's allocator for arrays the kernel makes, the Python C API for a kernel that raises, numba's
# thread pool for a parallel one.
_LOADED = textwrap.dedent("""
    import sys
    import jax, numba, numpy as np
    from eventjax.backends.numba import bridge as nb

    @numba.njit
    def allocates(x, out):
        tmp = np.zeros(x.shape[0], np.float32)
        tmp[:] = x * 2
        out[...] = tmp

    @numba.njit
    def raises(x, out):
        if x[0] > 0:
            raise ValueError('positive first entry')
        out[...] = x

    @numba.njit(parallel=True)
    def threaded(x, out):
        for i in numba.prange(x.shape[0]):
            out[i] = x[i] + 3

    OUT = (jax.ShapeDtypeStruct((3,), np.float32),)
    x = np.ones(3, np.float32)
    got = [float(nb.numba_kernel_generator(lambda outs: allocates)(outs=OUT)(x)[0][0])]
    try:
        nb.numba_kernel_generator(lambda outs: raises)(outs=OUT)(x)[0].block_until_ready()
    except Exception as e:
        got.append('positive first entry' in str(e))
    print('serial', *got, 'numba.np.arraymath' in sys.modules)
    got.append(float(nb.numba_kernel_generator(lambda outs: threaded)(outs=OUT)(x)[0][0]))
    print('all', *got, sum(t.handler.cache_hits for t in nb._REGISTRY._targets.values()))
""")


def test_a_cached_handler_loads_without_numbas_compiler_and_runs_allocating_raising_and_threaded_kernels(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / 'cache'), PYTHONPATH=os.pathsep.join(sys.path))
    script = tmp_path / 'loaded.py'
    script.write_text(_LOADED)
    runs = []
    for _ in range(2):
        r = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr[-2000:]
        runs.append({line.split()[0]: line.split()[1:] for line in r.stdout.splitlines()})
    assert runs[0] == {'serial': ['2.0', 'True', 'True'], 'all': ['2.0', 'True', '4.0', '0']}
    assert runs[1] == {'serial': ['2.0', 'True', 'False'], 'all': ['2.0', 'True', '4.0', '3']}
