"""Compile every operator's TPU lowering for a TPU v5e through libtpu, on a machine without a TPU.

Run in a process of its own (``make test-tpu`` does, through
``test_tpu_compile.py``), since JAX must start with the TPU platform
available and libtpu serves one process at a time::

    JAX_PLATFORMS= TPU_ACCELERATOR_TYPE=v5litepod-1 TPU_WORKER_HOSTNAMES=localhost \\
        python -m tests.kernels.pallas.tpu_compile [--full]

libtpu's deviceless compile runs Mosaic exactly as on the chip, so a pallas
TPU kernel that Mosaic refuses fails here. The operators come from the
kernel table (``eventjax/kernels/table.py``): each one whose family has an
operand builder below is compiled with its default backend and, where it has
one, its pallas tpu kernel, for odd sizes, float32 and float16 weights, bool
and float events, mv and mm, both directions. An operator with a pallas tpu
kernel but no builder fails the run. The report lists which operators have a
pallas TPU kernel. Deliveries into rings too large for the one-hot block of the
whole ring (PD14's at full scale among them), the delivery at read time
(PD14's too) and W @ s gathers of awkward shapes are compiled from abstract
shapes as well. Exit status 1 on any failure.
"""

from __future__ import annotations

import itertools
import os
import sys
import time

ENV = {'JAX_PLATFORMS': '', 'TPU_ACCELERATOR_TYPE': 'v5litepod-1', 'TPU_WORKER_HOSTNAMES': 'localhost',
       # libtpu takes a machine-wide lock file by default; compiling needs no chip to guard.
       'ALLOW_MULTIPLE_LIBTPU_LOAD': '1'}
# 'v5e:1x1' is refused; one device of a 2x2 is the one-chip compile.
TOPOLOGY = 'v5e:2x2'
# Sizes that are no multiple of 8 or 128 (300 x 530 runs past one block of the dense kernels both ways),
# and event columns for the mm forms (past one 32-bit word of events, past one block of 256).
QUICK = {'sizes': ((300, 530),), 'columns': (3,)}
FULL = {'sizes': ((37, 300), (300, 530), (4000, 4000), (20000, 130)), 'columns': (3, 40, 300)}


K = 5  # connections per row (FCN) and stored entries per row (CSR)
L = 7  # ring steps (delay delivery)


def _csr(m, wdt, i32):
    return [((m * K,), wdt), ((m * K,), i32), ((m + 1,), i32)]


def _products(family):
    """``build(m, n, cols, transpose, wdt, xdt) -> (operand (shape, dtype) pairs, statics)`` of a product."""
    def build(m, n, cols, transpose, wdt, xdt):
        import jax.numpy as jnp  # noqa: PLC0415 - imported after the environment is set

        length = m if transpose else n
        x = ((length,) if cols is None else (length, cols), xdt)
        statics = {'transpose': transpose, 'shape': (m, n)}
        if family == 'dense':
            return [((m, n), wdt), x], {'transpose': transpose}
        if family == 'csr':
            return [*_csr(m, wdt, jnp.int32), x], statics
        if family == 'fcn':
            return [((m, K), wdt), ((m, K), jnp.int32), x], statics
        return [((), wdt), x], {**statics, 'seed': 0, 'prob': 0.1}  # jitc, homogeneous law
    return build


