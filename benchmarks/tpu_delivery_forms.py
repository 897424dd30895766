"""Time forms of PD14's delivery on a TPU: XLA's scatter and the sorted-target pallas kernel, at PD14's shapes.

    python -m benchmarks.tpu_delivery_forms [--rows 4096] [--n 77169 ...] [--k 3872] [--ring 64] [--spikes 25]
                                            [--loop 100] [--forms ...] [--out FILE]

Synthetic synapses with PD14's statistics: ``--k`` a row to targets drawn
uniformly from ``--n``, delays (steps) drawn as PD14's (excitatory rows
1.5 +- 0.75 ms, inhibitory 0.75 +- 0.375 ms at 0.1 ms, within the ring),
each row sorted by packed offset; ``--spikes`` event rows an update (the
same count every update, rolled by one row each). Each form runs ``--loop``
updates in one jitted ``lax.fori_loop`` with the ring as the carry; the
figure is microseconds per update (``loop_us``), and each result is checked against the
first form's (per ``--n``: PD14's 77,169 targets, or 77,184, a ring of whole
128-column rows). Forms: ``jax`` and ``pallas`` (the library's backends), and the
``jax`` kernel's passes with their terms sent to a sink
(:class:`~eventjax.kernels.delay.pallas_tpu_sorted.SortedSink`): ``unsorted``
(XLA's scatter), ``nothing`` (terms made, not added), ``sort`` (sorted, not
added), ``xla`` (sorted, XLA's scatter told so), ``segment``
(``segment_sum`` of the sorted terms), and the kernel, named
``kernel-<precision>-<piece>-<window>-<rows a pass>`` (each row read
through a window of twice the mean row) or ``tiles-...`` (the rows read
as whole tiles of 1,024 synapses, the listing of
:func:`~eventjax.kernels.delay.pallas_tpu_sorted.deliver`). The forms that read
an input vector each update, as a model does, start from the spikes of the
``--ring`` updates before the loop and return the sum of the inputs read
(checked against the first of them): ``read-jax`` and ``read-pallas`` (the
ring: slot read and cleared, then the backend's delivery) and the delivery at
read time (:mod:`~eventjax.kernels.delay.pallas_tpu_pull`), named
``pull-<groups>-<rows of 128 synapses a group reads a round>[-<spiking rows held a step>]``: no ring, no
sort.
"""

from __future__ import annotations

import argparse
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from benchmarks.tpu_delivery import measure, write

FORMS = ['jax', 'pallas', 'unsorted', 'nothing', 'sort', 'xla', 'segment', 'kernel-parts-128-64-32',
         'kernel-parts-256-128-32', 'kernel-parts-512-256-32', 'kernel-highest-512-256-32', 'tiles-parts-512-256-32',
         'read-jax',
         'read-pallas', 'pull-8-1024', 'pull-8-512', 'pull-4-1024', 'pull-12-512', 'pull-8-1024-256']
MAX_SPIKES = 64  # rows a step the delivery at read time holds


def synapses(rows, n, k, length, seed=0):
    """``(weights, indptr, offsets)`` of ``rows`` rows of ``k`` synapses, each row sorted by packed offset."""
    kc, kd, kw = jax.random.split(jax.random.key(seed), 3)
    cols = jax.random.randint(kc, (rows, k), 0, n, jnp.int32)
    excitatory = (jnp.arange(rows) < int(0.8 * rows))[:, None]
    mean, sd = jnp.where(excitatory, 15.0, 7.5), jnp.where(excitatory, 7.5, 3.75)
    d = jnp.clip(jnp.round(mean + sd * jax.random.normal(kd, (rows, k))), 1, length - 1).astype(jnp.int32)
    offsets = jnp.sort(d * n + cols, axis=1).reshape(-1)
    weights = jax.random.normal(kw, (rows * k,), jnp.float32) * 87.8
    return weights, jnp.arange(0, rows * k + 1, k, dtype=jnp.int32), offsets


def sink_of(form, length, n):
    """The sink of a form besides ``jax``, ``pallas`` and ``kernel-...``: the same pairs, added otherwise."""
    from eventjax.kernels.delay.pallas_tpu_sorted import SortedSink

    if form not in ('unsorted', 'nothing', 'sort', 'xla', 'segment'):
        raise ValueError(f'unknown form {form!r}; the forms: {", ".join(FORMS)}.')

    class Form(SortedSink):
        def add_terms(self, block, keys, terms):
            flat = block.reshape(-1)
            if form == 'unsorted':
                return flat.at[keys].add(terms, mode='drop').reshape(block.shape)
            if form == 'nothing':
                return block.at[0, 0].add(terms[0] + keys[0].astype(terms.dtype))
            k, c = lax.sort((keys, terms), num_keys=1, is_stable=False)
            if form == 'sort':
                return block.at[0, 0].add(c[0] + k[0].astype(c.dtype))
            if form == 'xla':
                return flat.at[k].add(c, mode='drop', indices_are_sorted=True).reshape(block.shape)
            return block + jax.ops.segment_sum(c, k, block.size, indices_are_sorted=True).reshape(block.shape)

    return Form(length, n)


