"""Which backends can run on which platform here, and why not.

Each bridge answers for its own backend (its ``status`` probe); this module
asks every bridge of :data:`~eventjax.backends.registry.BRIDGES`. Probes
import their optional package lazily and cache what cannot change while a
process runs; the pallas CPU switch is read on every call.
"""

from __future__ import annotations

from eventjax.backends.bridge import BackendStatus
from eventjax.backends.registry import BRIDGES, backend_names, get_bridge
from eventjax.config import PLATFORMS, normalize_platform
from eventjax.errors import BackendUnavailableError

__all__ = ['BACKENDS', 'PLATFORMS', 'BackendStatus', 'BackendUnavailableError', 'backend_status',
           'backends_available', 'require_backend']

BACKENDS = backend_names()


def backend_status(backend: str, platform: str) -> BackendStatus:
    """Report whether ``backend`` can run on ``platform`` in this process.

    Example:
        >>> backend_status('jax', 'cpu').available
        True
    """
    return get_bridge(backend).status(normalize_platform(platform, who='backend_status()'))


def backends_available() -> dict[str, dict[str, BackendStatus]]:
    """Report every backend on every platform: ``result[backend][platform]``.

    Example:
        >>> status = backends_available()
        >>> status['warp']['gpu'].available, status['warp']['gpu'].reason  # doctest: +SKIP
        (False, 'No CUDA GPU visible to warp (...)')
    """
    return {b.name: {p: b.status(p) for p in PLATFORMS} for b in BRIDGES}


def require_backend(backend: str, platform: str) -> None:
    """Raise unless ``backend`` can run on ``platform``, saying why and how to fix it.

    Example:
        >>> require_backend('jax', 'cpu')  # returns None: available

    Raises:
        BackendUnavailableError: the backend cannot run there.
        ValueError: unknown backend or platform name.
    """
    backend_status(backend, platform).require()