def _updates(name):
    """The same for an update (plasticity, delay delivery): no direction, no mm form."""
    def build(m, n, cols, transpose, wdt, xdt):
        import jax.numpy as jnp  # noqa: PLC0415

        i32, pre, post = jnp.int32, ((m,), xdt), ((n,), xdt)
        shape = {'shape': (m, n)}
        return {
            'dense_on_pre': ([((m, n), wdt), pre, ((n,), wdt)], {}),
            'dense_on_post': ([((m, n), wdt), ((m,), wdt), post], {}),
            'csr_on_pre': ([*_csr(m, wdt, i32), pre, ((n,), wdt)], shape),
            'fcn_on_pre': ([((m, K), wdt), ((m, K), i32), pre, ((n,), wdt)], shape),
            # the column view: rows of each column's entries, its indptr, where each entry is in the CSR
            'csr2csc_on_post': ([((m * K,), wdt), ((m * K,), i32), ((n + 1,), i32), ((m * K,), i32), ((m,), wdt),
                                 post], shape),
            'csr_delay_deliver': ([((L, n), wdt), pre, *_csr(m, wdt, i32), ((m * K,), i32), ((), i32)], shape),
            # the layout's arrays: weights, packed offsets, indptr (see _layout_delivery)
            'csr_delay_deliver_layout': ([((L, n), wdt), pre, *_csr(m, wdt, i32), ((), i32)], shape),
        }[name]
    return build


def builder(name, family):
    """How to build the operands of operator ``name``, or None where this sweep has no builder for it."""
    if family in ('dense', 'csr', 'fcn', 'jitc') and name.endswith(('mv', 'mm')) and '_' not in \
            name.removeprefix('binary_'):
        return _products(family)
    if name in ('dense_on_pre', 'dense_on_post', 'csr_on_pre', 'fcn_on_pre', 'csr2csc_on_post',
                'csr_delay_deliver', 'csr_delay_deliver_layout'):
        return _updates(name)
    return None


def _layout_delivery(ring, events, data, offsets, indptr, t, *, shape, backend):
    """``csr_delay_deliver_layout`` on a layout made of traced arrays (what a jitted model passes)."""
    import eventjax as ej  # noqa: PLC0415

    layout = ej.CSRDelayLayout(data, None, indptr, None, offsets, shape=shape, ring_length=None)
    return ej.csr_delay_deliver_layout(ring, events, layout, t, backend=backend)


# Deliveries into rings past the one-hot block of the whole ring (the sorted-target kernel), as (m, n, L, nnz):
# odd sizes, and PD14 at full scale (its synapses padded to whole 1,024-entry tiles, as the example pads them),
# into a ring of n columns and of whole 128-column rows (the example's pallas ring).
LARGE_RINGS = ((300, 5003, 120, 1500), (77_169, 77_169, 64, 298_881_024), (77_169, 77_184, 64, 298_881_024))


def _large_ring_cases():
    """``(what, function, operand (shape, dtype) pairs)`` of each form of delivery into each of LARGE_RINGS."""
    import jax.numpy as jnp  # noqa: PLC0415

    import eventjax as ej  # noqa: PLC0415

    i32, f32 = jnp.int32, jnp.float32
    for m, n, length, nnz in LARGE_RINGS:
        structure = [((nnz,), f32), ((nnz,), i32), ((m + 1,), i32)]
        ring, spikes = ((length, n), f32), ((m,), jnp.bool_)
        what = f'{m}x{n}, ring {length}, {nnz} synapses'
        yield (f'csr_delay_deliver_layout(backend=pallas, {what})',
               lambda *a, s=(m, n): _layout_delivery(*a, shape=s, backend='pallas'),
               [ring, spikes, *structure, ((), i32)])
        yield (f'csr_delay_deliver(backend=pallas, {what}, weighted)',
               lambda *a, s=(m, n): ej.csr_delay_deliver(*a, shape=s, weighted=True, backend='pallas'),
               [ring, ((m,), f32), *structure, ((nnz,), i32), ((), i32)])


# The delivery at read time (pallas_tpu_pull) as (m, columns, L, nnz, groups, capacity, rows held a step): odd
# sizes with several rounds, and PD14 at full scale (whole tiles, 128-column rows).
PULLS = ((300, 5003, 9, 1536, 3, 4, 16), (77_169, 77_184, 64, 298_881_024, 8, 1024, 256))