def step_of(form, m, n, length):
    """``step(ring, spikes, t, (weights, indptr, offsets))`` -> ring, for a form."""
    import eventjax as ej
    from eventjax.kernels.delay import jax_impl, pallas_tpu_sorted
    from eventjax.kernels.delay.pallas_tpu_sorted import SortedSink

    if form in ('jax', 'pallas'):
        def step(ring, s, t, o):
            lay = ej.CSRDelayLayout(o[0], None, o[1], None, o[2], shape=(m, n), ring_length=None)
            return ej.csr_delay_deliver_layout(ring, s, lay, t, backend=form)
        return step
    if form.startswith('tiles-'):
        _, precise, piece, window, rows = form.split('-')
        options = dict(pass_rows=int(rows), piece=int(piece), window=int(window), precise=precise, tiles=True)

        def step(ring, s, t, o):
            return pallas_tpu_sorted.deliver(ring, s, o[0], o[2], None, o[1], jnp.asarray(t, jnp.int32),
                                             shape=(m, n), weighted=False,
                                             interpret=jax.default_backend() != 'tpu', **options)
        return step
    if form.startswith('kernel-'):
        _, precise, piece, window, rows = form.split('-')
        sink = SortedSink(length, n, pass_rows=int(rows), piece=int(piece), window=int(window), precise=precise,
                          tiles=False, interpret=jax.default_backend() != 'tpu')
    else:
        sink = sink_of(form, length, n)

    def step(ring, s, t, o):
        return jax_impl._deliver_layout(ring, s, o[0], o[2], o[1], jnp.asarray(t, jnp.int32), shape=(m, n),
                                        weighted=False, sink=sink)
    return step


def read_of(form, m, n, length, operands):
    """``(init(spikes, ops), run(state, spikes, ops), ops)`` of a form that reads an input each update: the
    state after the spikes rolled by ``-L+1 .. -1``, and ``--loop`` updates from it returning the sum of the
    inputs read; ``ops``, the synapses (arguments, never constants: XLA would fold them into the program)."""
    from eventjax.kernels.delay import pallas_tpu_pull as pp

    if form.startswith('pull-'):
        groups, capacity, *spikes = (int(x) for x in form.split('-')[1:])
        ops = (pp.as_rows(operands[0]), pp.as_rows(operands[2]), jnp.asarray(pp.build_bounds(
            np.asarray(operands[2]), np.asarray(operands[1]), columns=n, length=length, groups=groups)))

        def update(state, s, t, ops):
            table, dropped, acc = state
            inp = pp.pull_input(*ops, table, t, columns=n, groups=groups, capacity=capacity,
                                interpret=jax.default_backend() != 'tpu')
            table, dropped = pp.record(table, dropped, s, t)
            return table, dropped, acc + inp[:n]

        state0 = (*pp.init_spikes(length, spikes[0] if spikes else MAX_SPIKES, m), jnp.zeros(n, jnp.float32))
    elif form in ('read-jax', 'read-pallas'):
        deliver, ops = step_of(form[5:], m, n, length), operands

        def update(state, s, t, ops):
            ring, acc = state
            slot = jnp.mod(t, length)
            acc = acc + ring[slot]
            return deliver(ring.at[slot].set(0), s, t, ops), acc

        state0 = (jnp.zeros((length, n), jnp.float32), jnp.zeros(n, jnp.float32))
    else:
        raise ValueError(f'unknown form {form!r}; the forms: {", ".join(FORMS)}.')

    def init(spikes, ops):
        state = lax.fori_loop(1 - length, 0, lambda i, st: update(st, jnp.roll(spikes, i), i, ops), state0)
        return state[:-1] + (jnp.zeros(n, jnp.float32),)

    def run(state, spikes, ops, loop):
        state = lax.fori_loop(0, loop, lambda i, st: update(st, jnp.roll(spikes, i), i, ops), state)
        # spikes past the rows a step holds were never delivered: NaN, not a smaller sum
        return jnp.where(state[1] > 0, jnp.nan, state[-1]) if form.startswith('pull-') else state[-1]

    return init, run, ops


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--rows', type=int, default=4096)
    p.add_argument('--n', type=int, nargs='+', default=[77169])
    p.add_argument('--k', type=int, default=3872)
    p.add_argument('--ring', type=int, default=64)
    p.add_argument('--spikes', type=int, default=25)
    p.add_argument('--loop', type=int, default=100)
    p.add_argument('--repeats', type=int, default=3)
    p.add_argument('--forms', nargs='+', default=FORMS)
    p.add_argument('--out', default=None)
    args = p.parse_args(argv)
    m, length = args.rows, args.ring
    device = jax.devices()[0].device_kind
    results = []
    for n in args.n:
        operands = synapses(m, n, args.k, length)
        spikes = jnp.zeros(m, bool).at[np.random.default_rng(0).choice(m, args.spikes, replace=False)].set(True)
        ring = jnp.zeros((length, n), jnp.float32)
        refs = {}
        for form in args.forms:
            row = {'device': device, 'form': form, 'rows': m, 'n': n, 'k': args.k, 'ring': length,
                   'spikes': args.spikes}
            if form.startswith(('read-', 'pull-')):
                init, run, ops = read_of(form, m, n, length, operands)
                timed = jax.jit(functools.partial(run, loop=args.loop))
                refs['read'] = measure(row, timed, (jax.jit(init)(spikes, ops), spikes, ops), args.loop,
                                       refs.get('read'), repeats=args.repeats)
            else:
                step = step_of(form, m, n, length)

                def run(ring, spikes, operands, step=step):
                    return lax.fori_loop(0, args.loop, lambda i, r: step(r, jnp.roll(spikes, i), i, operands),
                                         ring)

                refs['ring'] = measure(row, jax.jit(run), (ring, spikes, operands), args.loop, refs.get('ring'),
                                       repeats=args.repeats)
            results.append(row)
    write(args.out, results)

if __name__ == '__main__':
    main()
