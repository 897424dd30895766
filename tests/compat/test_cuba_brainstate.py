"""docs/examples/cuba_brainstate.py: brainstate's EventFixedProb with units gives cuba.py's spikes on every backend."""

import importlib.util
import pathlib
import subprocess
import sys

import pytest

EXAMPLE = pathlib.Path(__file__).parent.parent.parent / 'docs' / 'examples' / 'cuba_brainstate.py'


def test_the_brainstate_cuba_example_spikes_like_cuba_py_on_every_cpu_backend():
    for name in ('brainstate', 'brainunit'):
        if importlib.util.find_spec(name) is None:
            pytest.skip(f'{name} is not installed (pip install -e ".[brainstate]")')
    # 30 ms: a few hundred spikes through both projections, enough for a difference to show.
    run = subprocess.run([sys.executable, str(EXAMPLE), '--duration', '30'], capture_output=True, text=True,
                         timeout=540)
    assert run.returncode == 0, (run.stdout + run.stderr)[-4000:]
    lines = [line for line in run.stdout.splitlines() if 'us/step' in line]
    assert {line.split()[0] for line in lines} >= {'jax', 'numba'}, run.stdout
    assert all(line.endswith('spikes identical to cuba.py: True') for line in lines), run.stdout
    assert all(float(line.split('rate')[1].split('Hz')[0]) > 0 for line in lines), run.stdout
