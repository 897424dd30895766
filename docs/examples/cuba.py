"""The CUBA benchmark network of Brette et al. (2007), on the event-driven CSR path.

Benchmark 2 of "Simulation of networks of spiking neurons: a review of tools
and strategies" (J. Comput. Neurosci. 23:349, 2007), after Vogels & Abbott
(2005): 4,000 leaky integrate-and-fire neurons (3,200 excitatory, 800
inhibitory), each pair connected with probability 2%, exponential synaptic
currents. The resting potential (-49 mV) lies above the threshold (-50 mV),
so the network fires without external input; recurrent inhibition keeps the
rate low. Parameters are the published ones:

    tau_m = 20 ms, tau_e = 5 ms, tau_i = 10 ms, V_t = -50 mV, V_r = -60 mV,
    E_l = -49 mV, refractory 5 ms, w_e = 1.62 mV, w_i = -9 mV,
    V(0) uniform in [V_r, V_t].

Each step (dt = 0.1 ms) the spike vector goes through ``binary_csrmv`` with
``transpose=True`` (presynaptic events into postsynaptic input), which on
the event-driven backends costs events x connections per row. The network
runs once per CPU backend that ``binary_csrmv`` has here; the script prints
the firing rate and wall time of each and checks that all spike trains are
identical. They are, bit for bit: the matrices hold weight 1, so each step's
product counts arriving spikes -- small integers, exact in float32 whatever
order a backend sums in -- and the synaptic weight multiplies the count
afterwards, identically everywhere.

Run with ``make demo`` or ``python docs/examples/cuba.py [--duration MS]``.
"""

from __future__ import annotations

import argparse
import importlib.util
import pathlib
import time

import jax
import jax.numpy as jnp
import numpy as np

import eventjax as ej

N_E, N_I = 3200, 800
N = N_E + N_I
P_CONN = 0.02
DT = 0.1  # ms
TAU_M, TAU_E, TAU_I, T_REF = 20.0, 5.0, 10.0, 5.0  # ms
V_T, V_R, E_L = -50.0, -60.0, -49.0  # mV
W_E, W_I = 60 * 0.27 / 10, -20 * 4.5 / 10  # mV

HERE = pathlib.Path(__file__).parent


def make_network(seed=0):
    """The two projections (excitatory and inhibitory rows, weights all 1) and the initial potentials."""
    k_exc, k_inh, k_v = jax.random.split(jax.random.key(seed), 3)
    exc = ej.random_csr(k_exc, N_E, N, P_CONN)
    inh = ej.random_csr(k_inh, N_I, N, P_CONN)
    v0 = V_R + jax.random.uniform(k_v, (N,), jnp.float32) * (V_T - V_R)
    return (exc.data, exc.indices, exc.indptr), (inh.data, inh.indices, inh.indptr), v0


def simulate(exc, inh, v0, steps, backend):
    """Run ``steps`` steps with ``backend`` for ``binary_csrmv``; return the (steps, N) spike raster."""
    a_m, a_e, a_i = (float(np.exp(-DT / tau)) for tau in (TAU_M, TAU_E, TAU_I))

    def step(state, t):
        v, ge, gi, last = state
        # Exact for constant input over the step (the synaptic currents are
        # updated at step ends, like a clock-driven simulator).
        v_free = E_L + (v - E_L) * a_m + (ge + gi) * (1 - a_m)
        v = jnp.where(t - last < T_REF, v, v_free)
        spike = v > V_T
        v = jnp.where(spike, V_R, v)
        last = jnp.where(spike, t, last)
        n_exc = ej.binary_csrmv(*exc, spike[:N_E], shape=(N_E, N), transpose=True, backend=backend)
        n_inh = ej.binary_csrmv(*inh, spike[N_E:], shape=(N_I, N), transpose=True, backend=backend)
        ge = ge * a_e + W_E * n_exc
        gi = gi * a_i + W_I * n_inh
        return (v, ge, gi, last), spike

    @jax.jit
    def run(v0):
        zeros = jnp.zeros(N, jnp.float32)
        init = (v0, zeros, zeros, jnp.full(N, -1e9, jnp.float32))
        times = jnp.arange(steps, dtype=jnp.float32) * DT
        return jax.lax.scan(step, init, times)[1]

    compiled = run.lower(v0).compile()
    start = time.perf_counter()
    spikes = np.asarray(jax.block_until_ready(compiled(v0)))
    return spikes, time.perf_counter() - start


def cpu_backends():
    """The backends ``binary_csrmv`` has on the CPU that can run here."""
    status = ej.backends_available()
    return [b for b in ej.primitives()['binary_csrmv']['cpu'] if status[b]['cpu'].available]


def raster(spikes, path, title):
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    t, i = np.nonzero(spikes)
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 5), sharex=True, height_ratios=(3, 1))
    top.plot(t * DT, i, ',k')
    top.axhline(N_E, color='tab:red', lw=0.5)
    top.set(ylabel='neuron (inhibitory above the line)', title=title)
    rate = spikes.reshape(-1, 10, N).sum(axis=(1, 2)) / N / (10 * DT * 1e-3)
    bottom.plot(np.arange(rate.size) * 10 * DT, rate, color='k', lw=0.8)
    bottom.set(xlabel='time (ms)', ylabel='rate (Hz)')
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--duration', type=float, default=1000.0, help='model time in ms (default 1000)')
    parser.add_argument('--backends', nargs='+', help='default: every CPU backend binary_csrmv has here')
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--raster', default=str(HERE / 'cuba_raster.png'), help='output PNG ("" for none)')
    args = parser.parse_args(argv)
    if args.raster and importlib.util.find_spec('matplotlib') is None:
        # Say so now, not after the whole simulation.
        parser.error("--raster needs matplotlib: pip install 'eventjax[plot]', or pass --raster ''")

    steps = int(round(args.duration / DT))
    exc, inh, v0 = make_network(args.seed)
    nnz = int(exc[2][-1] + inh[2][-1])
    print(f'CUBA: {N} neurons ({N_E} exc, {N_I} inh), {nnz} synapses ({nnz / N:.0f} per neuron), '
          f'{args.duration:.0f} ms at dt={DT} ms')
    results = {}
    for backend in args.backends or cpu_backends():
        spikes, wall = simulate(exc, inh, v0, steps, backend)
        rate = spikes.sum() / N / (args.duration * 1e-3)
        exc_rate = spikes[:, :N_E].sum() / N_E / (args.duration * 1e-3)
        inh_rate = spikes[:, N_E:].sum() / N_I / (args.duration * 1e-3)
        print(f'  {backend:<6} rate {rate:5.2f} Hz (exc {exc_rate:5.2f}, inh {inh_rate:5.2f})  '
              f'wall {wall:6.2f} s ({wall / steps * 1e6:.0f} us/step)')
        results[backend] = spikes
    first, *others = results
    same = all(np.array_equal(results[first], results[b]) for b in others)
    print(f'  same spike trains on all backends: {same}' + ('' if others else ' (one backend only)'))
    if args.raster:
        raster(results[first], args.raster, f'CUBA, {N} neurons, backend {first!r}')
        print(f'  raster plot saved to {args.raster}')
    return 0 if same else 1


if __name__ == '__main__':
    raise SystemExit(main())