def _pull_cases():
    """``(what, function, operand (shape, dtype) pairs)`` of one update of the delivery at read time."""
    import jax.numpy as jnp  # noqa: PLC0415

    from eventjax.kernels.delay import pallas_tpu_pull  # noqa: PLC0415

    i32 = jnp.int32
    for m, columns, length, nnz, groups, capacity, held in PULLS:
        yield (f'pallas_tpu_pull.pull_input({m} rows, {columns} columns, ring {length}, {nnz} synapses, '
               f'{groups} groups, {capacity} rows of synapses a round)',
               lambda *a, c=columns, g=groups, cap=capacity: pallas_tpu_pull.pull_input(
                   *a, columns=c, groups=g, capacity=cap),
               [((nnz // 128, 128), jnp.float32), ((nnz // 128, 128), i32),
                ((-(-(m + 1) * length // 8), 128), i32), ((length, held), i32), ((), i32)])


# W @ s gathers as (m, n, k, shared weight, events): a last group of one entry (Mosaic gathers no single
# sublane) in groups of 8 (25 table rows), of 16 (10 rows) and of 32 (float, 71 rows: the rows' loop), one row
# of 600 entries, one entry per row.
GATHERS = ((203, 100_000, 33, False, True), (203, 40_000, 17, False, True), (203, 9_000, 33, False, False),
           (1, 333, 600, False, True), (70, 333, 1, True, True))
# s @ W scatters as (family, m, n, k): the widest result of the batches of rows packed 16 to a product, and
# the widest result the scatter takes (past it, the jax kernel), of the narrow batches.
SCATTERS = (('fcn', 300, 131_072, 100), ('csr', 300, 131_072, 100), ('fcn', 300, 524_288, 100),
            ('csr', 300, 524_288, 100))
# CSR W @ s of rows of unequal length (the running sums per row) as (m, n, nnz, events): 10 M entries
# (blocks of the layout past the last entry), and a few in one block.
SEGMENTS = ((100_000, 100_000, 10_000_077, True), (203, 9_000, 5_001, False))


def _gather_cases():
    """``(what, function, operand (shape, dtype) pairs)`` of the FCN gather at each of GATHERS, of the
    FCN and CSR event scatters at each of SCATTERS, and of the CSR gather at each of SEGMENTS."""
    import jax.numpy as jnp  # noqa: PLC0415

    import eventjax as ej  # noqa: PLC0415

    for m, n, k, shared, events in GATHERS:
        op = ej.binary_fcnmv if events else ej.fcnmv
        yield (f'{op.__name__}(backend=pallas, W @ s, {m}x{n}, k={k}{", shared weight" if shared else ""})',
               lambda *a, s=(m, n), op=op: op(*a, shape=s, transpose=False, backend='pallas'),
               [((1,) if shared else (m, k), jnp.float32), ((m, k), jnp.int32), ((n,), jnp.bool_ if events
                                                                                  else jnp.float32)])
    for family, m, n, k in SCATTERS:
        op = ej.binary_fcnmv if family == 'fcn' else ej.binary_csrmv
        structure = [((m, k), jnp.float32), ((m, k), jnp.int32)] if family == 'fcn' else \
            [((m * k,), jnp.float32), ((m * k,), jnp.int32), ((m + 1,), jnp.int32)]
        yield (f'{op.__name__}(backend=pallas, s @ W, {m}x{n}, k={k})',
               lambda *a, s=(m, n), op=op: op(*a, shape=s, transpose=True, backend='pallas'),
               [*structure, ((m,), jnp.bool_)])
    for m, n, nnz, events in SEGMENTS:
        op = ej.binary_csrmv if events else ej.csrmv
        yield (f'{op.__name__}(backend=pallas, W @ s, {m}x{n}, {nnz} entries)',
               lambda *a, s=(m, n), op=op: op(*a, shape=s, transpose=False, backend='pallas'),
               [((nnz,), jnp.float32), ((nnz,), jnp.int32), ((m + 1,), jnp.int32),
                ((n,), jnp.bool_ if events else jnp.float32)])


def _cases(name, sweep):
    import jax.numpy as jnp  # noqa: PLC0415

    product = name.endswith(('mv', 'mm'))
    forms = sweep['columns'] if name.endswith('mm') else (None,)
    events = (jnp.bool_, jnp.float32) if name.startswith('binary_') or not product else None
    for (m, n), cols, transpose, wdt in itertools.product(sweep['sizes'], forms, (False, True) if product
                                                          else (False,), (jnp.float32, jnp.float16)):
        for xdt in events or (wdt,):
            yield m, n, cols, transpose, wdt, xdt


def main(argv: list[str]) -> int:
    missing = {k: v for k, v in ENV.items() if os.environ.get(k) != v}
    if missing:
        print(f'tpu_compile: run with the environment {ENV} (missing or different: {sorted(missing)}).')
        return 2
    import jax  # noqa: PLC0415
    from jax.experimental import topologies  # noqa: PLC0415

    import eventjax as ej  # noqa: PLC0415
    from eventjax.kernels.table import KERNELS  # noqa: PLC0415

    sweep = FULL if '--full' in argv else QUICK
    device = topologies.get_topology_desc(topology_name=TOPOLOGY, platform='tpu').devices[0]
    sharding = jax.sharding.SingleDeviceSharding(device)
    tables = ej.primitives() if ej.get_registry() else {}
    failures, compiled, report = [], 0, []
    for name, files in sorted(KERNELS.items()):
        family = files.split('/')[0]
        tpu = tables.get(name, {}).get('tpu', ())
        has_pallas = 'pallas' in tpu
        build = builder(name, family) if hasattr(ej, name) else None
        if build is None:
            report.append(f'{name:28s} tpu backends: {", ".join(tpu) or "none":12s} not swept (no operand builder)')
            if has_pallas:
                failures.append(f'{name}: has a pallas tpu kernel but no operand builder in tpu_compile.py')
            continue
        fn = _layout_delivery if name == 'csr_delay_deliver_layout' else getattr(ej, name)
        for backend in (None, 'pallas') if has_pallas else (None,):
            for m, n, cols, transpose, wdt, xdt in _cases(name, sweep):
                shapes, statics = build(m, n, cols, transpose, wdt, xdt)
                args = [jax.ShapeDtypeStruct(s, d, sharding=sharding) for s, d in shapes]
                what = (f'{name}(backend={backend!r}, {m}x{n}, cols={cols}, {statics}, '
                        f'{jax.numpy.dtype(wdt).name} weights, {jax.numpy.dtype(xdt).name} events/x)')
                call = lambda *a, f=fn, s=statics, b=backend: f(*a, backend=b, **s)
                start = time.perf_counter()
                # The pallas kernels under a user's jax.default_matmul_precision('highest'): their
                # bfloat16 products must set their own precision, or Mosaic refuses them.
                precision = 'highest' if backend == 'pallas' else None
                try:
                    with jax.default_matmul_precision(precision):
                        jax.jit(call).trace(*args).lower(lowering_platforms=('tpu',)).compile()
                except Exception as exc:  # every failure is reported, Mosaic's first of all
                    first = str(exc).strip().splitlines()[0] if str(exc).strip() else ''
                    failures.append(f'{what}: {type(exc).__name__}: {first}')
                    continue
                compiled += 1
                if time.perf_counter() - start > 30:
                    print(f'slow compile ({time.perf_counter() - start:.0f} s): {what}', flush=True)
        report.append(f'{name:28s} tpu backends: {", ".join(tpu):12s} '
                      f'pallas tpu kernel: {"yes" if has_pallas else "no"}')
    for what, call, shapes in itertools.chain(_large_ring_cases(), _gather_cases(), _pull_cases()):
        args = [jax.ShapeDtypeStruct(s, d, sharding=sharding) for s, d in shapes]
        try:
            jax.jit(call).trace(*args).lower(lowering_platforms=('tpu',)).compile()
        except Exception as exc:  # noqa: BLE001 - reported with the others
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else ''
            failures.append(f'{what}: {type(exc).__name__}: {first}')
            continue
        compiled += 1
    print('\n'.join(report))
    print(f'{compiled} compiled for {TOPOLOGY}, {len(failures)} failed.')
    for failure in failures:
        print(f'FAILED {failure}')
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
