"""The one list of backend bridges; everything else about backends derives from it.

``XLACustomKernel``'s ``def_<name>_kernel`` methods, the availability report
and the names ``set_backend`` accepts without warning all come from
:data:`BRIDGES`. Adding a backend is one bridge module (declaring a
:class:`~eventjax.backends.bridge.Bridge`) plus one line here; see README.md.
"""

from __future__ import annotations

import difflib
import functools

from eventjax.backends import jax as jax_backend
from eventjax.backends import native, numba, numba_cuda, pallas, warp
from eventjax.backends.bridge import Bridge
from eventjax.config import register_backend_catalog

__all__ = ['BRIDGES', 'JAX_BACKEND', 'backend_aliases', 'backend_names', 'get_bridge']

BRIDGES: tuple[Bridge, ...] = (
    jax_backend.BRIDGE,
    numba.BRIDGE,
    warp.BRIDGE,
    pallas.BRIDGE,
    native.CPP_BRIDGE,
    native.CUDA_BRIDGE,
    numba_cuda.BRIDGE,
)

# The backend whose kernels are JAX itself, on every platform: each family's jax_impl (or reference).
JAX_BACKEND: str = jax_backend.BRIDGE.name


def backend_names() -> tuple[str, ...]:
    """The name of every bridge, in list order.

    Example:
        >>> backend_names()[:2]
        ('jax', 'numba')
    """
    return tuple(b.name for b in BRIDGES)


def backend_aliases() -> dict[str, str]:
    """Every other name a bridge answers to, mapped to the bridge's name.

    Example:
        >>> backend_aliases()['jax_raw']
        'jax'
    """
    return {alias: b.name for b in BRIDGES for alias in b.aliases}


def get_bridge(name: str) -> Bridge:
    """The bridge called ``name``; a ValueError naming the known ones otherwise.

    Example:
        >>> get_bridge('warp').platforms
        ('cpu', 'gpu')
    """
    for b in BRIDGES:
        if b.name == name:
            return b
    raise ValueError(f'Unknown backend {name!r}; expected one of {backend_names()}.')


@functools.cache
def _served(platform: str) -> tuple[str, ...]:
    return tuple(b.name for b in BRIDGES if platform in b.platforms)


def _explain(platform: str, backend: str) -> str:
    if backend in backend_names():
        status = get_bridge(backend).status(platform)
        why = status.reason or f'{backend!r} kernels are not registered for {platform!r} by default.'
        return f'{why} {status.fix}'.strip()
    close = difflib.get_close_matches(backend, backend_names(), n=1)
    return f'Did you mean {close[0]!r}?' if close else ''


register_backend_catalog(_served, _explain, aliases=backend_aliases())
