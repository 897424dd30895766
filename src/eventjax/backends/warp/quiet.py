"""Initialise warp without its CUDA-driver warning on machines that have no driver.

``warp.init()`` always tries to load ``libcuda``; without it, warp's C
library writes "Warp CUDA warning: Could not find or load the NVIDIA CUDA
driver" straight to file descriptor 2 (``warp.config.quiet`` and the log
level do not reach it). A CPU-only user never asked for CUDA, and eventjax's
availability report already says in words that warp has no GPU here. So
:func:`init_warp` runs ``warp.init()`` with descriptor 2 sent to a temporary
file and writes back everything but that one line: other output, from warp
or from another thread in that window, is delayed, never lost.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import threading

NO_DRIVER_LINE = b'Could not find or load the NVIDIA CUDA driver'

_lock = threading.Lock()


@contextlib.contextmanager
def _stderr_without(fragment: bytes):
    """Capture file descriptor 2 for the block; replay every line not containing ``fragment``."""
    with contextlib.suppress(Exception):
        sys.stderr.flush()
    try:
        saved = os.dup(2)
    except OSError:  # no descriptor 2 (some embedded interpreters): nothing to filter
        yield
        return
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            sink.seek(0)
            kept = b''.join(line for line in sink.read().splitlines(keepends=True) if fragment not in line)
            if kept:
                os.write(2, kept)


def init_warp(wp, *, verbose: bool = False) -> None:
    """Run ``wp.init()`` once, dropping the no-CUDA-driver line unless ``verbose``.

    Example:
        >>> from eventjax.backends.warp.bridge import import_warp
        >>> init_warp(import_warp())  # already done by import_warp; a second call is a no-op
    """
    with _lock:
        if verbose:
            wp.init()
            return
        with _stderr_without(NO_DRIVER_LINE):
            wp.init()
