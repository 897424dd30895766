"""``brainevent.config`` on eventjax: the backend, numba thread and LFSR settings.

The backend and thread settings are eventjax's own (see
:mod:`eventjax.config`). ``set_lfsr_algorithm`` records brainevent's choice of
random generator for generated connectivity and ``get_lfsr_algorithm``
returns it, but **it changes no connection**: eventjax's generated matrices
come from one counter-based generator that every backend evaluates alike, so
a seed gives eventjax's matrix whatever algorithm is named, never brainevent's
LFSR stream.
"""

from __future__ import annotations

import threading

import eventjax as ej

__all__ = ['clear_backends', 'get_backend', 'get_lfsr_algorithm', 'get_numba_num_threads', 'get_numba_parallel',
           'set_backend', 'set_lfsr_algorithm', 'set_numba_parallel']

set_backend, get_backend, clear_backends = ej.config.set_backend, ej.config.get_backend, ej.config.clear_backends
set_numba_parallel, get_numba_parallel = ej.backends.numba.set_parallel, ej.backends.numba.get_parallel
get_numba_num_threads = ej.backends.numba.requested_num_threads

_LFSR = ('lfsr88', 'lfsr113', 'lfsr128')


class _Recorded:
    """One recorded name, replaced under a lock."""

    def __init__(self, value: str):
        self._lock, self._value = threading.Lock(), value

    def get(self) -> str:
        return self._value

    def set(self, value: str) -> None:
        with self._lock:
            self._value = value


_lfsr = _Recorded('lfsr88')


def set_lfsr_algorithm(algorithm: str) -> None:
    """Record brainevent's LFSR choice (``'lfsr88'``, ``'lfsr113'``, ``'lfsr128'``); no connection changes.

    Example:
        >>> set_lfsr_algorithm('lfsr113'); get_lfsr_algorithm()
        'lfsr113'
        >>> set_lfsr_algorithm('lfsr88')
    """
    if algorithm not in _LFSR:
        raise ValueError(f'set_lfsr_algorithm(): invalid LFSR algorithm {algorithm!r}; valid options are {_LFSR}. '
                         "eventjax's generated matrices do not depend on it.")
    _lfsr.set(algorithm)


def get_lfsr_algorithm() -> str:
    """The LFSR name last given to :func:`set_lfsr_algorithm` (``'lfsr88'`` at first)."""
    return _lfsr.get()


_NOT_SERVED = {
    'prefer_system_nvcc': 'eventjax builds CUDA sources with the nvcc it finds on PATH (eventjax.load_cuda_inline)',
    'set_compute_capability': 'eventjax compiles CUDA sources for the GPU it runs on',
    'get_compute_capability': 'jax.devices()[0].compute_capability on a GPU',
}


def __getattr__(name: str):
    if name in _NOT_SERVED:
        raise AttributeError(f'brainevent.config.{name} has no eventjax counterpart; use {_NOT_SERVED[name]}.')
    raise AttributeError(f'brainevent.config.{name} has no eventjax counterpart (eventjax.compat.brainevent); '
                         'eventjax.config holds the settings eventjax has.')
