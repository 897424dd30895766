"""Time delayed delivery and plasticity on a TPU: the ``pallas`` TPU kernels against ``jax``.

    python -m benchmarks.tpu_delivery [--sizes 4000 20000] [--k 80] [--ring 16] [--rate 0.02] [--out FILE]
                                      [--ops ...] [--backends jax pallas dense-pass]

Each update runs inside one jitted ``lax.fori_loop`` of ``--loop`` steps with
the ring (or the weights) as the loop's carry, as a model's step loop runs
it, and the spikes rolled by one neuron every step (so nothing is hoisted);
the figure is microseconds per step. Each result is checked against the
first backend's on the same device (``max_abs_diff``, relative to the
largest value). The backend ``dense-pass`` times ``dense_on_post`` as XLA's
masked pass over the whole matrix (``W + where(post, trace, 0)``, bounded),
the form the pallas kernel is compared with when events fall in every
column tile. Prints one JSON line per measurement; runs anywhere, meant
for a TPU.
"""

from __future__ import annotations

import argparse
import json

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from benchmarks.tpu_products import _timed


def _loop(step, loop):
    """``loop`` steps of ``state = step(state, spikes rolled by i, operands)`` in one program."""
    def run(state, spikes, operands):
        def body(i, s):
            return step(s, jnp.roll(spikes, i), i, operands)
        return lax.fori_loop(0, loop, body, state)
    return jax.jit(run)


