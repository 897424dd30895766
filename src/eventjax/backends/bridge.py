"""The interface every backend bridge declares, and what it says about availability.

A bridge is the one home of a backend. It declares a :class:`Bridge`:

- ``wrap(kg, platform)``: turn a user's kernel generator into the generator
  the primitive machinery lowers, ``kg2(**static_params, outs=outs)``
  returning a JAX-traceable ``f(*arrays) -> tuple``;
- ``platforms``: where ``def_<name>_kernel`` registers kernels;
- ``status(platform)``: whether the backend can run there in this process,
  and if not, why and how to fix it (a :class:`BackendStatus`).

The bridges are listed once, in :mod:`eventjax.backends.registry`. Probes
import their optional package lazily, inside the probe.
"""

from __future__ import annotations

import functools
import importlib.util
from collections.abc import Callable
from types import ModuleType
from typing import Any

import attrs

from eventjax.errors import BackendUnavailableError

__all__ = ['JAX_EXTRA', 'BackendStatus', 'Bridge', 'jax_has_platform', 'not_here', 'package_missing',
           'register_by_name']

# The pip extra that brings JAX's plugin for each accelerator platform.
JAX_EXTRA = {'gpu': 'jax[cuda12]', 'tpu': 'jax[tpu]'}


@attrs.frozen
class BackendStatus:
    """Whether one backend can run on one platform, and if not, why and how to fix it.

    Attributes:
        backend: the backend name, e.g. ``'warp'``.
        platform: ``'cpu'``, ``'gpu'`` or ``'tpu'``.
        available: True when kernels of this backend can run here.
        reason: why not (empty when available).
        fix: what the user can do about it (empty when available or nothing helps).

    Example:
        >>> BackendStatus('jax', 'cpu', True).available
        True
    """

    backend: str
    platform: str
    available: bool
    reason: str = ''
    fix: str = ''

    def __bool__(self) -> bool:
        return self.available

    def require(self) -> None:
        """Raise :class:`BackendUnavailableError` with the reason and the fix unless available."""
        if not self.available:
            fix = f' Fix: {self.fix}' if self.fix else ''
            raise BackendUnavailableError(
                f"Backend '{self.backend}' is not available on '{self.platform}': {self.reason}{fix}")


def _same_generator(kg: Callable, platform: str) -> Callable:
    return kg


@attrs.frozen
class Bridge:
    """One backend's declaration: all the rest of eventjax needs to know about it.

    Attributes:
        name: the backend name users pass to ``set_backend`` and ``backend=``.
        platforms: the platforms ``def_<name>_kernel`` registers kernels for.
        status: ``status(platform) -> BackendStatus`` for any platform.
        wrap: ``wrap(kg, platform) -> kg2``; the identity for generators that
            already return JAX-traceable functions.
        default_platform: the platform ``def_<name>_kernel`` registers for when
            none is given; None registers for every platform in ``platforms``.
        platform_first: ``def_<name>_kernel(platform, kg)`` instead of
            ``def_<name>_kernel(kg, platform=...)``.
        companions: ``companions(platform)``: further platforms that get the
            same kernel (never as their default) when ``platform`` does.
        hint: added to the error when a platform outside ``platforms`` is asked for.
        contract: one paragraph for the ``def_<name>_kernel`` docstring: what the
            user's generator returns.
        standard: ``standard(prim, module, name)`` registers this backend's
            kernels of eventjax's own operator ``name`` on ``prim``; the
            generators live in ``module()``, the family's ``<backend>_impl``
            module (import it only at the first lowering where the bridge can).
            None: :func:`register_by_name`, ``<name>_kernel`` through
            ``def_bridge_kernel``.
        prepares_in_kernel: this backend's standard kernels do a declaration's
            ``prepare`` step themselves (e.g. repairing unvalidated structure),
            where an XLA op before their call would cost more than the work;
            the other backends' kernels get the operands prepared in JAX.
        bounds_as_operand: this backend's standard update kernels take the
            bounds as one more operand ``[w_min, w_max]`` rather than reading
            the static parameters, where a kernel compiles what it closes over
            (one compiled kernel then serves every pair of bounds).
        aliases: other names ``set_backend`` and ``backend=`` accept for this
            backend (another library's spelling, so code written for it runs
            unchanged).

    Example:
        >>> toy = Bridge('toy', ('cpu',), status=lambda p: BackendStatus('toy', p, p == 'cpu'))
        >>> toy.status('gpu').available
        False
    """

    name: str
    platforms: tuple[str, ...]
    status: Callable[[str], BackendStatus]
    wrap: Callable[[Callable, str], Callable] = _same_generator
    default_platform: str | None = None
    platform_first: bool = False
    companions: Callable[[str], tuple[str, ...]] = lambda platform: ()
    hint: str = ''
    contract: str = ''
    standard: Callable[[Any, Callable[[], ModuleType], str], None] | None = None
    prepares_in_kernel: bool = False
    bounds_as_operand: bool = False
    aliases: tuple[str, ...] = ()

    def register_standard(self, prim, module: Callable[[], ModuleType], name: str) -> None:
        """Register this backend's kernels of the standard operator ``name`` on ``prim`` (see ``standard``)."""
        (self.standard or functools.partial(register_by_name, self.name))(prim, module, name)


def register_by_name(backend: str, prim, module: Callable[[], ModuleType], name: str) -> None:
    """The default standard-operator adapter: ``module().<name>_kernel`` is the generator of ``backend``."""
    prim.def_bridge_kernel(backend, lambda **params: getattr(module(), f'{name}_kernel')(**params))


@functools.cache
def jax_has_platform(platform: str) -> bool:
    """Whether JAX sees a device of ``platform`` (cached: devices do not come and go)."""
    import jax  # noqa: PLC0415

    try:
        return len(jax.devices(platform)) > 0
    except RuntimeError:
        return False


@functools.cache
def package_missing(module: str) -> bool:
    """Whether the top-level package ``module`` is not installed (looked up, not imported)."""
    return importlib.util.find_spec(module) is None


def not_here(backend: str, platform: str, runs_on: str, elsewhere: tuple[str, str], package: str,
             missing: tuple[str, str]) -> BackendStatus | None:
    """Why ``backend`` cannot run on ``platform``: not its platform ``runs_on`` (``elsewhere``: the reason and
    the fix), or its package not installed (``missing``); None when neither.

    Example:
        >>> not_here('toy', 'gpu', 'cpu', ('toy runs on the CPU only.', 'Use jax.'), 'numpy', ('', '')).reason
        'toy runs on the CPU only.'
    """
    if platform != runs_on:
        return BackendStatus(backend, platform, False, *elsewhere)
    if package_missing(package):
        return BackendStatus(backend, platform, False, *missing)
    return None


def no_device_status(backend: str, platform: str) -> BackendStatus:
    """The status of a backend on an accelerator platform JAX does not see."""
    return BackendStatus(
        backend, platform, False, f'JAX sees no {platform} device.',
        f'Install the jaxlib plugin for {platform} (e.g. pip install "{JAX_EXTRA[platform]}") '
        'and make the device visible.')
