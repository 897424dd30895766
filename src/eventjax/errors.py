"""The exceptions and warnings eventjax raises.

Each class subclasses a builtin, so ``except ValueError`` and friends keep
working for callers that do not know about eventjax. There is one class per
thing a caller would handle differently; the bridge-specific names of
earlier versions are aliases of :class:`KernelSpecError`.
"""

from __future__ import annotations

__all__ = [
    'BackendNotFoundError',
    'BackendUnavailableError',
    'CollectiveError',
    'ConfigMismatchError',
    'CoordinatorUnreachableError',
    'DiskCacheWarning',
    'DuplicatePrimitiveWarning',
    'JVPRuleCountError',
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


class BackendUnavailableError(RuntimeError):
    """A backend cannot run here: its package is missing or its device is absent."""


class UnsupportedDtypeError(TypeError, ValueError):
    """A backend cannot handle an array's dtype; raised at trace time, naming the supported ones.

    Also a ``ValueError``, which is what brainevent raises for it.
    """


class JVPRuleCountError(TypeError, ValueError):
    """``defjvp`` got a number of JVP rules other than one per operand (brainevent raises ``ValueError``)."""


class KernelSpecError(TypeError):
    """A kernel (or its generator) does not fit its bridge's contract or the declared ``outs``.

    Raised for a generator that returns something its bridge cannot run, a
    kernel whose arity, rank or typing does not fit the arrays, and outputs
    that disagree with ``outs``.
    """


# Earlier, finer names: kept so that code catching them keeps working.
KernelOutputError = KernelSpecError
WarpKernelSpecError = KernelSpecError
PallasKernelSpecError = KernelSpecError
NumbaKernelError = KernelSpecError


class UnknownBackendWarning(UserWarning):
    """``set_backend`` or ``override`` named a backend that no registered primitive has for that platform."""


class CoordinatorUnreachableError(ConnectionError):
    """A process of a multi-process run could not reach the coordinator within its timeout."""


class ConfigMismatchError(ValueError):
    """The processes of a multi-process run were started with different configurations."""


class CollectiveError(RuntimeError):
    """A collective across processes failed, most often because another process died."""


class OverrideInTaskError(RuntimeError):
    """``config.override`` was entered inside a coroutine task, where it would leak to other tasks."""


class DiskCacheWarning(UserWarning):
    """A compiled kernel on disk could not be used (a cut-short or unreadable file): it was compiled again."""


class DuplicatePrimitiveWarning(UserWarning):
    """A new primitive took a name an existing primitive already has."""
