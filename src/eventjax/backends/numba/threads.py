"""The numba bridge's threads: the thread count of parallel launches, and numba's threading layer.

The thread count is the bridge's own setting, stored in one place: a one-word
cell that compiled handlers read at every parallel launch. A change therefore
reaches every XLA thread on its next call, and no lowering reads it (nothing
is recompiled). :func:`set_num_threads` and the rest are public as
``eventjax.backends.numba.set_num_threads`` & co.

Compiled handlers are cached on disk, so they must not embed this process's
addresses: they call the launch hooks by symbol name, and each process binds
the names to its own cfuncs with llvmlite's ``add_symbol``.

numba is imported lazily, so the setting works (and ``import eventjax`` stays
cheap) where numba is not installed.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading

import numpy as np

__all__ = ['get_num_threads', 'get_parallel', 'requested_num_threads', 'set_num_threads', 'set_parallel',
           'threading_layer']

# The requested count; 0 means numba's default (NUMBA_NUM_THREADS). Compiled
# code reads it, so it is written in place, by set_num_threads only.
_threads_cell = np.zeros(1, np.int64)
# 0 or 1: the spin lock that serialises parallel launches on workqueue.
_launch_cell = np.zeros(1, np.int64)


def set_num_threads(n: int | None) -> None:
    """Set how many threads each ``parallel=True`` numba kernel launch may use.

    It applies from the next call, in every thread XLA calls handlers from;
    nothing is recompiled. Counts above numba's maximum (``NUMBA_NUM_THREADS``,
    fixed at process start) are capped to it.

    Args:
        n: a positive int, or None for numba's default (all of ``NUMBA_NUM_THREADS``).

    Example:
        >>> import eventjax as ej
        >>> ej.backends.numba.set_num_threads(1)
        >>> ej.backends.numba.set_num_threads(None)
    """
    if n is not None and (not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 1):
        raise ValueError(
            f"set_num_threads(): n must be a positive int or None "
            f"(numba's default), got {n!r}; counts must be in [1, NUMBA_NUM_THREADS] to be used in full "
            f'(larger ones are capped).'
        )
    _threads_cell[0] = 0 if n is None else int(n)


def requested_num_threads() -> int | None:
    """The count last given to :func:`set_num_threads`, or None for numba's default.

    Example:
        >>> import eventjax as ej
        >>> ej.backends.numba.requested_num_threads() is None or ej.backends.numba.requested_num_threads() >= 1
        True
    """
    n = int(_threads_cell[0])
    return None if n == 0 else n


def set_parallel(parallel: bool = True, num_threads: int | None = None) -> None:
    """Run numba ``prange`` kernels on several threads (``num_threads``, None: numba's default) or on one.

    Example:
        >>> import eventjax as ej
        >>> ej.backends.numba.set_parallel(False)
        >>> ej.backends.numba.get_parallel(), ej.backends.numba.requested_num_threads()
        (False, 1)
        >>> ej.backends.numba.set_parallel(True)
        >>> ej.backends.numba.requested_num_threads() is None
        True
    """
    if not isinstance(parallel, bool):
        raise TypeError(f'set_parallel(): parallel must be a bool, got {parallel!r}.')
    if not parallel and num_threads not in (None, 1):
        raise ValueError(f'set_parallel(False, num_threads={num_threads!r}): serial means one thread; '
                         'pass parallel=True to use several, or leave num_threads out.')
    set_num_threads(num_threads if parallel else 1)


def get_parallel() -> bool:
    """Whether numba ``prange`` kernels may use more than one thread.

    Example:
        >>> import eventjax as ej
        >>> isinstance(ej.backends.numba.get_parallel(), bool)
        True
    """
    return requested_num_threads() != 1


def get_num_threads() -> int:
    """The thread count parallel kernel launches use: the request, capped at ``NUMBA_NUM_THREADS``.

    Example:
        >>> get_num_threads() >= 1
        True
    """
    import numba

    top = numba.config.NUMBA_NUM_THREADS
    n = int(_threads_cell[0])
    return top if n == 0 else min(n, top)


def _make_launch_hooks(serial: bool) -> tuple:
    """The per-process C functions handlers call around a parallel run."""
    import llvmlite.binding
    import numba
    from numba import types

    from eventjax.backends.numba import intrinsics as numba_intrinsics

    threads_addr, launch_addr = _threads_cell.ctypes.data, _launch_cell.ctypes.data
    top = numba.config.NUMBA_NUM_THREADS

    @numba.cfunc(types.int64())
    def begin():
        if serial:
            while numba_intrinsics.cas_i64(launch_addr, 0, 1) != 0:
                numba_intrinsics.spin_pause()
        n = numba_intrinsics.load_i64(threads_addr)
        n = top if n == 0 else min(n, top)
        # Per calling thread in numba: XLA threads each need it set.
        numba.set_num_threads(n)
        return n

    @numba.cfunc(types.int64())
    def end():
        if serial:
            numba_intrinsics.cas_i64(launch_addr, 1, 0)
        return 0

    llvmlite.binding.add_symbol('eventjax_numba_launch_begin', begin.address)
    llvmlite.binding.add_symbol('eventjax_numba_launch_end', end.address)
    return begin, end


def _preload_tbb() -> None:
    """Load the TBB that pip put in this environment's ``lib``, so numba finds it by name.

    numba opens ``libtbb.so.12`` by name, which the loader looks for on the
    system's paths, not in a virtual environment; a library already loaded is
    found by name. Under load, a TBB launch runs the parallel work on the
    calling thread, where an OpenMP launch waits milliseconds for a
    descheduled thread.
    """
    name = {'win32': 'tbb12.dll', 'darwin': 'libtbb.12.dylib'}.get(sys.platform, 'libtbb.so.12')
    for folder in (os.path.join(sys.prefix, 'lib'), os.path.join(sys.prefix, 'Library', 'bin')):
        path = os.path.join(folder, name)
        if os.path.exists(path):
            try:
                ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
            except OSError:  # a broken TBB: numba falls back to omp
                pass
            return


class _Launcher:
    """Numba's threading layer, launched once, and the launch hooks."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._hooks: tuple | None = None  # kept alive: compiled code calls their addresses

    def layer(self) -> str:
        import numba
        from numba.np.ufunc import parallel

        with self._lock:
            if self._hooks is None:
                if 'NUMBA_THREADING_LAYER' not in os.environ:
                    numba.config.THREADING_LAYER = 'threadsafe'  # tbb first, then omp
                    _preload_tbb()
                try:
                    parallel._launch_threads()
                except ValueError:
                    # Neither omp nor tbb here: fall back, serialise launches.
                    numba.config.THREADING_LAYER = 'default'
                    parallel._launch_threads()
                self._hooks = _make_launch_hooks(numba.threading_layer() == 'workqueue')
            return numba.threading_layer()


_LAUNCHER = _Launcher()


def threading_layer() -> str:
    """Launch numba's threads once, preferring a thread-safe layer.

    Returns:
        The name numba reports: ``'omp'``, ``'tbb'`` or ``'workqueue'``
        (with ``workqueue``, parallel launches are serialised).

    Example:
        >>> threading_layer() in ('omp', 'tbb', 'workqueue')
        True
    """
    return _LAUNCHER.layer()
