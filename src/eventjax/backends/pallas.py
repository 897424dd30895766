"""Run Pallas kernels as eventjax kernels, compiled on gpu/tpu or interpreted on the CPU.

A user's pallas kernel generator ``kg(**static_params, outs=outs)`` returns a
function ``call(*arrays, interpret: bool)`` that builds its ``pallas_call``
with ``interpret=interpret`` and applies it. The same generator thus serves
the compiled GPU/TPU kernel and the CPU interpret mode (used by tests without
a GPU); the bridge decides ``interpret`` from the platform.

In-place outputs: when a call declares ``input_output_aliases`` and the
user's generator names an ``input_output_aliases`` parameter, it receives the
mapping and passes it on to ``pl.pallas_call(..., input_output_aliases=...)``,
so the aliased output ref starts with the input's values and only what the
kernel writes changes. A generator without that parameter computes every
output itself (correct either way).

Interpret mode on the CPU runs the kernel body as ordinary JAX ops, grid step
by grid step, on outputs that start out as NaN (not zero): kernels that
accumulate must initialise their outputs themselves, on every backend.
Whether ``def_pallas_kernel`` also registers pallas kernels for the CPU is
decided by :func:`set_cpu_interpret` (default from the environment variable
``EVENTJAX_PALLAS_INTERPRET``, off unless set); this bridge itself always
honours an explicit ``'cpu'``. The switch is a setting of the configuration
snapshot, so a change is seen by every thread at once.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable
from types import ModuleType
from typing import Any

import attrs

from eventjax.backends import bridge
from eventjax.backends.bridge import BackendStatus, Bridge
from eventjax.config import moved_setting, normalize_platform, snapshot, update
from eventjax.config.snapshot import frozen_map
from eventjax.errors import PallasKernelSpecError

__all__ = ['BRIDGE', 'PallasKernelSpecError', 'get_cpu_interpret', 'pallas_kernel_generator', 'set_cpu_interpret',
           'status']

_INTERPRET_FIX = ('Set EVENTJAX_PALLAS_INTERPRET=1 or call eventjax.backends.pallas.set_cpu_interpret(True) '
                  'before registering kernels (slow; meant for tests).')
_INTERPRET = 'pallas.cpu_interpret'  # this backend's key in the snapshot's settings


def _env_flag(name: str, default: bool) -> bool:
    raw = os.environ.get(name, '').strip().lower()
    if raw == '':
        return default
    if raw in ('1', 'true', 'yes', 'on'):
        return True
    if raw in ('0', 'false', 'no', 'off'):
        return False
    raise ValueError(f'{name}={raw!r} is not a boolean; use 1/true/yes/on or 0/false/no/off.')


# What the process started with: the standard operators register by it, so whether their
# pallas kernels run on the cpu never depends on when a family was first loaded.
_AT_START = _env_flag('EVENTJAX_PALLAS_INTERPRET', False)


def set_cpu_interpret(enabled: bool) -> None:
    """Choose whether pallas kernels registered from now on also run on the cpu, interpreted.

    Interpret mode is slow and meant for tests on machines without a GPU, so
    it is off unless the environment variable ``EVENTJAX_PALLAS_INTERPRET``
    is ``1``/``true``/``yes``/``on`` at import or this is called. It applies to
    the kernels you register; the standard operators' pallas kernels run on
    the cpu only when the environment variable was on at import, whenever
    their family is first loaded.

    Example:
        >>> from eventjax.backends import pallas
        >>> pallas.set_cpu_interpret(True)
    """
    if not isinstance(enabled, bool):
        raise TypeError(f'set_cpu_interpret(): enabled must be a bool, got {enabled!r}.')

    def switch(s):
        if s.settings.get(_INTERPRET, _AT_START) == enabled:
            return s
        return attrs.evolve(s, settings=frozen_map({**s.settings, _INTERPRET: enabled}))
    update(switch)


def get_cpu_interpret() -> bool:
    """Whether pallas kernels are registered for the cpu in interpret mode.

    Example:
        >>> from eventjax.backends import pallas
        >>> isinstance(pallas.get_cpu_interpret(), bool)
        True
    """
    return snapshot().settings.get(_INTERPRET, _AT_START)


moved_setting('set_pallas_cpu_interpret', f'{__name__}.set_cpu_interpret', set_cpu_interpret)
moved_setting('get_pallas_cpu_interpret', f'{__name__}.get_cpu_interpret', get_cpu_interpret)


def _accepts_interpret(fn: Callable[..., Any]) -> bool:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):  # builtins and some C callables have no signature
        return True
    return 'interpret' in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())


def _names(fn: Callable[..., Any], name: str) -> bool:
    try:
        return name in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def pallas_kernel_generator(kg: Callable[..., Any], platform: str, interpret: bool = False
                            ) -> Callable[..., Callable]:
    """Turn a pallas kernel generator into a generator of JAX-traceable functions.

    Args:
        kg: called as ``kg(**static_params, outs=outs)``; returns
            ``call(*arrays, interpret: bool)`` that applies a ``pallas_call``
            built with that ``interpret`` flag.
        platform: ``'gpu'``, ``'tpu'`` or ``'cpu'``. On ``'cpu'`` the kernel
            always runs in interpret mode (Pallas has no CPU compiler).
        interpret: on gpu/tpu, interpret instead of compiling (for debugging).

    Returns:
        ``kg2(**static_params, outs=outs)`` returning ``f(*arrays) -> tuple``.

    Example:
        >>> import jax, jax.numpy as jnp
        >>> from jax.experimental import pallas as pl
        >>> def kg(*, outs):
        ...     def body(x_ref, y_ref):
        ...         y_ref[...] = 2 * x_ref[...] + 1
        ...     def call(x, *, interpret):
        ...         return pl.pallas_call(body, out_shape=outs[0], interpret=interpret)(x)
        ...     return call
        >>> kg2 = pallas_kernel_generator(kg, 'cpu')
        >>> kg2(outs=(jax.ShapeDtypeStruct((4,), jnp.float32),))(jnp.ones(4))
        (Array([3., 3., 3., 3.], dtype=float32),)
    """
    try:
        platform = normalize_platform(platform, who='pallas_kernel_generator()')
    except (TypeError, ValueError):
        raise ValueError(f"pallas kernels run on 'gpu', 'tpu' or 'cpu' (interpret), got {platform!r}.") from None
    use_interpret = True if platform == 'cpu' else bool(interpret)

    def kg2(*, outs, input_output_aliases=None, **static_params):
        outs = tuple(outs) if isinstance(outs, (tuple, list)) else (outs,)
        if input_output_aliases and _names(kg, 'input_output_aliases'):
            static_params = {**static_params, 'input_output_aliases': dict(input_output_aliases)}
        call = kg(**static_params, outs=outs)
        if not callable(call) or not _accepts_interpret(call):
            raise PallasKernelSpecError(
                'A pallas kernel generator must return call(*arrays, interpret) that forwards '
                f'interpret to pl.pallas_call; got {call!r}. Add an `interpret` keyword parameter.'
            )

        def run(*arrays):
            result = call(*arrays, interpret=use_interpret)
            result = tuple(result) if isinstance(result, (tuple, list)) else (result,)
            if len(result) != len(outs):
                raise ValueError(
                    f'The pallas kernel returned {len(result)} outputs but outs declares '
                    f'{len(outs)}; make out_shape match outs.')
            for i, (r, o) in enumerate(zip(result, outs)):
                if r.shape != o.shape or r.dtype != o.dtype:
                    raise ValueError(
                        f'The pallas kernel output {i} is {r.dtype}{list(r.shape)} but outs[{i}] '
                        f'declares {o.dtype}{list(o.shape)}; pass out_shape=outs to pallas_call.')
            return result

        return run

    kg2.kernel_generator = kg  # the user's generator: tests run a tpu kernel in the TPU interpreter by it
    return kg2


def status(platform: str) -> BackendStatus:
    """Whether pallas kernels can run on ``platform`` here (the cpu: only in interpret mode).

    Example:
        >>> status('cpu').platform
        'cpu'
    """
    if platform == 'cpu':
        if get_cpu_interpret():
            return BackendStatus('pallas', platform, True)
        return BackendStatus('pallas', platform, False,
                             'pallas runs on the CPU only in interpret mode, which is off.', _INTERPRET_FIX)
    if not bridge.jax_has_platform(platform):
        missing = bridge.no_device_status('pallas', platform)
        return attrs.evolve(missing, fix=f'{missing.fix} Or set EVENTJAX_PALLAS_INTERPRET=1 to run pallas '
                                         'kernels on the CPU.')
    return BackendStatus('pallas', platform, True)


def _companions(platform: str) -> tuple[str, ...]:
    # Interpret mode is far slower than the jax and numba backends: the cpu
    # gets the kernel only when asked for, and never as its default.
    return ('cpu',) if get_cpu_interpret() else ()


def standard(prim, module: Callable[[], ModuleType], name: str) -> None:
    """Register ``module().<name>_kernel`` for the gpu and, where the module has one, ``<name>_tpu_kernel``.

    Never a default, except on tpu for a module that sets ``TPU_DEFAULT``: ``True`` (every operator
    of the module) or a set of operator names.
    The cpu also gets the gpu kernel in interpret mode when
    ``EVENTJAX_PALLAS_INTERPRET`` was on as the process started: a family
    registers when it is first used, and what runs must not depend on whether
    :func:`set_cpu_interpret` came before or after that. Registering again
    (``Operator.register('pallas')``) replaces them and follows the setting of
    the moment. The module is imported here, to find the tpu kernel.
    """
    again = 'pallas' in prim.available_backends('gpu')
    on_cpu = get_cpu_interpret() if again else _AT_START
    kernels = module()
    tpu = getattr(kernels, f'{name}_tpu_kernel', None)
    if tpu is not None:
        # A family whose tpu kernels beat its jax kernels on the chip says so with TPU_DEFAULT.
        chosen = getattr(kernels, 'TPU_DEFAULT', False)
        default = name in chosen if isinstance(chosen, (set, frozenset)) else bool(chosen)
        prim.def_bridge_kernel('pallas', tpu, 'tpu', asdefault=default, companions=())
    prim.def_bridge_kernel('pallas', getattr(kernels, f'{name}_kernel'), 'gpu', companions=('cpu',) if on_cpu else ())


BRIDGE = Bridge(
    'pallas', ('gpu', 'tpu'), status, pallas_kernel_generator, platform_first=True, companions=_companions,
    hint='for the cpu turn on eventjax.backends.pallas.set_cpu_interpret(True) and register for gpu or tpu.',
    contract='``kernel_generator(**static_params, outs=outs)`` returns ``call(*arrays, interpret)`` that '
             'builds and applies a ``pallas_call``. When ``eventjax.backends.pallas.get_cpu_interpret()`` is '
             'on, the same kernel is also registered for the cpu in interpret mode (never as the cpu default).',
    standard=standard)
