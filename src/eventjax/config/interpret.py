"""Whether pallas kernels also run on the cpu, interpreted: a field of the configuration snapshot."""

from __future__ import annotations

import attrs

from eventjax.config.runtime import _STATE, snapshot, update

__all__ = ['get_pallas_cpu_interpret', 'set_pallas_cpu_interpret']


def set_pallas_cpu_interpret(enabled: bool) -> None:
    """Choose whether pallas kernels registered from now on also run on the cpu, interpreted.

    Interpret mode is slow and meant for tests on machines without a GPU, so
    it is off unless the environment variable ``EVENTJAX_PALLAS_INTERPRET``
    is ``1``/``true``/``yes``/``on`` at import or this is called. It applies to
    the kernels you register; the standard operators' pallas kernels run on
    the cpu only when the environment variable was on at import, whenever
    their family is first loaded.

    Example:
        >>> import eventjax as ej
        >>> ej.config.set_pallas_cpu_interpret(True)
    """
    if not isinstance(enabled, bool):
        raise TypeError(f'set_pallas_cpu_interpret(): enabled must be a bool, got {enabled!r}.')
    update(lambda s: s if s.pallas_cpu_interpret == enabled else attrs.evolve(s, pallas_cpu_interpret=enabled))


def get_pallas_cpu_interpret() -> bool:
    """Whether pallas kernels are registered for the cpu in interpret mode."""
    return snapshot().pallas_cpu_interpret


def pallas_cpu_interpret_at_start() -> bool:
    """``EVENTJAX_PALLAS_INTERPRET`` as the process started: what the standard operators register by."""
    return _STATE.pallas_cpu_interpret_at_start
