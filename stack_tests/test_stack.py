"""brainpy 2.9 and brainstate 0.6 on eventjax, each compared with brainevent 0.3.0 (make test-compat).

Each model runs in its own process (``--on eventjax`` installs
``eventjax.compat.brainevent`` first; ``--on brainevent`` runs the real
one) and the two results must agree: the same spike rasters, the same
training losses within 1e-6. brainstate's and brainpy's own test files of
their event layers run on eventjax too.
"""

import pathlib
import shutil
import subprocess
import sys

import numpy as np
import pytest

HERE = pathlib.Path(__file__).resolve().parent
TIMEOUT = 600


def _run(model: str, on: str, tmp_path, steps: int):
    out = tmp_path / f'{model}-{on}.npz'
    subprocess.run([sys.executable, str(HERE / 'models.py'), model, '--on', on, '--steps', str(steps),
                    '--out', str(out)], check=True, timeout=TIMEOUT)
    data = np.load(out)
    return data['result'], float(data['seconds'])


@pytest.mark.parametrize('model', ['ei', 'coba'])
def test_the_network_gives_brainevents_raster(model, tmp_path):
    ours, _ = _run(model, 'eventjax', tmp_path, 2000)
    theirs, _ = _run(model, 'brainevent', tmp_path, 2000)
    assert ours.shape == theirs.shape == (2000, 4000)
    assert ours.sum() > 1000  # the network is active, so equality says something
    assert np.array_equal(ours, theirs)


def test_the_training_step_gives_brainevents_losses(tmp_path):
    ours, _ = _run('train', 'eventjax', tmp_path, 5)
    theirs, _ = _run('train', 'brainevent', tmp_path, 5)
    assert len(set(np.round(ours, 3))) > 1  # the loss moves
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-6)


def _site_file(package: str, relative: str) -> pathlib.Path:
    import importlib.util

    return pathlib.Path(importlib.util.find_spec(package).origin).parent / relative


# The event-layer test files of brainstate and brainpy; their brainevent names are all public.
UPSTREAM = [
    ('brainstate', 'nn/_event_linear_test.py'),
    ('brainstate', 'nn/_event_fixedprob_test.py'),
    ('brainpy', 'math/event/csr_matmat_test.py'),
    ('brainpy', 'math/sparse/csr_mm_test.py'),
    ('brainpy', 'math/sparse/coo_mv_test.py'),
    ('brainpy', 'math/sparse/utils_test.py'),
    ('brainpy', 'math/math_sparse_surrogate_fixes_test.py'),
]


def test_brainstates_and_brainpys_event_layer_tests_pass_on_eventjax(tmp_path):
    for package, relative in UPSTREAM:
        shutil.copy(_site_file(package, relative), tmp_path / f'{package}_{relative.replace("/", "_")}')
    (tmp_path / 'conftest.py').write_text('import eventjax.compat.brainevent as compat\n'
                                          'compat.install(replace_installed=True)\n')
    (tmp_path / 'pytest.ini').write_text('[pytest]\naddopts = -p no:cacheprovider\n')
    done = subprocess.run([sys.executable, '-m', 'pytest', '-q', str(tmp_path)], cwd=tmp_path, capture_output=True,
                          text=True, timeout=TIMEOUT)
    summary = done.stdout.strip().splitlines()[-1]
    print(summary)
    assert done.returncode == 0, done.stdout[-4000:]
    assert ' passed' in summary and 'failed' not in summary
