"""``import eventjax`` stays light: optional compilers and packages load when first needed."""

import json
import subprocess
import sys
import textwrap

# Imported by a kernel's first lowering, a container's SciPy conversion, the comparison benchmarks or the
# serving extras, never by ``import eventjax`` or the configuration calls.
HEAVY = ('numba', 'llvmlite', 'warp', 'scipy', 'brainevent', 'brainstate', 'matplotlib', 'numba_cuda',
         'saiunit', 'brainunit', 'fastapi', 'uvicorn', 'aiohttp')

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