def _steps(m, n, backend, max_col=None):
    """``name -> step(state, spikes, i, operands)`` for each update timed (``max_col``: the longest column)."""
    import eventjax as ej

    def deliver(ring, s, i, o):
        return ej.csr_delay_deliver(ring, s, *o, i, shape=(m, n), backend=backend, validate=False)

    def layout(ring, s, i, o):
        lay = ej.CSRDelayLayout(o[0], None, o[1], None, o[2], shape=(m, n), ring_length=None)
        return ej.csr_delay_deliver_layout(ring, s, lay, i, backend=backend)

    def dense_pre(w, s, i, o):
        return ej.dense_on_pre(w, s, o[0], -1.0, 1.0, backend=backend)

    def fcn_pre(w, s, i, o):
        return ej.fcn_on_pre(w, o[0], s, o[1], -1.0, 1.0, shape=(m, n), backend=backend, validate=False)

    def csr_pre(w, s, i, o):
        return ej.csr_on_pre(w, o[0], o[1], s, o[2], -1.0, 1.0, shape=(m, n), backend=backend, validate=False,
                             max_row_length=o[0].shape[0] // m)

    def dense_post(w, s, i, o):
        if backend == 'dense-pass':
            from eventjax.kernels.plasticity import reference
            return reference.dense_on_post_kernel(outs=None, w_min=-1.0, w_max=1.0)(w, o[0], s)[0]
        return ej.dense_on_post(w, o[0], s, -1.0, 1.0, backend=backend)

    def csc_post(w, s, i, o):
        return ej.csr2csc_on_post(w, *o[:4], s, -1.0, 1.0, shape=(m, n), backend=backend, validate=False,
                                  max_col_length=max_col)

    return {'csr_delay_deliver': deliver, 'csr_delay_deliver_layout': layout, 'dense_on_pre': dense_pre,
            'fcn_on_pre': fcn_pre, 'csr_on_pre': csr_pre, 'dense_on_post': dense_post, 'csr2csc_on_post': csc_post}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--sizes', type=int, nargs='+', default=[4000, 20000])
    p.add_argument('--k', type=int, default=80)
    p.add_argument('--ring', type=int, default=16)
    p.add_argument('--rate', type=float, default=0.02)
    p.add_argument('--loop', type=int, default=200)
    p.add_argument('--dense-limit', type=int, default=8000)
    p.add_argument('--backends', nargs='+', default=['jax', 'pallas'])
    p.add_argument('--ops', nargs='+', default=['csr_delay_deliver', 'csr_delay_deliver_layout', 'dense_on_pre',
                                                'fcn_on_pre', 'csr_on_pre', 'dense_on_post', 'csr2csc_on_post'])
    p.add_argument('--out', default=None)
    args = p.parse_args(argv)
    import eventjax as ej
    from eventjax.kernels.delay.reference import packed_offsets

    device = jax.devices()[0]
    rows = []
    rng = np.random.default_rng(0)
    for size in args.sizes:
        m = n = size
        k, length = args.k, args.ring
        indices = rng.integers(0, n, (m, k)).astype(np.int32)
        weights = rng.normal(size=m * k).astype(np.float32)
        delays = rng.integers(1, length, m * k).astype(np.int32)
        order = np.lexsort((delays, np.repeat(np.arange(m), k)))  # a layout sorts each row by delay
        indptr = jnp.arange(0, m * k + 1, k, dtype=jnp.int32)
        flat = jnp.asarray(indices.reshape(-1))
        trace = jnp.asarray(rng.random(n), jnp.float32)
        operands = {
            'csr_delay_deliver': (jnp.zeros((length, n), jnp.float32),
                                  (jnp.asarray(weights), flat, indptr, jnp.asarray(delays))),
            'csr_delay_deliver_layout': (jnp.zeros((length, n), jnp.float32),
                                         (jnp.asarray(weights[order]), indptr,
                                          packed_offsets(flat[order], jnp.asarray(delays[order]), n))),
            'fcn_on_pre': (jnp.asarray(weights.reshape(m, k)) * 0.01, (jnp.asarray(indices), trace)),
            'csr_on_pre': (jnp.asarray(weights) * 0.01, (flat, indptr, trace)),
        }
        if size <= args.dense_limit:
            # Drawn on the device: a 20,000 x 20,000 matrix from NumPy takes long on the host.
            dense = jax.random.normal(jax.random.key(size), (m, n), jnp.float32) * 0.01
            operands['dense_on_pre'] = (dense, (trace,))
            operands['dense_on_post'] = (dense, (trace,))
        if 'csr2csc_on_post' in args.ops:
            view = ej.csr_column_view(flat, indptr, shape=(m, n))
            longest = int(np.max(np.diff(np.asarray(view[1]))))
            operands['csr2csc_on_post'] = (jnp.asarray(weights) * 0.01, (*view, trace))
        spikes = jnp.asarray(rng.random(m) < args.rate)
        for op in args.ops:
            if op not in operands:
                continue
            state, ops = operands[op]
            ref = None
            for backend in args.backends:
                if backend == 'dense-pass' and op != 'dense_on_post':
                    continue
                step = _steps(m, n, backend, longest if op == 'csr2csc_on_post' else None)[op]
                row = {'device': device.device_kind, 'op': op, 'size': size, 'k': k, 'ring': length,
                       'rate': args.rate, 'backend': backend}
                ref = measure(row, _loop(step, args.loop), (state, spikes, ops), args.loop, ref)
                rows.append(row)
    write(args.out, rows)


def measure(row, fn, args, loop, ref, repeats=5):
    """Time ``fn(*args)`` (``loop`` steps a call) into ``row`` (``loop_us``, ``max_abs_diff`` against ``ref``,
    relative to its largest value, or ``error``), print it as a JSON line; returns ``ref``, or the output
    when there was none."""
    try:
        loop_s, out, first = _timed(fn, *args, repeats=repeats)
    except Exception as e:  # noqa: BLE001 - report and go on with the next one
        row['error'] = f'{type(e).__name__}: {str(e).splitlines()[0][:300]}'
    else:
        out = np.asarray(out, np.float64)
        ref = out if ref is None else ref
        scale = 1 + float(np.max(np.abs(ref)))
        row.update(loop_us=loop_s / loop * 1e6, first_s=first, max_abs_diff=float(np.max(np.abs(out - ref))) / scale)
    print(json.dumps(row), flush=True)
    return ref


def write(path, rows):
    """The rows as one JSON file at ``path`` (None: nowhere)."""
    if path:
        with open(path, 'w') as fh:
            json.dump(rows, fh, indent=1)


if __name__ == '__main__':
    main()
