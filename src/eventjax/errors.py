"""The exceptions and warnings eventjax raises.

Each class subclasses a builtin, so ``except ValueError`` and friends keep
working for callers that do not know about eventjax.
"""

from __future__ import annotations

__all__ = [
    'BackendNotFoundError',
    'BackendUnavailableError',
    'CollectiveError',
    'ConfigMismatchError',
    'CoordinatorUnreachableError',
    'KernelCompilationError',
    'KernelOutputError',
    'KernelSpecError',
    'NumbaKernelError',
    'OverrideInTaskError',
    'PallasKernelSpecError',
    'PlatformNotSupportedError',
    'UnknownBackendWarning',
    'UnsupportedDtypeError',
    'WarpKernelSpecError',
]


class BackendNotFoundError(ValueError):
    """A backend was asked for on a platform where the primitive has no kernel for it."""


class PlatformNotSupportedError(NotImplementedError):
    """A primitive was lowered for a platform on which it has no kernel at all."""


class KernelCompilationError(RuntimeError):
    """A kernel generator (or the kernel it returned) failed while being lowered.

    The original exception is chained as ``__cause__``.
    """


class KernelOutputError(TypeError):
    """A kernel returned outputs that do not match the declared ``outs``."""


class BackendUnavailableError(RuntimeError):
    """A backend cannot run here: its package is missing or its device is absent."""


class UnknownBackendWarning(UserWarning):
    """``set_backend`` named a backend that no registered primitive has for that platform."""


class UnsupportedDtypeError(TypeError):
    """A backend cannot handle an array's dtype; raised at trace time, naming the supported ones."""


class KernelSpecError(TypeError):
    """A kernel generator returned something its backend bridge cannot run."""


class WarpKernelSpecError(KernelSpecError):
    """A warp kernel generator returned something other than a kernel spec the bridge documents."""


class PallasKernelSpecError(KernelSpecError):
    """A pallas kernel generator returned something that cannot be called as documented."""


class NumbaKernelError(KernelSpecError):
    """A numba kernel does not fit the arrays it is called with (arity, rank, typing)."""


class CoordinatorUnreachableError(ConnectionError):
    """A process of a multi-process run could not reach the coordinator within its timeout."""


class ConfigMismatchError(ValueError):
    """The processes of a multi-process run were started with different configurations."""


class CollectiveError(RuntimeError):
    """A collective across processes failed, most often because another process died."""

class OverrideInTaskError(RuntimeError):
    """``config.override`` was entered inside a coroutine task, where it would leak to other tasks."""
