"""``set_numba_parallel`` / ``get_numba_parallel``: the on/off view of the numba thread count.

eventjax has one setting for numba's ``prange`` kernels, the thread count
(:func:`~eventjax.config.set_numba_num_threads`). Serial is one thread;
parallel is any other count, or numba's default. These two functions speak
in those terms, for code written against brainevent's ``config``.
"""

from __future__ import annotations

from eventjax.config.runtime import get_numba_num_threads, set_numba_num_threads

__all__ = ['get_numba_parallel', 'set_numba_parallel']


def set_numba_parallel(parallel: bool = True, num_threads: int | None = None) -> None:
    """Run numba ``prange`` kernels on several threads (``num_threads``, None: numba's default) or on one.

    Example:
        >>> import eventjax as ej
        >>> ej.config.set_numba_parallel(False)
        >>> ej.config.get_numba_parallel(), ej.config.get_numba_num_threads()
        (False, 1)
        >>> ej.config.set_numba_parallel(True)
        >>> ej.config.get_numba_num_threads() is None
        True
    """
    if not isinstance(parallel, bool):
        raise TypeError(f'set_numba_parallel(): parallel must be a bool, got {parallel!r}.')
    if not parallel and num_threads not in (None, 1):
        raise ValueError(f'set_numba_parallel(False, num_threads={num_threads!r}): serial means one thread; '
                         'pass parallel=True to use several, or leave num_threads out.')
    set_numba_num_threads(num_threads if parallel else 1)


def get_numba_parallel() -> bool:
    """Whether numba ``prange`` kernels may use more than one thread.

    Example:
        >>> import eventjax as ej
        >>> isinstance(ej.config.get_numba_parallel(), bool)
        True
    """
    return get_numba_num_threads() != 1
