"""Time the dense, CSR and FCN event products on a TPU: each backend against a dense product of the same matrix.

    python -m benchmarks.tpu_products [--sizes 4000 16000] [--k 100] [--rate 0.02] [--out FILE]
    python -m benchmarks.tpu_products --sizes 100000 --backends pallas --loop 20   # no dense product past 20,000
    python -m benchmarks.tpu_products --sizes 4000 16000 --jax-limit 4000   # the jax kernels at 4,000 only
    python -m benchmarks.tpu_products --sizes 100000 --backends pallas --directions sW   # s @ W only
    python -m benchmarks.tpu_products --ops binary_csrmv --csr-rows unequal   # CSR rows of binomial lengths

Each product is timed twice: inside one jitted ``lax.fori_loop`` of
``--loop`` products (the spikes change every iteration, so nothing is
hoisted), which is the kernel's cost, and per jitted call, which adds the
dispatch (about 125 us on a TPU); the first call's time (tracing, compiling,
one run) is reported too. ``--backends brainevent`` times brainevent's own
function on the same operands (installed apart). Results are checked against
the first backend on the same device. Prints one JSON line per measurement.
``--jax-limit N`` times the ``jax`` kernels only up to N neurons (past a
few thousand, compiling and timing them takes minutes on a TPU).
"""

from __future__ import annotations

import argparse
import json
import time

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax


def _timed(fn, *args, repeats=5):
    """(best of ``repeats`` calls, the output, the first call's seconds: tracing, compiling and one run)."""
    t0 = time.perf_counter()
    out = fn(*args)
    jax.block_until_ready(out)
    first = time.perf_counter() - t0
    best = float('inf')
    for _ in range(repeats):
        t0 = time.perf_counter()
        jax.block_until_ready(fn(*args))
        best = min(best, time.perf_counter() - t0)
    return best, out, first


def _loop(product, loop):
    """``loop`` products in one program, each on spikes with one entry flipped by the step.

    The matrix reaches the program as an argument: captured as a constant, XLA would fold a large one into
    the program, and compiling it would take minutes on a TPU.
    """
    def run(x, operands):
        def step(i, acc):
            j = i % x.shape[0]
            xi = lax.dynamic_update_slice(x, jnp.logical_not(lax.dynamic_slice(x, (j,), (1,))), (j,))
            return acc + product(xi, operands)[0][j]
        return lax.fori_loop(0, loop, step, jnp.zeros((), jnp.float32))
    return jax.jit(run)


def _csr_of(indices, m, k):
    indptr = jnp.arange(0, m * k + 1, k, dtype=jnp.int32)
    return indices.reshape(-1), indptr


def _unequal_csr(rng, m, n, k):
    """CSR rows of binomial lengths (``2k`` trials at 1/2: ``k`` entries a row on average), as a matrix of
    random connections with probability ``k / n`` has; ``(weights, indices, indptr)``."""
    lengths = rng.binomial(2 * k, 0.5, m)
    indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    nnz = int(indptr[-1])
    return (jnp.asarray(rng.normal(size=nnz), jnp.float32), jnp.asarray(rng.integers(0, n, nnz), jnp.int32),
            jnp.asarray(indptr))


def _product(op, backend, transpose, shape):
    """``product(spikes, operands)`` and the name of its operands in :func:`main`'s ``operands``."""
    import eventjax as ej

    if backend == 'brainevent':
        return _brainevent_product(op, transpose, shape)
    if op == 'binary_densemv':
        return (lambda s, o: (ej.binary_densemv(o[0], s, transpose=transpose, backend=backend, validate=False),),
                'dense')
    if op == 'binary_fcnmv':
        return (lambda s, o: (ej.binary_fcnmv(*o, s, shape=shape, transpose=transpose, backend=backend,
                                              validate=False),), 'fcn')
    return (lambda s, o: (ej.binary_csrmv(*o, s, shape=shape, transpose=transpose, backend=backend,
                                          validate=False),), 'csr')


def _brainevent_product(op, transpose, shape):
    """brainevent's own function on the same operands, on its default backend for the device."""
    import brainevent

    if op == 'binary_fcnmv':
        return (lambda s, o: (brainevent.binary_fcnmv(*o, s, shape=shape, transpose=transpose),), 'fcn')
    if op == 'binary_csrmv':
        return (lambda s, o: (brainevent.binary_csrmv(*o[:3], s, shape=shape, transpose=transpose,
                                                      workspace=o[3]),), 'csr_brainevent')
    raise ValueError(f'--backends brainevent: no brainevent counterpart of {op!r} here (binary_fcnmv, binary_csrmv).')


