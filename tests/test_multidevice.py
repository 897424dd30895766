"""Runs tests/multidevice in a process of its own, with 4 virtual CPU devices."""

import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).parent.parent


def test_sharding_tests_pass_on_four_virtual_devices():
    env = dict(os.environ, XLA_FLAGS='--xla_force_host_platform_device_count=4',
               PYTHONPATH=os.pathsep.join([str(ROOT / 'src'), str(ROOT), os.environ.get('PYTHONPATH', '')]))
    proc = subprocess.run([sys.executable, '-m', 'pytest', '-q', '-p', 'no:cacheprovider', '-p', 'no:xdist',
                           str(ROOT / 'tests' / 'multidevice')], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-3000:]
    assert ' passed' in proc.stdout
