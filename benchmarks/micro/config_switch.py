"""What a global backend change costs: eventjax's versioned snapshot vs a cache flush.

The baseline is the older design: the lowering reads a module-level backend
table and ``set_backend`` calls ``jax.clear_caches()`` so compiled code sees
the change. It exists here only to be measured against; eventjax never
flushes JAX's caches.
"""

from __future__ import annotations

import statistics
import time

import jax
import jax.numpy as jnp
from jax.extend import core
from jax.interpreters import mlir

import eventjax as ej

REPEATS = 30


def _baseline():
    table = {'cpu': 'a'}
    prim = core.Primitive('flush_baseline')
    prim.def_impl(lambda x: jax.jit(prim.bind)(x))
    prim.def_abstract_eval(lambda x: x)

    def lower(ctx, x):
        add = 1.0 if table['cpu'] == 'a' else 2.0
        return mlir.lower_fun(lambda x: x + add, multiple_results=False)(ctx, x)

    mlir.register_lowering(prim, lower, platform='cpu')

    def set_backend(name):
        if table['cpu'] != name:
            table['cpu'] = name
            jax.clear_caches()

    return prim.bind, set_backend


def _eventjax():
    prim = ej.XLACustomKernel('bench_switch')
    prim.def_kernel('a', 'cpu', lambda outs: lambda x: (x + 1.0,))
    prim.def_kernel('b', 'cpu', lambda outs: lambda x: (x + 2.0,))
    out = jax.ShapeDtypeStruct((8,), jnp.float32)
    return (lambda x: prim(x, outs=out)), (lambda name: ej.set_backend('cpu', name))


def _measure(call, set_backend):
    x = jnp.zeros(8, jnp.float32)
    f = jax.jit(call)
    bystander = jax.jit(lambda x: jnp.sin(x) * 3)
    f(x).block_until_ready()
    bystander(x).block_until_ready()
    switch, first, other, warm = [], [], [], []
    for i in range(REPEATS):
        name = 'ab'[(i + 1) % 2]
        t0 = time.perf_counter()
        set_backend(name)
        t1 = time.perf_counter()
        y = f(x).block_until_ready()
        t2 = time.perf_counter()
        bystander(x).block_until_ready()
        t3 = time.perf_counter()
        f(x).block_until_ready()
        t4 = time.perf_counter()
        assert float(y[0]) == (1.0 if name == 'a' else 2.0)
        switch.append(t1 - t0)
        first.append(t2 - t1)
        other.append(t3 - t2)
        warm.append(t4 - t3)
    return {k: statistics.median(v) for k, v in
            (('set_backend', switch), ('first call', first), ('bystander first call', other),
             ('warm call', warm))}


def main() -> None:
    ours = _measure(*_eventjax())
    ej.clear_backends()
    flush = _measure(*_baseline())
    print(f'\n== global backend change ({REPEATS} switches, median) ==')
    print(f'{"":28s}{"eventjax":>14s}{"clear_caches":>16s}')
    for key in ours:
        print(f'{key:28s}{ours[key] * 1e6:12.1f}us{flush[key] * 1e6:14.1f}us')


if __name__ == '__main__':
    main()
