"""The ``jax`` backend: kernels written with jax.numpy and lax, on every platform.

Its generators already return JAX-traceable functions, so the bridge wraps
nothing; the machinery lowers them with ``mlir.lower_fun``.
"""

from __future__ import annotations

from eventjax.backends import bridge
from eventjax.backends.bridge import BackendStatus, Bridge
from eventjax.config import PLATFORMS

__all__ = ['BRIDGE', 'status']


def status(platform: str) -> BackendStatus:
    """The jax backend runs wherever JAX sees the platform.

    Example:
        >>> status('cpu').available
        True
    """
    if platform == 'cpu' or bridge.jax_has_platform(platform):
        return BackendStatus('jax', platform, True)
    return bridge.no_device_status('jax', platform)


BRIDGE = Bridge(
    'jax', PLATFORMS, status,
    aliases=('jax_raw',),  # brainevent's name for its pure-JAX kernels
    contract='``kernel_generator(**static_params, outs=outs)`` returns a JAX-traceable function of the '
             'input arrays that returns one array per entry of ``outs``; it is registered for every '
             'platform unless ``platform`` names one.')
