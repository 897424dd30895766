"""brainevent's exception classes, each also the eventjax class (or builtin) eventjax raises for the same thing.

``except brainevent.KernelNotAvailableError`` and ``except
eventjax.errors.BackendNotFoundError`` both catch a missing backend, because
the operators of this module raise the brainevent class, which subclasses the
eventjax one. The toolchain classes (nvcc, host compiler, headers) exist so
that ``except`` clauses naming them keep working; eventjax raises them only
where this module translates an eventjax error into them.

Operands that do not fit (shapes, lengths, ranks) raise :class:`OperandError`:
a :class:`MathError` (so a ``ValueError``, as eventjax raises) that is also the
``AssertionError`` brainevent's shape assertions raise.
"""

from __future__ import annotations

import functools

from eventjax import errors

__all__ = [
    'BenchmarkDataFnNotProvidedError', 'BrainEventError', 'CUDANotInstalledError', 'CompilationError',
    'GpuArchDetectionError', 'HeaderNotFoundError', 'HostCompilerIncompatibleError', 'HostCompilerNotFoundError',
    'KernelCompilationError', 'KernelError', 'KernelExecutionError', 'KernelFallbackExhaustedError',
    'KernelLoadError', 'KernelNotAvailableError', 'KernelRegistrationError', 'KernelToolchainError', 'MathError',
    'NvccNotFoundError', 'OperandError', 'UnsupportedArchError', 'UnsupportedOperationError', 'brainevent_errors',
]

# Where the classes are public: pickle finds them there by reference.
PUBLIC_MODULE = 'eventjax.compat.brainevent'


class BrainEventError(Exception):
    """The base of brainevent's exceptions."""


class MathError(BrainEventError, ValueError):
    """Operands that do not fit the operation (shapes, ranks); also the ``ValueError`` eventjax raises."""


class OperandError(MathError, AssertionError):
    """Operands that do not fit: brainevent asserts (``AssertionError``) where eventjax raises ``ValueError``.

    Example:
        >>> issubclass(OperandError, (MathError, ValueError, AssertionError))
        True
    """


class UnsupportedOperationError(BrainEventError, TypeError):
    """An operation that has no meaning for a representation; also a ``TypeError``."""


class KernelError(BrainEventError, RuntimeError):
    """The base of brainevent's kernel exceptions."""


class KernelNotAvailableError(KernelError, errors.BackendNotFoundError):
    """No kernel for the requested backend; also :class:`eventjax.errors.BackendNotFoundError`."""


class KernelCompilationError(KernelError, errors.KernelCompilationError):
    """A kernel failed to compile; also :class:`eventjax.errors.KernelCompilationError`."""


class CompilationError(KernelCompilationError):
    """C++ or CUDA source failed to compile; the message appends the command and the compiler's output."""

    def __init__(self, message: str, compiler_output: str = '', command: str = '', stage: str = 'compile'):
        self.compiler_output, self.command, self.stage = compiler_output, command, stage
        full = message + (f'\n\nCommand:\n  {command}' if command else '')
        super().__init__(full + (f'\n\nCompiler output:\n{compiler_output}' if compiler_output else ''))


class HostCompilerIncompatibleError(CompilationError):
    """The host C++ compiler does not suit the CUDA compiler."""


class KernelFallbackExhaustedError(KernelError):
    """Every fallback backend was tried and none could run."""


class KernelExecutionError(KernelError):
    """A compiled kernel failed while running."""


class CUDANotInstalledError(KernelError, errors.BackendUnavailableError):
    """CUDA was asked for where it is not installed; also :class:`eventjax.errors.BackendUnavailableError`."""


class KernelToolchainError(KernelError, errors.BackendUnavailableError):
    """A compiler or header a kernel needs is missing; also :class:`eventjax.errors.BackendUnavailableError`."""


class NvccNotFoundError(KernelToolchainError):
    """The CUDA compiler (nvcc) was not found."""


class HostCompilerNotFoundError(KernelToolchainError):
    """No host C++ compiler was found."""


class HeaderNotFoundError(KernelToolchainError):
    """A header a kernel needs was not found."""


class GpuArchDetectionError(KernelToolchainError):
    """The GPU's compute capability could not be found."""


class UnsupportedArchError(KernelToolchainError):
    """The CUDA compiler does not support the GPU's architecture."""

    def __init__(self, message: str, *, compiler_output: str = '', command: str = '', stage: str = ''):
        super().__init__(message)
        self.compiler_output, self.command, self.stage = compiler_output, command, stage


class KernelLoadError(KernelError):
    """A compiled library failed to load."""


class KernelRegistrationError(KernelError):
    """Registering an XLA FFI target failed."""


class BenchmarkDataFnNotProvidedError(BrainEventError):
    """brainevent's benchmark was asked for without a data function (eventjax has no such benchmark)."""


for _cls in [v for v in list(globals().values()) if isinstance(v, type) and issubclass(v, BrainEventError)]:
    # brainevent's names live in the package (OperandError, not one of them, stays here).
    if _cls is not OperandError:
        _cls.__module__ = PUBLIC_MODULE


def brainevent_errors(fn, name: str | None = None):
    """``fn`` raising brainevent's classes for eventjax's: a missing backend, a failed compile, bad operands.

    Each raised class subclasses the eventjax one it replaces, so callers that
    catch eventjax's (or the builtin) keep catching it. A wrapper of a
    function defined outside this package is named ``name`` (``fn``'s name
    by default) in ``eventjax.compat.brainevent``, where it must be published
    under that name: pickle finds it there, not eventjax's function.

    Example:
        >>> @brainevent_errors
        ... def f():
        ...     raise ValueError('x: shapes (2,) and (3,) do not fit')
        >>> try:
        ...     f()
        ... except MathError as e:
        ...     print(isinstance(e, ValueError))
        True
    """
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except BrainEventError:
            raise
        except errors.BackendNotFoundError as e:
            raise KernelNotAvailableError(str(e)) from e
        except errors.KernelCompilationError as e:
            raise KernelCompilationError(str(e)) from e
        except ValueError as e:
            # Only eventjax's plain ValueError (operands that do not fit); its
            # subclasses (UnsupportedDtypeError, ...) keep their own class.
            if type(e) is not ValueError:
                raise
            raise OperandError(str(e)) from e

    if name is not None or not fn.__module__.startswith(PUBLIC_MODULE):
        wrapper.__name__ = wrapper.__qualname__ = name or fn.__name__
        wrapper.__module__ = PUBLIC_MODULE
    return wrapper
