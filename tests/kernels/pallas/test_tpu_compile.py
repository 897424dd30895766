"""Every operator's TPU lowering compiles for a TPU v5e through libtpu, with no TPU (``make test-tpu``).

Marked ``tpu_compile``: the default run leaves it out (it needs libtpu, the
``tpu-compile`` extra, which ``make test-tpu`` installs beside the venv so
that no other process loads it). ``EVENTJAX_LIBTPU_DIR`` names that folder;
where libtpu is importable anyway, it is used. Without either, the test
fails, saying how to get libtpu. ``EVENTJAX_TPU_SWEEP=full`` compiles the
full sweep of sizes (a few times longer).
"""

import importlib.util
import os
import pathlib
import subprocess
import sys

import pytest

from tests.kernels.pallas.tpu_compile import ENV

ROOT = pathlib.Path(__file__).resolve().parents[3]
pytestmark = pytest.mark.tpu_compile
TIMEOUT = 1800


def _environment() -> dict:
    env = {**os.environ, **ENV}
    folder = os.environ.get('EVENTJAX_LIBTPU_DIR')
    if folder:
        env['PYTHONPATH'] = os.pathsep.join(p for p in (folder, env.get('PYTHONPATH')) if p)
    elif importlib.util.find_spec('libtpu') is None:
        pytest.fail('libtpu is not installed: run make test-tpu, or pip install eventjax[tpu-compile] '
                    '(or set EVENTJAX_LIBTPU_DIR to a folder that holds it).')
    return env


def _run(module, *args):
    """``python -m module args`` in the libtpu environment: the finished process and its report (libtpu's
    log lines left out), which is printed."""
    command = [sys.executable, '-m', module, *args]
    done = subprocess.run(command, cwd=ROOT, env=_environment(), capture_output=True, text=True, timeout=TIMEOUT)
    report = '\n'.join(line for line in (done.stdout + done.stderr).splitlines()
                       if not line.startswith(('W0000', 'I0000', 'E0000', 'WARNING: Logging')))
    print(report)
    return done, report


def test_every_tpu_lowering_compiles_for_v5e():
    """The sweep compiles every swept operator's default and pallas tpu kernels; Mosaic refuses none."""
    full = os.environ.get('EVENTJAX_TPU_SWEEP') == 'full'
    done, report = _run('tests.kernels.pallas.tpu_compile', *(['--full'] if full else []))
    assert done.returncode == 0, report
    assert 'pallas tpu kernel: yes' in done.stdout and ' 0 failed.' in done.stdout


def test_the_scatter_keeps_its_scalars_in_smem_at_100000_rows():
    """libtpu spills none of the CSR and FCN ``s @ W`` kernels' scalars to HBM at 100,000 rows (a DMA waited
    for at each spill and fill: a CSR product spilling so took 6x the FCN one's time on the chip)."""
    done, report = _run('tests.kernels.pallas.tpu_spills')
    assert done.returncode == 0 and 'no spills to HBM' in done.stdout, report
