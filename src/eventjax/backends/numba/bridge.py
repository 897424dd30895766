"""The numba CPU backend: njit kernels run as typed XLA FFI handlers.

A kernel generator returns an ``@numba.njit`` ``kernel(*inputs, *outputs)``
that fills its outputs in place. :func:`numba_kernel_generator` turns it into
a JAX-traceable function that calls the kernel through ``jax.ffi.ffi_call``.
The handler XLA calls is a ``numba.cfunc`` (see ``codegen``): no Python
and no GIL on the call path.

Targets. One FFI target per (kernel, input/output dtypes and ranks), never
per shape: the handler reads the dims at run time. Generators often return a
fresh closure on every call, so a kernel is keyed by its fingerprint (see
``keying``): its code, options and every value it reads from its
closure and globals, arrays by their bytes. A kernel holding a value that has
no fingerprint is keyed by identity and never cached on disk. Targets, their
cfuncs and kernels live for the life of the process in a registry guarded by
one lock (XLA keeps raw pointers to them).

Errors. A kernel may take one extra last argument, ``err``: a byte buffer it
fills with :func:`report_error`; the handler turns it into an XLA FFI error
and JAX raises an exception carrying the message. A kernel that raises
fails the call with the exception's class and message
(``ValueError: negative entry in x (raised in numba kernel k)``), which the
handler reads from what numba kept, taking the GIL on that path only.
Wrong dtypes, ranks or arity fail at trace time.

Bounds checks. :func:`bounds_checked` (or ``numba_kernel_generator(kg,
boundscheck=True)``, ``@numba.njit(boundscheck=True)``, ``NUMBA_BOUNDSCHECK=1``)
makes a kernel raise on an index out of bounds instead of reading or writing
past an array, and the call fails with an error saying so. Such kernels run
serially: a failed bounds check inside numba's parallel region is not safe in
a handler.

In-place outputs. When a call declares ``input_output_aliases``, the FFI
call aliases those outputs to their inputs: the kernel finds the input's
values already in the output array and updates only what it must (the input
argument it also receives is the same memory; read the output). float16
arrays are widened first, so they are updated in a float32 copy.

Threads and disk cache: see ``threads`` and ``codegen`` (and ``fresh``: the
handler calls fresh copies of the kernel and its njit callees).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any

import attrs
import jax
import numba
import numpy as np

from eventjax.backends.numba import codegen as numba_codegen
from eventjax.backends.numba import ffi_abi
from eventjax.backends.numba import keying as numba_keying
from eventjax.backends.numba.intrinsics import report_error
from eventjax.backends.numba.threads import get_num_threads, set_num_threads, threading_layer
from eventjax.backends.targets import TargetRegistry
from eventjax.errors import NumbaKernelError, UnsupportedDtypeError

__all__ = [
    'NumbaKernelError',
    'UnsupportedDtypeError',
    'ByInputs',
    'bounds_checked',
    'by_inputs',
    'get_num_threads',
    'numba_kernel_generator',
    'report_error',
    'set_num_threads',
    'target_count',
    'threading_layer',
]

MAX_RANK = 4

_Spec = tuple[np.dtype, int]


# --- Target registry ---------------------------------------------------------


@attrs.frozen
class _Target:
    name: str
    handler: Any = attrs.field(eq=False)  # the cfunc; XLA holds its address
    kernel: Any = attrs.field(eq=False)  # also keeps an identity key's id unique


_REGISTRY: TargetRegistry[_Target] = TargetRegistry()


def target_count() -> int:
    """How many FFI targets the numba backend has registered so far.

    Example:
        >>> n = target_count()
    """
    return len(_REGISTRY)


def _kernel_key(kernel: Any) -> tuple[tuple, tuple | None, bool]:
    """(registry key, fingerprint or None, whether its handler may be cached on disk) of ``kernel``."""
    fingerprint, portable = numba_keying.describe_kernel(kernel)
    if fingerprint is None:
        # The registry keeps the kernel alive, so its id is never reused.
        return ('identity', id(kernel)), None, False
    return ('value', numba.config.BOUNDSCHECK, fingerprint), fingerprint, portable


# --- Bounds checks -------------------------------------------------------------


def _rejit(kernel: Any, **options: Any) -> Any:
    """The same kernel compiled with ``options`` changed."""
    kept = {k: v for k, v in kernel.targetoptions.items() if k != 'nopython'}
    # locals= is held apart from the other options, and changes the result as much.
    return numba.njit(**{'locals': dict(kernel.locals), **kept, **options})(kernel.py_func)


def _checks_bounds(kernel: Any) -> bool:
    forced = numba.config.BOUNDSCHECK  # NUMBA_BOUNDSCHECK: 0 or 1 overrides every kernel
    return bool(kernel.targetoptions.get('boundscheck')) if forced is None else bool(forced)


def bounds_checked(kg: Callable) -> Callable:
    """Make the kernels of a numba kernel generator check every index (numba's ``boundscheck``).

    For debugging: an index out of bounds of an input or output makes the
    call raise an error (an ``OUT_OF_RANGE`` ``JaxRuntimeError`` naming the
    kernel) instead of reading or writing past the array. Checked kernels are
    slower and run serially (``prange`` acts as ``range``). njit functions the
    kernel calls keep their own setting: decorate them with
    ``boundscheck=True``, or set ``NUMBA_BOUNDSCHECK=1`` before starting Python
    to check everything.

    Args:
        kg: a numba kernel generator, as given to ``def_numba_kernel``.

    Returns:
        A kernel generator that returns the same kernels, compiled with bounds checks.

    Example:
        >>> import eventjax as ej
        >>> p = ej.XLACustomKernel('checked_example')
        >>> p.def_numba_kernel(bounds_checked(lambda outs: None))
    """

    def check(kernel: Any) -> Any:
        _check_njit(kernel)
        return kernel if kernel.targetoptions.get('boundscheck') else _rejit(kernel, boundscheck=True)

    @functools.wraps(kg)
    def checked(**params: Any) -> Any:
        kernel = kg(**params)
        if isinstance(kernel, ByInputs):
            return ByInputs(lambda *arrays: check(kernel.pick(*arrays)))
        return check(kernel)

    return checked


# --- Kernels picked from the inputs ---------------------------------------------


class ByInputs:
    """What a kernel generator returns when the njit kernel depends on the inputs' shapes or dtypes.

    Made by :func:`by_inputs`; the bridge calls ``pick(*inputs)`` (abstract
    arrays: ``.shape`` and ``.dtype``) once per traced call and compiles only
    the kernel it returns.
    """

    __slots__ = ('pick',)

    def __init__(self, pick: Callable[..., Any]):
        self.pick = pick


def by_inputs(pick: Callable[..., Any]) -> ByInputs:
    """Let a kernel generator choose its njit kernel from the call's inputs, so only that one compiles.

    The static parameters cannot say, for example, how many entries a sparse
    matrix stores; its index array's length can.

    Example:
        >>> @numba.njit
        ... def small(x, out):
        ...     out[:] = x
        >>> kg = lambda outs: by_inputs(lambda x: small)
        >>> outs = (jax.ShapeDtypeStruct((2,), np.float32),)
        >>> numba_kernel_generator(kg)(outs=outs)(np.ones(2, np.float32))[0].tolist()
        [1.0, 1.0]
    """
    return ByInputs(pick)


# --- Trace-time checks ---------------------------------------------------------


def _wide_dtype(dtype: Any) -> np.dtype:
    # numba has no CPU float16 type: kernels see float16 data as float32.
    return np.dtype(np.float32) if dtype == np.float16 else np.dtype(dtype)


def _widen(x: jax.Array) -> jax.Array:
    return x.astype(np.float32) if x.dtype == np.float16 else x


def _kernel_name(kernel: Any) -> str:
    return getattr(getattr(kernel, 'py_func', None), '__qualname__', repr(kernel))


def _spec(x: Any, who: str, what: str, i: int) -> _Spec:
    """(numpy dtype, rank) of an array or ShapeDtypeStruct, checked."""
    # As JAX will see it: 64-bit types become 32-bit unless x64 is enabled.
    dtype = np.dtype(jax.dtypes.canonicalize_dtype(x.dtype))
    if dtype not in ffi_abi.DATATYPE:
        hint = ' numba has no bfloat16 type; cast to float32 first.' if dtype.name == 'bfloat16' else ''
        supported = ', '.join(sorted(d.name for d in ffi_abi.DATATYPE))
        raise UnsupportedDtypeError(
            f'{who}: {what} {i} has dtype {dtype.name}, which the numba backend cannot pass to a kernel; '
            f'supported: {supported}.{hint}'
        )
    rank = len(x.shape)
    if rank > MAX_RANK:
        raise NumbaKernelError(
            f'{who}: {what} {i} has rank {rank}; the numba backend supports ranks 0 to {MAX_RANK}. '
            f'Reshape it before the call.'
        )
    return dtype, rank


def _check_njit(kernel: Any) -> None:
    if not isinstance(kernel, numba.core.registry.CPUDispatcher):
        raise NumbaKernelError(
            f'numba backend: the kernel generator must return an @numba.njit function, got '
            f'{type(kernel).__name__} {kernel!r}. Decorate the kernel with @numba.njit.'
        )


def _takes_err(kernel: Any, n_in: int, n_out: int, who: str) -> bool:
    """Whether ``kernel`` declares the trailing ``err`` argument."""
    params = inspect.signature(kernel.py_func).parameters.values()
    if any(p.kind == p.VAR_POSITIONAL for p in params):
        return False
    n = len(params)
    if n in (n_in + n_out, n_in + n_out + 1):
        return n == n_in + n_out + 1
    raise NumbaKernelError(
        f'{who}: the kernel takes {n} arguments; expected {n_in} inputs + {n_out} outputs = '
        f"{n_in + n_out}, or one more for the error buffer `err`. Fix the kernel's signature or the call's outs=."
    )


def _create_target(
    name: str,
    kernel: Any,
    fingerprint: tuple | None,
    portable: bool,
    in_specs: Sequence[_Spec],
    out_specs: Sequence[_Spec],
    who: str,
) -> _Target:
    takes_err = _takes_err(kernel, len(in_specs), len(out_specs), who)
    checked = _checks_bounds(kernel)
    parallel = bool(kernel.targetoptions.get('parallel'))
    compiled = kernel
    if checked and parallel:
        # A failed bounds check inside numba's parallel region leaves a Python
        # error set and then corrupts the heap (numba 0.68): check serially.
        compiled, parallel = _rejit(kernel, parallel=False), False
    if parallel:
        threading_layer()  # binds the launch hooks the handler calls
    source = numba_codegen.handler_source(_kernel_name(kernel), in_specs, out_specs, takes_err, parallel, checked)
    try:
        handler = numba_codegen.compile_handler(compiled, fingerprint, source, portable)
    except numba.core.errors.NumbaError as e:
        sig = ', '.join(f'{d.name}[rank {r}]' for d, r in (*in_specs, *out_specs))
        raise NumbaKernelError(
            f"{who}: numba could not compile the kernel for ({sig}) (inputs, then outputs; outputs are writable "
            f"arrays). Check that the kernel's array ranks and dtypes match the call.\nnumba said: {e}"
        ) from e
    jax.ffi.register_ffi_target(name, jax.ffi.pycapsule(handler.address), platform='cpu')
    return _Target(name, handler, kernel)


def _target_for(kernel: Any, arrays: Sequence[Any], outs: Sequence[Any]) -> _Target:
    who = f'numba kernel {_kernel_name(kernel)}'
    in_specs = tuple(_spec(a, who, 'input', i) for i, a in enumerate(arrays))
    out_specs = tuple(_spec(o, who, 'output', i) for i, o in enumerate(outs))
    kkey, fingerprint, portable = _kernel_key(kernel)
    return _REGISTRY.get_or_create(
        (kkey, in_specs, out_specs),
        lambda index: _create_target(f'eventjax_numba_{index}', kernel, fingerprint, portable, in_specs, out_specs,
                                     who),
    )


# --- Public entry point ----------------------------------------------------------


def numba_kernel_generator(kg: Callable, *, boundscheck: bool = False) -> Callable:
    """Wrap a numba kernel generator into a JAX kernel generator.

    Args:
        kg: called as ``kg(**static_params, outs=outs)``, returns an
            ``@numba.njit`` ``kernel(*inputs, *outputs[, err])`` that fills
            its outputs in place; ``outs`` is a tuple of
            ``jax.ShapeDtypeStruct``, one per output. An output the call
            aliases to an input (``input_output_aliases``) starts out holding
            that input's values.
        boundscheck: compile the kernels with bounds checks, as :func:`bounds_checked` does.

    Returns:
        ``kg2(**static_params, outs=outs)`` returning a JAX-traceable
        ``f(*arrays) -> tuple`` (one array per entry of ``outs``).

    Example:
        >>> @numba.njit
        ... def double(x, out):
        ...     for i in range(x.size):
        ...         out[i] = 2 * x[i]
        >>> kg2 = numba_kernel_generator(lambda outs: double)
        >>> outs = (jax.ShapeDtypeStruct((3,), np.float32),)
        >>> kg2(outs=outs)(np.ones(3, np.float32))[0].tolist()
        [2.0, 2.0, 2.0]
    """
    if boundscheck:
        kg = bounds_checked(kg)

    def kg2(*, outs: Any, input_output_aliases: Any = None, **static_params: Any) -> Callable:
        outs = tuple(outs) if isinstance(outs, (tuple, list)) else (outs,)
        aliases = dict(input_output_aliases or {})
        # XLA sees canonical dtypes (no 64-bit types unless x64 is enabled).
        outs = tuple(jax.ShapeDtypeStruct(o.shape, jax.dtypes.canonicalize_dtype(o.dtype)) for o in outs)
        chosen = kg(**static_params, outs=outs)
        if not isinstance(chosen, ByInputs):
            _check_njit(chosen)

        def call(*arrays: Any) -> tuple:
            arrays = tuple(_widen(jax.numpy.asarray(a)) for a in arrays)
            kernel = chosen
            if isinstance(kernel, ByInputs):
                kernel = kernel.pick(*arrays)
                _check_njit(kernel)
            wide = tuple(jax.ShapeDtypeStruct(o.shape, _wide_dtype(o.dtype)) for o in outs)
            target = _target_for(kernel, arrays, wide)
            # An aliased output is the input's own buffer (XLA copies the input
            # first unless it was donated): the kernel sees its values there.
            result = jax.ffi.ffi_call(target.name, wide, vmap_method='sequential',
                                      input_output_aliases=aliases)(*arrays)
            return tuple(r.astype(o.dtype) for r, o in zip(result, outs))

        return call

    return kg2
