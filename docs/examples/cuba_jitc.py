"""The CUBA network of ``cuba.py`` at 1,000,000 neurons, with just-in-time connectivity.

The same leaky integrate-and-fire E/I network (Brette et al. 2007, benchmark
2; parameters in ``cuba.py``) with the same per-neuron statistics: 80% of
the neurons excitatory, every neuron receiving on average 80 connections
(64 excitatory, 16 inhibitory; ``prob = 80 / N``). The connectivity is two
:class:`eventjax.JITCMatrix` objects, never stored: each step's spikes go
through ``spikes @ A`` (the event-driven ``binary_jitcmv``), which
regenerates only the rows of the neurons that fired. At 1,000,000 neurons
the network has 8 * 10**7 synapses (~640 MB as CSR); here memory holds only
the neuron state.

The script runs the large network and the 4,000-neuron one, and prints the
firing rates of both, simulated seconds per wall second and peak memory.
One run here (100 ms, numba, a 2-core machine shared with other jobs, load
about 15, so wall times are several times what an idle machine gives):
4,000 neurons 5.96 Hz (exc 5.94, inh 6.04); 1,000,000 neurons 6.22 Hz (exc
6.22, inh 6.20), 0.0004 simulated s per wall s (236 s wall for 100 ms);
peak resident memory of the whole process 405 MB.

Run with ``python docs/examples/cuba_jitc.py [--neurons N] [--duration MS]``.
"""

from __future__ import annotations

import argparse
import resource
import time

import jax
import jax.numpy as jnp
import numpy as np

import eventjax as ej

CONN_PER_NEURON = 80
DT = 0.1  # ms
TAU_M, TAU_E, TAU_I, T_REF = 20.0, 5.0, 10.0, 5.0  # ms
V_T, V_R, E_L = -50.0, -60.0, -49.0  # mV
W_E, W_I = 60 * 0.27 / 10, -20 * 4.5 / 10  # mV


def simulate(n, steps, *, seed=0, backend='numba'):
    """Run ``steps`` steps of an ``n``-neuron network.

    Returns the ``(steps, 2)`` spike counts (excitatory, inhibitory), the
    wall time and the CPU time of the process (all threads) in seconds.
    """
    n_e = n * 4 // 5
    prob = CONN_PER_NEURON / n
    exc = ej.JITCMatrix(1.0, prob=prob, seed=2 * seed, shape=(n_e, n), backend=backend)
    inh = ej.JITCMatrix(1.0, prob=prob, seed=2 * seed + 1, shape=(n - n_e, n), backend=backend)
    v0 = jnp.asarray(V_R + np.random.default_rng(seed).random(n) * (V_T - V_R), jnp.float32)
    a_m, a_e, a_i = (float(np.exp(-DT / tau)) for tau in (TAU_M, TAU_E, TAU_I))

    def step(state, t):
        v, ge, gi, last = state
        v_free = E_L + (v - E_L) * a_m + (ge + gi) * (1 - a_m)
        v = jnp.where(t - last < T_REF, v, v_free)
        spike = v > V_T
        v = jnp.where(spike, V_R, v)
        last = jnp.where(spike, t, last)
        ge = ge * a_e + W_E * (ej.EventArray(spike[:n_e]) @ exc)
        gi = gi * a_i + W_I * (ej.EventArray(spike[n_e:]) @ inh)
        return (v, ge, gi, last), jnp.stack([spike[:n_e].sum(), spike[n_e:].sum()])

    @jax.jit
    def run(v0):
        zeros = jnp.zeros(n, jnp.float32)
        init = (v0, zeros, zeros, jnp.full(n, -1e9, jnp.float32))
        return jax.lax.scan(step, init, jnp.arange(steps, dtype=jnp.float32) * DT)[1]

    compiled = run.lower(v0).compile()
    start, cpu = time.perf_counter(), time.process_time()
    counts = np.asarray(jax.block_until_ready(compiled(v0)))
    return counts, time.perf_counter() - start, time.process_time() - cpu


def report(n, counts, wall, cpu, duration_ms):
    n_e = n * 4 // 5
    seconds = duration_ms * 1e-3
    exc, inh = counts[:, 0].sum() / n_e / seconds, counts[:, 1].sum() / (n - n_e) / seconds
    rate = counts.sum() / n / seconds
    print(f'  N={n:>9,}: rate {rate:5.2f} Hz (exc {exc:5.2f}, inh {inh:5.2f}); '
          f'{seconds / wall:.4f} simulated s per wall s ({wall:.1f} s wall, {cpu:.1f} s CPU)')


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--neurons', type=int, default=1_000_000)
    parser.add_argument('--duration', type=float, default=100.0, help='model time in ms (default 100)')
    parser.add_argument('--backend', default='numba')
    args = parser.parse_args(argv)
    steps = int(round(args.duration / DT))
    print(f'CUBA with JITC connectivity, {CONN_PER_NEURON} connections per neuron, {args.duration:.0f} ms, '
          f'dt={DT} ms, backend {args.backend!r}')
    for n in (4000, args.neurons):
        counts, wall, cpu = simulate(n, steps, backend=args.backend)
        report(n, counts, wall, cpu, args.duration)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f'  peak resident memory of the process: {peak:.0f} MB')
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
