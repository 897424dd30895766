"""What a warp kernel generator returns, and warp's types: the declarations warp kernel authors use.

:class:`WarpKernelSpec` (a kernel and how to launch it) or
:class:`ByInputDtypes` (a kernel typed by the input dtypes);
:func:`warp_dtype` maps a numpy dtype to warp's scalar type, and
:func:`import_warp` imports warp once, quietly. How a spec becomes an XLA
call is :mod:`eventjax.backends.warp.bridge`'s job.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Mapping
from typing import Any

import attrs
import numpy as np

from eventjax.backends.warp.quiet import init_warp
from eventjax.errors import UnsupportedDtypeError, WarpKernelSpecError

__all__ = ['SUPPORTED_WARP_DTYPES', 'WARP_VERBOSE_ENV', 'ByInputDtypes', 'WarpKernelSpec', 'as_spec', 'import_warp',
           'warp_dtype', 'widened']

WARP_VERBOSE_ENV = 'EVENTJAX_WARP_VERBOSE'

# jax dtype name -> warp scalar type name (resolved lazily: warp is optional).
_WARP_SCALARS = {
    'bool': 'bool',
    'int8': 'int8', 'int16': 'int16', 'int32': 'int32', 'int64': 'int64',
    'uint8': 'uint8', 'uint16': 'uint16', 'uint32': 'uint32', 'uint64': 'uint64',
    'float16': 'float16', 'float32': 'float32', 'float64': 'float64',
}
SUPPORTED_WARP_DTYPES = tuple(_WARP_SCALARS)

@functools.cache
def import_warp():
    """Import warp once, quiet unless ``EVENTJAX_WARP_VERBOSE=1``.

    Warp's info messages (init banner, "module load took ...") are lowered to
    warnings only, and warp is initialised without its no-CUDA-driver line
    (:func:`~eventjax.backends.warp.quiet.init_warp`); its kernel cache
    directory is left where warp keeps it.

    Example:
        >>> wp = import_warp()
        >>> wp.float32.__name__
        'float32'
    """
    try:
        import warp as wp  # noqa: PLC0415
    except ImportError as exc:
        raise ImportError('The warp backend needs warp-lang: pip install warp-lang') from exc
    verbose = os.environ.get(WARP_VERBOSE_ENV, '0').strip().lower() in ('1', 'true', 'yes', 'on')
    if not verbose:
        wp.config.log_level = wp.LOG_WARNING
    init_warp(wp, verbose=verbose)
    return wp


def warp_dtype(dtype: Any) -> Any:
    """Return the warp scalar type for a JAX/NumPy dtype.

    Example:
        >>> warp_dtype(np.float32).__name__
        'float32'

    Raises:
        UnsupportedDtypeError: the dtype has no warp equivalent (e.g. bfloat16).
    """
    name = np.dtype(dtype).name
    if name not in _WARP_SCALARS:
        raise UnsupportedDtypeError(
            f'The warp backend does not support dtype {name}; supported dtypes are '
            f'{", ".join(SUPPORTED_WARP_DTYPES)}. Cast the operand, or use another backend '
            "(e.g. backend='jax')."
        )
    return getattr(import_warp(), _WARP_SCALARS[name])


def _check_dim(instance, attribute, value) -> None:
    ok = value is None or callable(value) or isinstance(value, int) or (
        isinstance(value, tuple) and all(isinstance(d, int) for d in value)
    )
    if not ok:
        raise WarpKernelSpecError(
            f'WarpKernelSpec.dim must be None, an int, a tuple of ints or a callable of the '
            f'input shapes; got {value!r}.'
        )


@attrs.frozen
class WarpKernelSpec:
    """What a warp kernel generator returns.

    Attributes:
        kernel: a ``@warp.kernel`` whose parameters are, in order, the inputs
            (arrays and static scalars) then the outputs (arrays), one per
            entry of ``outs``.
        dim: launch dimensions: an int, a tuple of ints, a callable
            ``dim(*input_shapes) -> int | tuple``, or None for the shape of the
            first array input.
        zero_outputs: True to zero every output before launch, or the names of
            the outputs to zero (a leading run of the output parameters).
            Needed by kernels that accumulate, e.g. with ``warp.atomic_add``.
        scalars: values for the kernel's scalar parameters, by name.
        vmap_method: how the FFI call is batched when vmapped directly
            (``'sequential'`` is right for every kernel; ``'broadcast_all'``
            suits kernels whose launch is purely elementwise).
        block_dim: threads per block (None: warp's default).
        widen_outputs: True for a kernel that accumulates (``atomic_add``)
            into its outputs: a float16 output (and the input it aliases)
            is handed to the kernel as float32 and rounded back once at the
            end, so sums accumulate in float32 as on every other backend.
            Such a kernel types those outputs as float32.

    Example::

        WarpKernelSpec(affine_kernel, dim=lambda shape: shape)
    """

    kernel: Any
    dim: int | tuple[int, ...] | Callable[..., Any] | None = attrs.field(default=None, validator=_check_dim)
    zero_outputs: bool | tuple[str, ...] = attrs.field(
        default=False, converter=lambda v: v if isinstance(v, bool) else tuple(v))
    scalars: Mapping[str, Any] = attrs.field(factory=dict, converter=lambda m: dict(m))
    vmap_method: str = 'sequential'
    block_dim: int | None = None
    widen_outputs: bool = False


def widened(dtype) -> np.dtype:
    """The dtype a :class:`WarpKernelSpec` with ``widen_outputs`` accumulates ``dtype`` in (float16: float32)."""
    dtype = np.dtype(dtype)
    return np.dtype(np.float32) if dtype == np.float16 else dtype


@attrs.frozen
class ByInputDtypes:
    """What a warp kernel generator returns when the kernel is typed by its input arrays.

    A generator sees only ``outs``; ``factory(dtypes)`` is called at trace
    time with the numpy dtype of each input array and returns what a
    generator may return (cache it by dtypes: warp kernels are typed). A
    call whose inputs or outputs are empty returns zeros without launching
    (warp cannot launch an empty grid).

    Example::

        def kg(*, outs):
            return ByInputDtypes(lambda dtypes: WarpKernelSpec(scale_kernel(*dtypes)))
    """

    factory: Callable[[tuple[np.dtype, ...]], Any]


def as_spec(result: Any) -> WarpKernelSpec:
    """A generator's result as a :class:`WarpKernelSpec` (a bare kernel or a ``(kernel, dim)`` tuple wrapped)."""
    if isinstance(result, WarpKernelSpec):
        return result
    if isinstance(result, tuple) and len(result) == 2:
        return WarpKernelSpec(result[0], dim=result[1])
    if isinstance(result, import_warp().Kernel):
        return WarpKernelSpec(result)
    raise WarpKernelSpecError(
        'A warp kernel generator must return a WarpKernelSpec, a warp kernel, or a '
        f'(kernel, dim) tuple; got {type(result).__name__}. Wrap the kernel: '
        'return WarpKernelSpec(kernel, dim=...).'
    )
