"""``brainevent.config`` on eventjax: the backend, numba thread, LFSR and CUDA toolchain settings.

The backend and thread settings are eventjax's own (see
:mod:`eventjax.config`). ``set_lfsr_algorithm`` records brainevent's choice of
random generator for generated connectivity and ``get_lfsr_algorithm``
returns it, but **it changes no connection**: eventjax's generated matrices
come from one counter-based generator that every backend evaluates alike, so
a seed gives eventjax's matrix whatever algorithm is named, never brainevent's
LFSR stream.

The CUDA toolchain settings check brainevent's values and change
no eventjax build: ``set_compute_capability`` takes brainevent's spellings
(``"8.6"``, ``"sm_86"``, ``"compute_86"``, a list, ``None`` for automatic) and
``get_compute_capability`` returns them as ``sm_XX``, while eventjax builds
CUDA sources for the architecture ``EVENTJAX_CUDA_ARCH`` names, else for the
GPU it runs on. ``prefer_system_nvcc()`` is what eventjax always does (``$NVCC``,
else nvcc on the PATH, then ``$CUDA_HOME``); to build with the nvcc of a
pip-installed CUDA, point ``NVCC`` at it.
"""

from __future__ import annotations

import re
import threading

import eventjax as ej
from eventjax.compat.brainevent._errors import UnsupportedArchError

__all__ = ['clear_backends', 'get_backend', 'get_compute_capability', 'get_lfsr_algorithm', 'get_numba_num_threads',
           'get_numba_parallel', 'prefer_system_nvcc', 'set_backend', 'set_compute_capability', 'set_lfsr_algorithm',
           'set_numba_parallel']

set_backend, get_backend, clear_backends = ej.config.set_backend, ej.config.get_backend, ej.config.clear_backends
set_numba_parallel, get_numba_parallel = ej.backends.numba.set_parallel, ej.backends.numba.get_parallel
get_numba_num_threads = ej.backends.numba.requested_num_threads

_LFSR = ('lfsr88', 'lfsr113', 'lfsr128')


class _Recorded:
    """One recorded name, replaced under a lock."""

    def __init__(self, value):
        self._lock, self._value = threading.Lock(), value

    def get(self):
        return self._value

    def set(self, value) -> None:
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


_capabilities = _Recorded(None)
_ARCH = re.compile(r'^sm_\d{2,3}[a-z]?$')


def _arch(value) -> str:
    """brainevent's spelling of one compute capability (``8.6``, ``86``, ``sm_86``, ``compute_86``) as ``sm_86``."""
    s = str(value).strip().lower()
    s = s[3:] if s.startswith('sm_') else s[8:] if s.startswith('compute_') else s
    suffix, s = (s[-1], s[:-1]) if s and s[-1].isalpha() else ('', s)
    digits = s.replace('.', '')
    arch = f'sm_{digits}{suffix}'
    if not digits.isdigit() or len(digits) < 2 or not _ARCH.match(arch):
        raise ValueError(f'set_compute_capability(): invalid compute capability {value!r}; write it as "8.6", '
                         '"86", "sm_86" or "compute_86".')
    if int(digits[:-1]) < 2:
        raise UnsupportedArchError(f'set_compute_capability(): unsupported compute capability {value!r} (resolved '
                                   f'to {arch}): no CUDA GPU has compute-capability major < 2.')
    return arch


def set_compute_capability(value: str | list[str] | None = None) -> None:
    """Check and record brainevent's compute-capability pin; eventjax's CUDA builds do not read it.

    ``value`` is one capability or a list (a string may hold several
    separated by commas); ``None`` restores automatic detection. eventjax
    builds for ``EVENTJAX_CUDA_ARCH``, else the GPU it runs on.

    Example:
        >>> set_compute_capability(['8.0', 'sm_90', '8.0']); get_compute_capability()
        ['sm_80', 'sm_90']
        >>> set_compute_capability(None)
    """
    if value is None:
        _capabilities.set(None)
        return
    tokens = [t.strip() for item in ([value] if isinstance(value, str) else list(value))
              for t in str(item).split(',') if t.strip()]
    archs = list(dict.fromkeys(_arch(t) for t in tokens))
    _capabilities.set(archs or None)


def get_compute_capability() -> list[str] | None:
    """The capabilities last given to :func:`set_compute_capability` as ``sm_XX``, or None (automatic)."""
    value = _capabilities.get()
    return None if value is None else list(value)


def prefer_system_nvcc(enable: bool = True) -> None:
    """brainevent's nvcc preference: eventjax always takes ``$NVCC``, else the nvcc on the PATH.

    ``enable=True`` (the system's nvcc first) is what eventjax does, so the
    call changes nothing; with ``False`` (brainevent's default, the nvcc of
    a pip-installed CUDA first) set ``NVCC`` to that nvcc's path instead.
    """
    if not isinstance(enable, bool):
        raise TypeError(f'prefer_system_nvcc(): enable must be True or False, got {enable!r}.')


def __getattr__(name: str):
    raise AttributeError(f'brainevent.config.{name} has no eventjax counterpart (eventjax.compat.brainevent); '
                         'eventjax.config holds the settings eventjax has.')