def main(argv=None):

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--sizes', type=int, nargs='+', default=[4000, 16000])
    p.add_argument('--k', type=int, default=100)
    p.add_argument('--rate', type=float, default=0.02)
    p.add_argument('--loop', type=int, default=200)
    p.add_argument('--backends', nargs='+', default=['jax', 'pallas'])
    p.add_argument('--ops', nargs='+', default=['binary_fcnmv', 'binary_csrmv', 'binary_densemv'])
    p.add_argument('--dense-limit', type=int, default=20000)
    p.add_argument('--jax-limit', type=int, default=None, help='time the jax kernels only up to this size')
    p.add_argument('--directions', nargs='+', choices=['sW', 'Ws'], default=['sW', 'Ws'],
                   help='the products to time: s @ W (transpose=True), W @ s, or both')
    p.add_argument('--csr-rows', choices=['equal', 'unequal'], default='equal',
                   help="the CSR matrix: the FCN one's rows (k entries each), or rows of binomial lengths "
                        '(k on average; no dense product)')
    p.add_argument('--out', default=None)
    args = p.parse_args(argv)
    device = jax.devices()[0]
    rows = []

    def emit(**row):
        row = {'device': device.device_kind, **row}
        rows.append(row)
        print(json.dumps(row), flush=True)
        if args.out:  # after every row: a run stopped by a time limit keeps what it measured
            with open(args.out, 'w') as fh:
                json.dump(rows, fh, indent=1)

    rng = np.random.default_rng(0)
    for size in args.sizes:
        m = n = size
        k = args.k
        indices = jnp.asarray(rng.integers(0, n, (m, k)), jnp.int32)
        weights = jnp.asarray(rng.normal(size=(m, k)), jnp.float32)
        spikes = jnp.asarray(rng.random(m) < args.rate)
        flat, indptr = _csr_of(indices, m, k)
        operands = {'fcn': (weights, indices), 'csr': (weights.reshape(-1), flat, indptr)}
        if args.csr_rows == 'unequal':
            operands['csr'] = _unequal_csr(rng, m, n, k)
            flat, indptr = operands['csr'][1:]
        if 'brainevent' in args.backends and 'binary_csrmv' in args.ops:
            # brainevent's CSR product takes a workspace it makes from a concrete indptr.
            from brainevent._csr.binary import _make_binary_csrmv_workspace

            operands['csr_brainevent'] = (*operands['csr'], _make_binary_csrmv_workspace(indptr))
        if size <= args.dense_limit and args.csr_rows == 'equal':
            dense = jnp.zeros((m, n), jnp.float32).at[jnp.arange(m)[:, None], indices].add(weights)
            operands['dense'] = (dense,)
            for transpose in (True, False):
                f = (lambda s, o: (s.astype(jnp.float32) @ o[0],)) if transpose else \
                    (lambda s, o: (o[0] @ s.astype(jnp.float32),))
                loop_s, _, _ = _timed(_loop(f, args.loop), spikes, (dense,))
                call_s, _, _ = _timed(jax.jit(f), spikes, (dense,))
                emit(op='dense_f32', size=size, k=k, transpose=transpose, backend='jnp',
                     loop_us=loop_s / args.loop * 1e6, call_us=call_s * 1e6)
        for op in args.ops:
            if op == 'binary_densemv' and 'dense' not in operands:
                continue
            for transpose in [d == 'sW' for d in args.directions]:
                ref = None
                for backend in args.backends:
                    if backend == 'jax' and args.jax_limit is not None and size > args.jax_limit:
                        continue
                    f, kind = _product(op, backend, transpose, (m, n))
                    try:
                        call_s, y, first_s = _timed(jax.jit(f), spikes, operands[kind])
                        loop_s, _, _ = _timed(_loop(f, args.loop), spikes, operands[kind])
                    except Exception as e:  # noqa: BLE001 - report and go on with the next backend
                        emit(op=op, size=size, k=k, transpose=transpose, backend=backend,
                             error=f'{type(e).__name__}: {str(e).splitlines()[0][:300]}')
                        continue
                    y = np.asarray(y[0])
                    ref = y if ref is None else ref
                    emit(op=op, size=size, k=k, transpose=transpose, backend=backend, csr_rows=args.csr_rows,
                         loop_us=loop_s / args.loop * 1e6, call_us=call_s * 1e6, first_call_s=first_s,
                         max_abs_diff_vs_first=float(np.max(np.abs(y - ref))))


if __name__ == '__main__':
    main()
