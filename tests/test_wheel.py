"""The wheel holds what users run: no benchmark, no brainevent timing, no developer tooling."""

import pathlib
import shutil
import subprocess
import sys
import zipfile

import pytest

ROOT = pathlib.Path(__file__).parent.parent
# What only the benchmarks use: finding one of these in the wheel means timing code shipped.
TIMING_WORDS = ('interleaved_us', 'brainevent_elsewhere', 'brainevent_python', 'measure_machine', 'format_table')


@pytest.fixture(scope='module')
def wheel_names(tmp_path_factory):
    # Built from a copy, so the checkout gets no build/ folder and parallel runs share nothing.
    tree = tmp_path_factory.mktemp('tree')
    for name in ('pyproject.toml', 'README.md', 'LICENSE', 'MANIFEST.in', 'CHANGELOG.md', 'Makefile'):
        shutil.copy(ROOT / name, tree / name)
    junk = shutil.ignore_patterns('__pycache__', '*.egg-info', '*.so', '*.o')
    for folder in ('src', 'benchmarks'):
        shutil.copytree(ROOT / folder, tree / folder, ignore=junk)
    out = tmp_path_factory.mktemp('wheel')
    proc = subprocess.run([sys.executable, '-m', 'pip', 'wheel', '.', '--no-deps', '--no-build-isolation', '-q',
                           '-w', str(out)], cwd=tree, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    (wheel,) = out.glob('eventjax-*.whl')
    with zipfile.ZipFile(wheel) as zf:
        return {name: zf.read(name) for name in zf.namelist()}


def test_the_wheel_holds_the_package(wheel_names):
    assert 'eventjax/__init__.py' in wheel_names and 'eventjax/cli.py' in wheel_names


def test_the_wheel_has_no_benchmark_module(wheel_names):
    assert [n for n in wheel_names if 'bench' in n.lower()] == []


def test_no_module_in_the_wheel_holds_timing_code(wheel_names):
    found = [(name, word) for name, data in wheel_names.items() if name.endswith('.py')
             for word in TIMING_WORDS if word.encode() in data]
    assert found == []
