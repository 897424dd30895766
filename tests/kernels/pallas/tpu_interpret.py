"""Every pallas TPU kernel run on the cpu, in Pallas's TPU interpreter, as the backend ``pallas_tpu``.

The TPU interpreter (``interpret=pltpu.InterpretParams()``) models the TPU's
memory spaces, DMAs and semaphores, so a kernel that moves rows by DMA or
reads scalars from SMEM is checked here as the chip would run it (but for
timing). The kernels are found in the kernel tables: every primitive whose
``tpu`` table has a ``pallas`` kernel gets it on the cpu too, so a TPU
kernel joins these tests by being registered.

The interpreter orders its kernels with ordered host callbacks, which a
primitive's lowering has no effect tokens for; so each kernel is compiled on
its own (``jax.jit``, where JAX threads those tokens) and called from the
primitive through an unordered ``jax.pure_callback``.
"""

from __future__ import annotations

import contextlib

import attrs
import jax
import numpy as np

import eventjax as ej
from eventjax.backends.pallas import pallas_kernel_generator
from eventjax.primitive.chain import chain

__all__ = ['BACKEND', 'tpu_kernel_operators', 'tpu_kernels_on_cpu']

BACKEND = 'pallas_tpu'


def tpu_kernel_operators() -> tuple[str, ...]:
    """The standard primitives with a pallas kernel for the tpu (every family loaded first)."""
    ej.get_registry()
    return tuple(sorted(name for name, table in ej.primitives().items() if 'pallas' in table['tpu']))


def _interpreted(kg):
    """A cpu kernel generator running ``kg``'s kernels in the TPU interpreter (see the module docstring)."""
    # On the cpu the bridge passes interpret=True, which the TPU kernels turn into the TPU interpreter.
    interpreted = pallas_kernel_generator(kg, 'cpu')

    def generator(*, outs, **static):
        run = jax.jit(interpreted(outs=outs, **static))

        def host(*arrays):
            return tuple(np.asarray(r) for r in run(*arrays))

        return lambda *arrays: jax.pure_callback(host, tuple(outs), *arrays)

    return generator


def _pallas_generator(generator):
    """The pallas kernel generator inside ``generator``'s chain of wraps (the bridge's keeps it), or None."""
    for function, _ in chain(generator):
        kg = getattr(function, 'kernel_generator', None)
        if kg is not None:
            return kg
    return None


def _register_tpu_kernels_on_cpu():
    # Through each primitive's own def_kernel, so what a declaration wraps around its pallas kernels
    # (a preparation in JAX, say) wraps the interpreted kernel too.
    tables = {table.name: table for table in ej.config.snapshot().primitives.values()}
    for name, prim in ej.get_registry().items():
        entry = tables[name].kernels['tpu'].get('pallas') if name in tables else None
        kg = _pallas_generator(entry.generator) if entry is not None else None
        if kg is not None:
            prim.def_kernel(BACKEND, 'cpu', _interpreted(kg))


@contextlib.contextmanager
def tpu_kernels_on_cpu():
    """Inside: every pallas tpu kernel also registered for the cpu as ``pallas_tpu``; after: the tables as before."""
    ej.get_registry()
    before = ej.config.snapshot()
    _register_tpu_kernels_on_cpu()
    try:
        yield
    finally:
        ej.config.update(lambda snap: attrs.evolve(snap, primitives=before.primitives))
