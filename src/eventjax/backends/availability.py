"""Which backends can run on which platform here, and why not.

Every probe imports its optional package lazily, inside the probe, so that
importing eventjax never imports numba or warp. Package and device probes
are cached (they do not change while a process runs); the pallas CPU switch
is read from the environment on every call.
"""

from __future__ import annotations

import functools
import importlib.util

import attrs

from eventjax.config import PLATFORMS, get_pallas_cpu_interpret, normalize_platform
from eventjax.errors import BackendUnavailableError

BACKENDS = ('jax', 'numba', 'warp', 'pallas')
# The pip extra that brings JAX's plugin for each accelerator platform.
_JAX_EXTRA = {'gpu': 'jax[cuda12]', 'tpu': 'jax[tpu]'}


PALLAS_INTERPRET_ENV = 'EVENTJAX_PALLAS_INTERPRET'



@attrs.frozen
class BackendStatus:
    """Whether one backend can run on one platform, and if not, why and how to fix it.

    Attributes:
        backend: the backend name, e.g. ``'warp'``.
        platform: ``'cpu'``, ``'gpu'`` or ``'tpu'``.
        available: True when kernels of this backend can run here.
        reason: why not (empty when available).
        fix: what the user can do about it (empty when available or nothing helps).
    """

    backend: str
    platform: str
    available: bool
    reason: str = ''
    fix: str = ''

    def __bool__(self) -> bool:
        return self.available


def _normalize_platform(platform: str) -> str:
    return normalize_platform(platform, who='backend_status()')


def _check_backend_name(backend: str) -> None:
    if backend not in BACKENDS:
        raise ValueError(f'Unknown backend {backend!r}; expected one of {BACKENDS}.')


def pallas_cpu_interpret_enabled() -> bool:
    """Whether pallas kernels are also registered for the CPU, in interpret mode.

    This is the configuration setting ``eventjax.config.set_pallas_cpu_interpret``,
    whose default comes from the environment variable
    ``EVENTJAX_PALLAS_INTERPRET``. Off by default: interpret mode runs the
    kernel body as ordinary JAX ops one grid step at a time, far slower than
    the ``jax`` or ``numba`` backends, so it is never picked on the CPU by
    accident. Tests turn it on to run pallas kernels without a GPU.

    Example:
        >>> isinstance(pallas_cpu_interpret_enabled(), bool)
        True
    """
    return get_pallas_cpu_interpret()


@functools.cache
def _jax_has_platform(platform: str) -> bool:
    import jax  # noqa: PLC0415

    try:
        return len(jax.devices(platform)) > 0
    except RuntimeError:
        return False


@functools.cache
def _package_missing(module: str) -> bool:
    return importlib.util.find_spec(module) is None


@functools.cache
def _warp_devices() -> tuple[bool, bool, str]:
    """(cpu available, cuda available, error text) as warp itself reports them."""
    try:
        from eventjax.backends.warp_bridge import import_warp  # noqa: PLC0415

        wp = import_warp()
        wp.init()
        return bool(wp.is_cpu_available()), bool(wp.is_cuda_available()), ''
    except Exception as exc:  # a broken install must read as "unavailable", not crash
        return False, False, f'{type(exc).__name__}: {exc}'


def _status_jax(platform: str) -> BackendStatus:
    if platform == 'cpu' or _jax_has_platform(platform):
        return BackendStatus('jax', platform, True)
    return BackendStatus(
        'jax', platform, False,
        f'JAX sees no {platform} device.',
        f'Install the jaxlib plugin for {platform} (e.g. pip install "{_JAX_EXTRA[platform]}") '
        'and make the device visible.',
    )


def _status_numba(platform: str) -> BackendStatus:
    if platform != 'cpu':
        return BackendStatus('numba', platform, False, 'numba kernels run on the CPU only.',
                             "Use backend 'warp' or 'pallas' on gpu, 'pallas' on tpu.")
    if _package_missing('numba'):
        return BackendStatus('numba', platform, False, 'The numba package is not installed.',
                             'pip install numba')
    return BackendStatus('numba', platform, True)


