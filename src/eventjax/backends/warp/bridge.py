"""Run NVIDIA warp kernels as eventjax kernels, through warp's own JAX FFI.

A user's warp kernel generator ``kg(**static_params, outs=outs)`` returns a
:class:`WarpKernelSpec` (or a bare ``warp.Kernel``, or a ``(kernel, dim)``
tuple), or :class:`ByInputDtypes` when the kernel's types depend on the
input arrays. :func:`warp_kernel_generator` turns it into the generator the
primitive machinery lowers: ``kg2(**static_params, outs=outs)`` returns a
JAX-traceable ``f(*arrays) -> tuple`` that calls ``warp.jax_kernel``. This
module is the one way a warp kernel is registered (``BRIDGE``).

Facts about ``warp.jax_kernel`` (warp-lang 1.19) that shape this module:

- Output buffers are handed to the kernel uninitialised. Kernels that
  accumulate (``atomic_add``) need zeros, so outputs named in
  ``zero_outputs`` are passed as in/out arguments fed with ``jnp.zeros``.
- ``jax_kernel`` caches one FFI target per (kernel, options); launch and
  output dims passed per call do not enter that key, so we pass them per call
  and get one FFI target per kernel overload, never one per shape or call.
- ``FfiKernel.__call__`` records a launch descriptor under an unlocked
  counter, so concurrent traces are serialised here with a lock. Execution is
  serialised by warp itself (one process-wide callback lock).
- Every kernel defined in a Python module joins that module's warp
  ``Module``, whose hash covers all its kernels, and the first launch builds
  the module (in warp's callback, under its callback lock). A kernel defined
  by another thread during that build changes the hash mid-build and the
  build's files land under two names ("Module metadata file ... was not
  found in the cache"). So kernel generation, tracing and warp's callbacks
  all hold one lock: warp's callback lock (see :func:`_warp_lock`).
- Every trace gets a fresh ``launch_id`` baked into the HLO as an attribute:
  call the generated function under ``jit`` (the primitive does), since an
  eager call retraces and recompiles each time, and do not rely on JAX's
  persistent compilation cache across processes for warp calls (a cached
  executable would name a launch id the new process never recorded).
- ``in_out_argnames`` makes an output parameter an input too, and warp's
  FFI call aliases it to its output. An output the call aliases to an input
  (``input_output_aliases``) is passed that way, fed with the input's array;
  the input itself is then not passed again (twice the same operand would
  make XLA copy it). A kernel for an in-place call therefore lists the
  inputs that are not aliased, then the outputs.
- CPU kernels are compiled by warp's bundled clang into warp's kernel cache
  (``~/.cache/warp/<version>``), which a second process reuses.
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Callable, Mapping, Sequence
from types import ModuleType
from typing import Any

import attrs
import jax
import jax.numpy as jnp
import numpy as np

from eventjax.backends import bridge
from eventjax.backends.bridge import BackendStatus, Bridge
from eventjax.backends.warp.spec import (
    SUPPORTED_WARP_DTYPES,
    ByInputDtypes,
    WarpKernelSpec,
    as_spec,
    import_warp,
    warp_dtype,
    widened,
)
from eventjax.config import normalize_platform
from eventjax.errors import UnsupportedDtypeError, WarpKernelSpecError

__all__ = ['BRIDGE', 'SUPPORTED_WARP_DTYPES', 'ByInputDtypes', 'UnsupportedDtypeError', 'WarpKernelSpec',
           'WarpKernelSpecError', 'import_warp', 'status', 'warp_dtype', 'warp_kernel_generator']

_OWN_LOCK = threading.Lock()


def _zeroed_names(spec: WarpKernelSpec, n_outs: int) -> tuple[str, ...]:
    labels = [a.label for a in spec.kernel.adj.args]
    out_labels = labels[len(labels) - n_outs:]
    if spec.zero_outputs is True:
        return tuple(out_labels)
    if spec.zero_outputs is False:
        return ()
    names = spec.zero_outputs
    if tuple(out_labels[:len(names)]) != names:
        raise WarpKernelSpecError(
            f'zero_outputs={names} must name a leading run of the output parameters '
            f'{tuple(out_labels)} of kernel {spec.kernel.key!r}, in order; reorder the kernel '
            'parameters or pass zero_outputs=True.'
        )
    return names


def _in_out_names(spec: WarpKernelSpec, n_outs: int, aliased: Mapping[int, int]) -> tuple[str, ...]:
    """The output parameters passed as in/out: the zeroed ones and the aliased ones, a leading run."""
    labels = [a.label for a in spec.kernel.adj.args]
    out_labels = labels[len(labels) - n_outs:]
    zeroed = set(_zeroed_names(spec, n_outs))
    count = sum(1 for k, name in enumerate(out_labels) if name in zeroed or k in aliased)
    if any(k >= count for k in aliased) or len(zeroed) > count:
        raise WarpKernelSpecError(
            f'kernel {spec.kernel.key!r}: the outputs updated in place (input_output_aliases, positions '
            f'{sorted(aliased)}) and those in zero_outputs must be the first output parameters of '
            f'{tuple(out_labels)}; reorder the kernel parameters.')
    return tuple(out_labels[:count])


@functools.cache
def _warp_lock():
    """The lock warp's FFI callbacks hold; ours where this warp version has none.

    Holding it while kernels are generated and traced keeps a kernel from
    being added to a warp module while a callback builds that module.
    """
    from warp._src.jax import ffi as warp_ffi  # noqa: PLC0415

    lock = getattr(warp_ffi, '_FFI_CALLBACK_LOCK', None)
    return lock if hasattr(lock, 'acquire') and hasattr(lock, 'release') else _OWN_LOCK


@functools.cache
def _ffi_kernel(kernel, num_outputs: int, vmap_method: str, in_out: tuple[str, ...], block_dim):
    # Launch/output dims stay per call, so this is one FFI target per kernel overload.
    wp = import_warp()
    return wp.jax_kernel(kernel, num_outputs=num_outputs, vmap_method=vmap_method,
                         in_out_argnames=list(in_out) or None, block_dim=block_dim)


def _launch_dims(dim, arrays: Sequence[jax.Array]):
    if callable(dim):
        dim = dim(*(a.shape for a in arrays))
    if isinstance(dim, int):
        return (dim,)
    return None if dim is None else tuple(int(d) for d in dim)


def _check_outputs(ffi, outs, kernel_key: str) -> None:
    args = [a for a in ffi.input_args if a.in_out] + list(ffi.output_args)
    for arg, out in zip(args, outs):
        if np.dtype(arg.jax_scalar_type) != np.dtype(out.dtype):
            raise UnsupportedDtypeError(
                f'Warp kernel {kernel_key!r}: output {arg.name!r} has dtype '
                f'{np.dtype(arg.jax_scalar_type).name} but outs asks for {np.dtype(out.dtype).name}; '
                'build the kernel for the requested dtype (e.g. a factory cached by dtype).'
            )


def _assemble_args(ffi, spec: WarpKernelSpec, arrays, outs, aliased: Mapping[int, int]):
    """Interleave arrays, static scalars, aliased inputs and zero buffers in kernel parameter order."""
    sources = {k: arrays[i] for k, i in aliased.items()}
    arrays = [a for i, a in enumerate(arrays) if i not in set(aliased.values())]
    n_arrays = sum(1 for a in ffi.input_args if a.is_array and not a.in_out)
    if len(arrays) != n_arrays:
        raise TypeError(
            f'Warp kernel {spec.kernel.key!r} takes {n_arrays} input arrays, got {len(arrays)}'
            + (' (inputs updated in place are passed as their output parameter only)' if aliased else '') + '.')
    args, k = [], 0
    for arg in ffi.input_args:
        if arg.in_out:
            out = outs[k]
            args.append(sources[k] if k in sources else jnp.zeros(out.shape, out.dtype))
            k += 1
        elif arg.is_array:
            args.append(arrays.pop(0))
        elif arg.name in spec.scalars:
            args.append(spec.scalars[arg.name])
        else:
            raise WarpKernelSpecError(
                f'Warp kernel {spec.kernel.key!r} has a scalar parameter {arg.name!r}; give its '
                f'value with WarpKernelSpec(..., scalars={{{arg.name!r}: value}}).')
    return args


def warp_kernel_generator(kg: Callable[..., Any], platform: str = 'gpu') -> Callable[..., Callable]:
    """Turn a warp kernel generator into a generator of JAX-traceable functions.

    Args:
        kg: called as ``kg(**static_params, outs=outs)``; returns a
            :class:`WarpKernelSpec` (or a warp kernel, or ``(kernel, dim)``),
            or :class:`ByInputDtypes`.
        platform: ``'cpu'`` or ``'gpu'``; checked when the kernel is generated.

    Returns:
        ``kg2(**static_params, outs=outs)`` returning ``f(*arrays) -> tuple``.

    Example (in a module file: warp compiles kernels from their source)::

        @warp.kernel
        def affine(x: warp.array(dtype=float), y: warp.array(dtype=float)):
            i = warp.tid()
            y[i] = 2.0 * x[i] + 1.0

        kg2 = warp_kernel_generator(lambda outs: WarpKernelSpec(affine), 'cpu')
        f = kg2(outs=(jax.ShapeDtypeStruct((4,), jnp.float32),))
        jax.jit(f)(jnp.ones(4, jnp.float32))  # (Array([3., 3., 3., 3.], dtype=float32),)
    """
    if normalize_platform(platform, who='warp_kernel_generator()') not in BRIDGE.platforms:
        raise ValueError(f"warp kernels run on 'cpu' or 'gpu', got platform {platform!r}.")
    platform = normalize_platform(platform)

    def kg2(*, outs, input_output_aliases=None, **static_params):
        status(platform).require()
        outs = tuple(outs) if isinstance(outs, (tuple, list)) else (outs,)
        aliased = {k: i for i, k in (input_output_aliases or {}).items()}  # output -> input
        for out in outs:
            warp_dtype(out.dtype)
        with _warp_lock():
            result = kg(**static_params, outs=outs)
        if isinstance(result, ByInputDtypes):
            return _typed_call(result, outs, aliased)
        return _spec_call(result, outs, aliased)

    return kg2


def _typed_call(typed: ByInputDtypes, outs, aliased: Mapping[int, int]) -> Callable:
    def call(*arrays):
        if any(a.size == 0 for a in arrays) or any(0 in o.shape for o in outs):
            # Nothing to launch: an in-place output is its input unchanged.
            return tuple(arrays[aliased[k]] if k in aliased else jnp.zeros(o.shape, o.dtype)
                         for k, o in enumerate(outs))
        dtypes = tuple(np.dtype(a.dtype) for a in arrays)
        with _warp_lock():
            result = typed.factory(dtypes)
        return _spec_call(result, outs, aliased)(*arrays)

    return call


def _spec_call(result: Any, outs, aliased: Mapping[int, int]) -> Callable:
    with _warp_lock():
        spec = as_spec(result)
    if spec.widen_outputs and any(widened(o.dtype) != np.dtype(o.dtype) for o in outs):
        return _widened_call(spec, outs, aliased)
    with _warp_lock():
        ffi = _ffi_kernel(spec.kernel, len(outs), spec.vmap_method,
                          _in_out_names(spec, len(outs), aliased), spec.block_dim)
    _check_outputs(ffi, outs, spec.kernel.key)
    out_dims = {arg.name: out.shape for arg, out in zip(ffi.output_args, outs[ffi.num_in_out:])}

    def call(*arrays):
        for a in arrays:
            warp_dtype(a.dtype)
        args = _assemble_args(ffi, spec, arrays, outs, aliased)
        launch = _launch_dims(spec.dim, arrays)
        # Called outside a trace, ffi() runs the kernel at once, and warp's
        # callback takes the same lock: hold it only while tracing.
        tracing = any(isinstance(a, jax.core.Tracer) for a in args)
        with _warp_lock() if tracing else contextlib.nullcontext():
            result = ffi(*args, output_dims=out_dims or None, launch_dims=launch)
        return tuple(result)

    return call


def _widened_call(spec: WarpKernelSpec, outs, aliased: Mapping[int, int]) -> Callable:
    """Run ``spec`` on float32 copies of its float16 outputs (and their aliased inputs); round back once."""
    wide_outs = tuple(jax.ShapeDtypeStruct(o.shape, widened(o.dtype)) for o in outs)
    inner = _spec_call(attrs.evolve(spec, widen_outputs=False), wide_outs, aliased)
    sources = {i: k for k, i in aliased.items()}  # input position -> output position

    def call(*arrays):
        arrays = [a.astype(wide_outs[sources[i]].dtype) if i in sources else a for i, a in enumerate(arrays)]
        return tuple(r.astype(o.dtype) for r, o in zip(inner(*arrays), outs))

    return call


@functools.cache
def _warp_devices() -> tuple[bool, bool, str]:
    """(cpu available, cuda available, error text) as warp itself reports them."""
    try:
        wp = import_warp()
        wp.init()
        return bool(wp.is_cpu_available()), bool(wp.is_cuda_available()), ''
    except Exception as exc:  # a broken install must read as "unavailable", not crash
        return False, False, f'{type(exc).__name__}: {exc}'


def status(platform: str) -> BackendStatus:
    """Whether warp kernels can run on ``platform`` here, and if not, why and how to fix it.

    Example:
        >>> status('tpu').available
        False
    """
    if platform == 'tpu':
        return BackendStatus('warp', platform, False, 'warp kernels run on cpu and gpu only.',
                             "Use backend 'pallas' or 'jax' on tpu.")
    if bridge.package_missing('warp'):
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
    if not bridge.jax_has_platform('gpu'):
        return BackendStatus('warp', platform, False, 'warp sees a CUDA GPU but JAX does not.',
                             f'pip install "{bridge.JAX_EXTRA["gpu"]}" (or the CUDA version matching your driver).')
    return BackendStatus('warp', platform, True)


def standard(prim, module: Callable[[], ModuleType], name: str) -> None:
    """Register ``module().<name>_kernel(dtypes, outs=, **static)`` for the cpu (opt-in) and the gpu (the default).

    The kernel is typed by the input dtypes (:class:`ByInputDtypes`); the
    module is imported at the first lowering.
    """
    def warp_kg(*, outs, **static):
        return ByInputDtypes(lambda dtypes: getattr(module(), f'{name}_kernel')(dtypes, outs=outs, **static))
    prim.def_warp_kernel(warp_kg, platform='cpu')  # opt-in on the cpu: backend='warp'
    prim.def_warp_kernel(warp_kg, platform='gpu', asdefault=True)


BRIDGE = Bridge(
    'warp', ('cpu', 'gpu'), status, warp_kernel_generator, default_platform='gpu',
    hint="use def_pallas_kernel('tpu', ...) there.",
    contract='``kernel_generator(**static_params, outs=outs)`` returns a '
             ':class:`~eventjax.backends.warp.bridge.WarpKernelSpec` (or a warp kernel, or '
             '``(kernel, dim)``, or ``ByInputDtypes``); see ``eventjax/backends/README.md``.',
    standard=standard)
