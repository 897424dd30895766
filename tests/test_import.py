"""``import eventjax`` stays light: optional compilers and packages load when first needed."""

import json
import subprocess
import sys
import textwrap

import pytest

# Imported by a kernel's first lowering, a container's SciPy conversion, the comparison benchmarks or the
# serving extras, never by ``import eventjax`` or the configuration calls.
HEAVY = ('numba', 'llvmlite', 'warp', 'scipy', 'brainevent', 'brainstate', 'matplotlib', 'numba_cuda',
         'saiunit', 'brainunit', 'fastapi', 'uvicorn', 'aiohttp',
         # eventjax's own operators, containers and serving load at first use too
         'eventjax.containers', 'eventjax.kernels', 'eventjax.kernels.csr', 'eventjax.serving')

_CHILD = textwrap.dedent('''
    import json, subprocess, sys
    runs = []
    def record(*args, **kwargs):
        runs.append(repr(args[0] if args else kwargs.get('args')))
        raise AssertionError('no process may start while eventjax is imported or configured')
    subprocess.Popen = subprocess.run = record
    import eventjax as ej
    ej.__version__
    ej.set_backend('cpu', 'numba')
    ej.get_backend('cpu')
    ej.config.snapshot()
    with ej.config.override(cpu='jax'):
        pass
    ej.clear_backends()
    print(json.dumps({'loaded': sorted(m for m in json.loads(sys.argv[1]) if m in sys.modules), 'runs': runs}))
''')


class TestLightImport:
    def test_import_and_configuration_load_no_compiler_or_optional_package_and_start_no_process(self):
        proc = subprocess.run([sys.executable, '-c', _CHILD, json.dumps(HEAVY)], capture_output=True, text=True,
                              timeout=120, check=True)
        got = json.loads(proc.stdout.strip().splitlines()[-1])
        assert got == {'loaded': [], 'runs': []}


def _fresh(code: str) -> dict:
    """What ``code`` prints as its last line (JSON), run in a fresh interpreter."""
    proc = subprocess.run([sys.executable, '-c', textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=120, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


class TestLazyNames:
    def test_every_name_in_all_resolves_in_a_fresh_process_and_is_listed_by_dir(self):
        got = _fresh('''
            import json, eventjax as ej
            print(json.dumps({'missing': [n for n in ej.__all__ if getattr(ej, n, None) is None],
                              'undir': sorted(set(ej.__all__) - set(dir(ej)))}))
        ''')
        assert got == {'missing': [], 'undir': []}

    def test_a_lazy_name_is_the_object_its_module_defines(self):
        import eventjax as ej
        from eventjax.containers import CSR
        from eventjax.kernels.csr import csrmv

        assert ej.CSR is CSR and ej.csrmv is csrmv

    def test_the_registry_lists_the_standard_operators_before_any_is_touched(self):
        got = _fresh('''
            import json, eventjax as ej
            print(json.dumps(sorted(n for n in ej.get_registry() if n in ('binary_csrmv', 'binary_densemv', 'jitcmv'))))
        ''')
        assert got == ['binary_csrmv', 'binary_densemv', 'jitcmv']

    def test_an_unknown_name_raises_attribute_error(self):
        import eventjax as ej

        with pytest.raises(AttributeError, match="no attribute 'not_a_name'"):
            ej.not_a_name  # noqa: B018

    def test_a_brainevent_spelling_warns_and_gives_the_new_object(self):
        import eventjax as ej

        with pytest.warns(DeprecationWarning, match='eventjax.EventArray'):
            assert ej.BinaryArray is ej.EventArray

    def test_a_brainevent_function_without_an_eventjax_twin_warns_with_eventjaxs_way_to_write_it(self):
        import eventjax as ej
        from eventjax.compat import legacy

        with pytest.warns(DeprecationWarning, match=r'use eventjax\.JITCMatrix\(weight'):
            assert ej.jitsmv_dt2t is legacy.jitsmv_dt2t
        with pytest.warns(DeprecationWarning, match=r'use eventjax\.fcn_on_pre'):
            assert ej.update_fixed_pre_conn_on_binary_post is legacy.update_fixed_pre_conn_on_binary_post

    def test_no_brainevent_spelling_is_among_the_top_level_names(self):
        import eventjax as ej
        from eventjax.compat import spellings

        old = {*spellings.RENAMED, *spellings.REPLACED}
        assert not old & set(ej.__all__)
        assert set(spellings.RENAMED.values()) <= set(ej.__all__)


class TestFirstUseFromThreads:
    def test_threads_making_a_fresh_process_first_lookups_at_once_all_get_their_objects(self):
        from stress.first_use import fresh_processes

        # Each import slowed so the threads cross inside them: before the package-level
        # loading lock, most such processes failed with a _DeadlockError or a half-imported module.
        assert fresh_processes(3, slow=True, timeout=240) == []