def _status_warp(platform: str) -> BackendStatus:
    if platform == 'tpu':
        return BackendStatus('warp', platform, False, 'warp kernels run on cpu and gpu only.',
                             "Use backend 'pallas' or 'jax' on tpu.")
    if _package_missing('warp'):
        return BackendStatus('warp', platform, False, 'The warp-lang package is not installed.',
                             'pip install warp-lang')
    cpu_ok, cuda_ok, error = _warp_devices()
    if error:
        return BackendStatus('warp', platform, False, f'warp failed to initialise ({error}).',
                             'Reinstall warp-lang (pip install --force-reinstall warp-lang).')
    if platform == 'cpu':
        if cpu_ok:
            return BackendStatus('warp', platform, True)
        return BackendStatus('warp', platform, False, 'This warp build has no CPU support.',
                             'Install the standard warp-lang wheel from PyPI.')
    if not cuda_ok:
        return BackendStatus('warp', platform, False,
                             'No CUDA GPU visible to warp (no driver, no device, or a CPU-only build).',
                             'Run on a machine with an NVIDIA GPU and driver; check nvidia-smi.')
    if not _jax_has_platform('gpu'):
        return BackendStatus('warp', platform, False, 'warp sees a CUDA GPU but JAX does not.',
                             'pip install "jax[cuda12]" (or the CUDA version matching your driver).')
    return BackendStatus('warp', platform, True)


def _status_pallas(platform: str) -> BackendStatus:
    if platform == 'cpu':
        if pallas_cpu_interpret_enabled():
            return BackendStatus('pallas', platform, True)
        return BackendStatus('pallas', platform, False,
                             'pallas runs on the CPU only in interpret mode, which is off.',
                             f'Set {PALLAS_INTERPRET_ENV}=1 or call eventjax.config.set_pallas_cpu_interpret(True) '
                             'before registering kernels (slow; meant for tests).')
    if not _jax_has_platform(platform):
        return BackendStatus(
            'pallas', platform, False, f'JAX sees no {platform} device.',
            f'Install the jaxlib plugin for {platform} (e.g. pip install "{_JAX_EXTRA[platform]}"), '
            f'or set {PALLAS_INTERPRET_ENV}=1 to run pallas kernels on the CPU.',
        )
    return BackendStatus('pallas', platform, True)


_PROBES = {'jax': _status_jax, 'numba': _status_numba, 'warp': _status_warp, 'pallas': _status_pallas}


def backend_status(backend: str, platform: str) -> BackendStatus:
    """Report whether ``backend`` can run on ``platform`` in this process.

    Example:
        >>> backend_status('jax', 'cpu').available
        True
    """
    _check_backend_name(backend)
    return _PROBES[backend](_normalize_platform(platform))


def backends_available() -> dict[str, dict[str, BackendStatus]]:
    """Report every backend on every platform: ``result[backend][platform]``.

    Example:
        >>> status = backends_available()
        >>> status['warp']['gpu'].available, status['warp']['gpu'].reason  # doctest: +SKIP
        (False, 'No CUDA GPU visible to warp (...)')
    """
    return {b: {p: backend_status(b, p) for p in PLATFORMS} for b in BACKENDS}


def require_backend(backend: str, platform: str) -> None:
    """Raise unless ``backend`` can run on ``platform``, saying why and how to fix it.

    Example:
        >>> require_backend('jax', 'cpu')  # returns None: available

    Raises:
        BackendUnavailableError: the backend cannot run there.
        ValueError: unknown backend or platform name.
    """
    status = backend_status(backend, platform)
    if not status.available:
        fix = f' Fix: {status.fix}' if status.fix else ''
        raise BackendUnavailableError(
            f"Backend '{backend}' is not available on '{status.platform}': {status.reason}{fix}"
        )
