"""The ``numba`` backend (cpu): its declaration, and the names kernel authors import.

The public surface of the backend is this module:

- :func:`report_error` (inside a kernel: fail the call with a message),
  :func:`bounds_checked` (a generator whose kernels check every index),
  :func:`numba_kernel_generator` (what ``def_numba_kernel`` registers),
  :func:`by_inputs` (a generator that picks its kernel from the call's inputs);
- :func:`prefetch`, :func:`launch_begin` / :func:`launch_end`,
  :func:`empty_vector` (intrinsics the standard kernels use);
  :func:`atomic_add`, :func:`compare_swap`, :func:`load_acquire`,
  :func:`wait_at_least` (threads
  of one parallel run handing work to each other);
- the backend's settings: :func:`set_num_threads` (how many threads a
  ``parallel=True`` kernel launch may use), :func:`set_parallel` and their
  getters, and :func:`describe_kernel`.

Its other modules (``bridge``, ``codegen``, ``handoffs``, ``intrinsics``, ``keying``,
``threads``, ``ffi_abi``) are the machinery and private. ``bridge``, ``handoffs`` and
``intrinsics`` import numba at import time and importing eventjax must not,
so their names are loaded at first use (the ``TYPE_CHECKING`` block names
them for readers and tools).

Example:
    >>> from eventjax.backends.numba import report_error, bounds_checked
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING

from eventjax.backends import bridge as core
from eventjax.backends.bridge import BackendStatus, Bridge
from eventjax.backends.numba.keying import describe_kernel
from eventjax.backends.numba.threads import (
    get_num_threads,
    get_parallel,
    requested_num_threads,
    set_num_threads,
    set_parallel,
    threading_layer,
)
from eventjax.config import moved_setting

if TYPE_CHECKING:  # loaded at first use (below), named here for readers and tools
    from eventjax.backends.numba.bridge import bounds_checked, by_inputs, numba_kernel_generator
    from eventjax.backends.numba.handoffs import atomic_add, compare_swap, load_acquire, wait_at_least
    from eventjax.backends.numba.intrinsics import empty_vector, launch_begin, launch_end, prefetch, report_error

# The names whose modules import numba, and the module each comes from: imported at first use.
_NEEDS_NUMBA = {
    'bounds_checked': 'bridge', 'numba_kernel_generator': 'bridge', 'by_inputs': 'bridge',
    'report_error': 'intrinsics', 'prefetch': 'intrinsics', 'launch_begin': 'intrinsics', 'launch_end': 'intrinsics',
    'empty_vector': 'intrinsics', 'atomic_add': 'handoffs', 'compare_swap': 'handoffs',
    'load_acquire': 'handoffs', 'wait_at_least': 'handoffs',
}

__all__ = ['BRIDGE', 'atomic_add', 'bounds_checked', 'by_inputs', 'compare_swap', 'describe_kernel', 'empty_vector',
           'get_num_threads', 'get_parallel', 'launch_begin', 'launch_end', 'load_acquire', 'numba_kernel_generator',
           'prefetch', 'report_error', 'requested_num_threads', 'set_num_threads', 'set_parallel', 'standard', 'status',
           'threading_layer', 'wait_at_least', 'wrap']

# The spellings eventjax.config had for these settings: they warn where used, and go in 0.3.0.
moved_setting('set_numba_num_threads', f'{__name__}.set_num_threads', set_num_threads)
moved_setting('get_numba_num_threads', f'{__name__}.requested_num_threads', requested_num_threads)
moved_setting('set_numba_parallel', f'{__name__}.set_parallel', set_parallel)
moved_setting('get_numba_parallel', f'{__name__}.get_parallel', get_parallel)


def __getattr__(name: str):
    if name in _NEEDS_NUMBA:
        return getattr(importlib.import_module(f'{__name__}.{_NEEDS_NUMBA[name]}'), name)
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')


def status(platform: str) -> BackendStatus:
    """numba runs on the cpu when the package is installed.

    Example:
        >>> status('gpu').available
        False
    """
    missing = core.not_here('numba', platform, 'cpu', ('numba kernels run on the CPU only.',
                                                       "Use backend 'warp' or 'pallas' on gpu, 'pallas' on tpu."),
                            'numba', ('The numba package is not installed.', 'pip install numba'))
    return BackendStatus('numba', platform, True) if missing is None else missing


def wrap(kernel_generator: Callable, platform: str) -> Callable:
    """Wrap an njit-kernel generator; numba is imported at the first lowering."""

    def lazy_generator(*, input_output_aliases=None, **params):
        from eventjax.backends.numba import bridge as numba_bridge  # noqa: PLC0415

        return numba_bridge.numba_kernel_generator(kernel_generator)(input_output_aliases=input_output_aliases,
                                                                     **params)

    return lazy_generator


def _accepted(fn: Callable, params: dict) -> dict:
    """The keyword arguments ``fn`` names (numba kernels depend on fewer parameters than the call has)."""
    names = inspect.signature(fn).parameters
    return {k: v for k, v in params.items() if k in names}


def standard(prim, module: Callable[[], ModuleType], name: str) -> None:
    """Register ``module().<name>_kernel`` for the cpu: the default there when numba is installed.

    At the first lowering the generator imports the module, calls
    ``<name>_kernel`` with the static parameters it names, and hands the
    kernel it returns to the bridge, which runs it as an XLA FFI handler.
    """
    def numba_kg(*, input_output_aliases=None, **params):
        from eventjax.backends.numba import bridge as numba_bridge  # noqa: PLC0415

        fn = getattr(module(), f'{name}_kernel')
        kernel = fn(**_accepted(fn, params))
        return numba_bridge.numba_kernel_generator(lambda **_: kernel)(input_output_aliases=input_output_aliases,
                                                                       **params)
    # The fastest cpu backend for these kernels when it is installed.
    prim.def_kernel('numba', 'cpu', numba_kg, asdefault=importlib.util.find_spec('numba') is not None)


BRIDGE = Bridge(
    'numba', ('cpu',), status, wrap, default_platform='cpu',
    hint="numba compiles for the CPU only; use def_warp_kernel or def_pallas_kernel on accelerators.",
    contract='``kernel_generator(**static_params, outs=outs)`` returns an ``@numba.njit`` '
             '``kernel(*inputs, *outputs[, err])`` that fills its outputs in place; it runs as a typed '
             'XLA FFI handler, with no Python and no GIL on the call path. An output the call aliases to an '
             'input (input_output_aliases) starts out holding that input\'s values. numba is imported only '
             'when the kernel is first lowered.',
    # numba compiles what a kernel closes over into its machine code: bounds held there would cost a
    # compilation (seconds) per pair, and an XLA op before the handler costs more than repairing inside.
    standard=standard, prepares_in_kernel=True, bounds_as_operand=True)
