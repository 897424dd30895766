"""warp is initialised without its no-CUDA-driver line, and nothing else written meanwhile is lost."""

import os
import subprocess
import sys

from eventjax.backends.warp import quiet as warp_quiet


def test_the_no_driver_line_is_dropped_and_other_lines_are_replayed(capfd):
    with warp_quiet._stderr_without(warp_quiet.NO_DRIVER_LINE):
        os.write(2, b'before\nWarp CUDA warning: Could not find or load the NVIDIA CUDA driver. GPU execution '
                    b'will not be available.\nafter\n')
    assert capfd.readouterr().err == 'before\nafter\n'


def test_importing_warp_through_eventjax_prints_nothing_on_stderr():
    code = 'from eventjax.backends.warp.bridge import import_warp; import_warp().init()'
    proc = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert 'Could not find or load the NVIDIA CUDA driver' not in proc.stderr


def test_verbose_mode_leaves_warps_output_alone(monkeypatch):
    calls = []

    class FakeWarp:
        @staticmethod
        def init():
            os.write(2, b'Warp CUDA warning: Could not find or load the NVIDIA CUDA driver.\n')
            calls.append('init')

    r, w = os.pipe()
    saved = os.dup(2)
    try:
        os.dup2(w, 2)
        warp_quiet.init_warp(FakeWarp, verbose=True)
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(w)
    with os.fdopen(r, 'rb') as pipe:
        assert b'NVIDIA CUDA driver' in pipe.read()
    assert calls == ['init']
