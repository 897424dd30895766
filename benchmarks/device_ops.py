"""Where a program's time goes on the device: each XLA operation's time, read from JAX's profiler.

    python -m benchmarks.device_ops products --size 4000 --op binary_csrmv --direction Ws --csr-rows unequal
    python -m benchmarks.device_ops pd14 --scale 1 --backend pallas [--t-presim 100] [--t-profile 30]

The program runs once (compiling it), then ``--repeats`` times under
``jax.profiler.trace``; the trace is read back with
``jax.profiler.ProfileData`` and each operation's time is summed over its
executions and given per step (a product of the jitted loop, an update of
the network). On a TPU the device's own lines are read: ``XLA Ops``, and
``Async XLA Ops`` (copies that overlap other work). An operation inside a
loop counts again in the loop's own row (XLA's ``while``), so the rows do not
add up to a total. On a CPU the host threads' XLA operations are read
instead (the events that name an ``hlo_op``), so the tool runs, and is
tested, anywhere. ``--json FILE`` writes the rows.
"""

from __future__ import annotations

import argparse
import collections
import glob
import json
import os
import tempfile
import time

import jax

__all__ = ['op_times', 'main']


def _device_lines(data):
    """``(line name, events)`` of the device's operation lines, or of the host's XLA operations without one."""
    lines = [(line.name, line.events) for plane in data.planes if plane.name.startswith('/device:')
             for line in plane.lines if 'Ops' in line.name]
    if lines:
        return lines
    host = [ev for plane in data.planes if plane.name.startswith('/host:') for line in plane.lines
            for ev in line.events if any(key == 'hlo_op' for key, _ in ev.stats)]
    return [('XLA Ops (host)', host)]


def op_times(run, *, steps, repeats=2):
    """Each operation's time per step while ``run()`` runs (after one untimed call), ``repeats`` times.

    Returns rows ``{'line', 'op', 'us_per_step', 'per_step', 'hlo'}`` (``per_step``: executions a step;
    ``hlo``: the start of the operation's HLO text where the profiler names it), longest first in each line.

    Example:
        >>> f = jax.jit(lambda x: jax.lax.fori_loop(0, 4, lambda i, y: jax.numpy.sin(y) * 2, x))
        >>> rows = op_times(lambda: f(jax.numpy.ones(1000)), steps=4)
        >>> rows[0]['us_per_step'] > 0
        True
    """
    jax.block_until_ready(run())
    with tempfile.TemporaryDirectory() as folder:
        with jax.profiler.trace(folder):
            for _ in range(repeats):
                jax.block_until_ready(run())
        data = jax.profiler.ProfileData.from_file(glob.glob(os.path.join(folder, '**', '*.xplane.pb'),
                                                            recursive=True)[0])
        rows = []
        for line, events in _device_lines(data):
            total = collections.defaultdict(float)
            count = collections.Counter()
            hlo = {}
            for ev in events:
                total[ev.name] += ev.duration_ns
                count[ev.name] += 1
                if ev.name not in hlo:
                    stats = dict(ev.stats)
                    hlo[ev.name] = str(stats.get('long_name', stats.get('hlo_op', '')))[:160]
            rows += [{'line': line, 'op': name, 'us_per_step': total[name] / repeats / steps / 1e3,
                      'per_step': count[name] / repeats / steps, 'hlo': hlo[name]}
                     for name in sorted(total, key=total.get, reverse=True)]
    return rows


def _products(args):
    """``(run, steps)``: ``--loop`` products in one jitted loop, as :mod:`benchmarks.tpu_products` times them."""
    import jax.numpy as jnp  # noqa: PLC0415
    import numpy as np  # noqa: PLC0415

    from benchmarks.tpu_products import _csr_of, _loop, _product, _unequal_csr  # noqa: PLC0415

    rng = np.random.default_rng(0)
    m = n = args.size
    indices = jnp.asarray(rng.integers(0, n, (m, args.k)), jnp.int32)
    weights = jnp.asarray(rng.normal(size=(m, args.k)), jnp.float32)
    operands = {'fcn': (weights, indices), 'csr': (weights.reshape(-1), *_csr_of(indices, m, args.k))}
    if args.csr_rows == 'unequal':
        operands['csr'] = _unequal_csr(rng, m, n, args.k)
    spikes = jnp.asarray(rng.random(m) < args.rate)
    product, which = _product(args.op, args.backend, args.direction == 'sW', (m, n))
    fn = _loop(product, args.loop)
    return (lambda: fn(spikes, operands[which])), args.loop


def _pd14(args):
    """``(run, steps)``: PD14's updates of ``--t-profile`` ms after ``--t-presim`` ms, as the simulation runs them."""
    import numpy as np  # noqa: PLC0415
    from examples.microcircuit import simulation  # noqa: PLC0415

    model = simulation.build_for(args.backend, args.scale, dtype=np.dtype('float32'))
    runner = simulation.Runner(model, args.backend, 55)
    runner.compile()
    if args.t_presim:
        runner.run(args.t_presim, progress=None, record=False)
    return (lambda: runner.run(args.t_profile, progress=None, record=False)[2]), round(args.t_profile / 0.1)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest='program', required=True)
    q = sub.add_parser('products', help='a jitted loop of event products')
    q.add_argument('--size', type=int, default=4000)
    q.add_argument('--k', type=int, default=100)
    q.add_argument('--rate', type=float, default=0.02)
    q.add_argument('--op', choices=['binary_csrmv', 'binary_fcnmv', 'binary_densemv'], default='binary_csrmv')
    q.add_argument('--direction', choices=['sW', 'Ws'], default='Ws')
    q.add_argument('--csr-rows', choices=['equal', 'unequal'], default='equal')
    q.add_argument('--backend', default='pallas')
    q.add_argument('--loop', type=int, default=100)
    d = sub.add_parser('pd14', help="PD14's updates as examples.microcircuit runs them")
    d.add_argument('--scale', type=float, default=1.0)
    d.add_argument('--backend', default='pallas')
    d.add_argument('--t-presim', type=float, default=100.0)
    d.add_argument('--t-profile', type=float, default=30.0)
    for s in (q, d):
        s.add_argument('--repeats', type=int, default=2)
        s.add_argument('--top', type=int, default=25, help='rows shown a line')
        s.add_argument('--json', default=None, help='write every row to this file')
    args = p.parse_args(argv)
    start = time.perf_counter()
    run, steps = (_products if args.program == 'products' else _pd14)(args)
    rows = op_times(run, steps=steps, repeats=args.repeats)
    print(f'{args.program} on {jax.devices()[0].device_kind}: {steps} steps a run, set up in '
          f'{time.perf_counter() - start:.1f} s; microseconds a step by operation')
    shown = collections.Counter()
    for row in rows:
        shown[row['line']] += 1
        if shown[row['line']] <= args.top:
            print(f"{row['line'][:16]:16s} {row['us_per_step']:10.2f}  x{row['per_step']:<7.2f} {row['op'][:40]:40s} "
                  f"{row['hlo'][:70]}")
    if args.json:
        with open(args.json, 'w') as fh:
            json.dump(rows, fh, indent=1)
    return rows


if __name__ == '__main__':
    main()
