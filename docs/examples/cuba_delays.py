"""The CUBA network with heterogeneous synaptic delays, and what they do to its rhythm.

The network of ``cuba.py`` (4,000 leaky integrate-and-fire neurons, 2%
connectivity, Brette et al. 2007), run twice: once with every synapse
delivering one step (0.1 ms) later, as in ``cuba.py``, and once with a delay
per synapse drawn uniformly from 1-5 ms (10-50 steps). Each projection is a
:class:`eventjax.DelayedCSR` (``CSR.with_delays``) delivering into a ring
buffer of ``max delay + 1`` steps; each step a neuron reads its input due
now, the spikes are delivered ahead, and the slot read is cleared::

    n_exc = ring_e[t % L]
    ring_e = W_exc.deliver(ring_e, spikes[:N_E], t)
    ring_e = ring_e.at[t % L].set(0)

Delays in the inhibitory loop let the population oscillate: the script
prints the population rate's coefficient of variation and the frequency of
its spectral peak for both runs, and plots their rates and spectra. The
one-step network runs once (numba where it is installed); the
delayed network runs once per CPU backend (jax, numba, warp) and the spike
trains are checked to be identical: the weights are 1, so the ring holds
spike counts, exact in float32 whatever the summation order.

Run with ``python docs/examples/cuba_delays.py [--duration MS]``.
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
DELAY_MS = (1.0, 5.0)

HERE = pathlib.Path(__file__).parent


def make_network(seed):
    """The two projections (weights 1) with one-step and with uniform 1-5 ms delays, and the initial potentials.

    Returns ``({'one step': (exc, inh), 'uniform': (exc, inh)}, v0)``: the same connections, two sets of delays.
    """
    k_exc, k_inh, k_v, k_de, k_di = jax.random.split(jax.random.key(seed), 5)
    lo, hi = (int(round(d / DT)) for d in DELAY_MS)
    networks = {'one step': [], 'uniform': []}
    for key, k_d, rows in ((k_exc, k_de, N_E), (k_inh, k_di, N_I)):
        csr = ej.random_csr(key, rows, N, P_CONN)
        nnz = int(csr.indptr[-1])
        networks['one step'].append(csr.with_delays(np.ones(nnz, np.int32)))
        networks['uniform'].append(csr.with_delays(np.asarray(jax.random.randint(k_d, (nnz,), lo, hi + 1), np.int32)))
    v0 = V_R + jax.random.uniform(k_v, (N,), jnp.float32) * (V_T - V_R)
    return {k: tuple(v) for k, v in networks.items()}, v0


def simulate(exc, inh, v0, steps, backend):
    """Run ``steps`` steps delivering with ``backend``; return the (steps, N) spike raster and the wall time."""
    a_m, a_e, a_i = (float(np.exp(-DT / tau)) for tau in (TAU_M, TAU_E, TAU_I))
    length = max(exc.ring_length, inh.ring_length)

    def step(state, t):
        v, ge, gi, last, ring_e, ring_i = state
        slot = t % length
        ge = ge * a_e + W_E * ring_e[slot]
        gi = gi * a_i + W_I * ring_i[slot]
        now = t.astype(jnp.float32) * DT
        v_free = E_L + (v - E_L) * a_m + (ge + gi) * (1 - a_m)
        v = jnp.where(now - last < T_REF, v, v_free)
        spike = v > V_T
        v = jnp.where(spike, V_R, v)
        last = jnp.where(spike, now, last)
        ring_e = exc.deliver(ring_e, spike[:N_E], t, backend=backend)
        ring_i = inh.deliver(ring_i, spike[N_E:], t, backend=backend)
        # The slot read is cleared after delivering (a delay >= 1 never lands in it): the read then comes
        # first, so the rings stay updated in place in the scan's carry, never copied.
        ring_e, ring_i = ring_e.at[slot].set(0), ring_i.at[slot].set(0)
        return (v, ge, gi, last, ring_e, ring_i), spike

    @jax.jit
    def run(v0):
        zeros = jnp.zeros(N, jnp.float32)
        init = (v0, zeros, zeros, jnp.full(N, -1e9, jnp.float32), exc.init_ring(length), inh.init_ring(length))
        return jax.lax.scan(step, init, jnp.arange(steps, dtype=jnp.int32))[1]

    compiled = run.lower(v0).compile()
    start = time.perf_counter()
    spikes = np.asarray(jax.block_until_ready(compiled(v0)))
    return spikes, time.perf_counter() - start


def rhythm(spikes):
    """``(rate per 1-ms bin in Hz, CV of that rate, frequency of the spectral peak in Hz, (freqs, power))``."""
    per_bin = int(round(1.0 / DT))
    rate = spikes[: spikes.shape[0] // per_bin * per_bin].reshape(-1, per_bin, N).sum(axis=(1, 2)) / N / 1e-3
    settled = rate[50:] if rate.size > 100 else rate  # past the start-up transient of 50 ms, when run long enough
    power = np.abs(np.fft.rfft(settled - settled.mean())) ** 2
    freqs = np.fft.rfftfreq(settled.size, d=1e-3)
    band = freqs >= 5
    peak = float(freqs[band][np.argmax(power[band])]) if band.any() else float('nan')
    return rate, float(settled.std() / max(settled.mean(), 1e-9)), peak, (freqs, power)


def plot(results, path):
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 5.5))
    for label, (rate, cv, peak, (freqs, power)) in results.items():
        top.plot(np.arange(rate.size), rate, lw=0.8, label=f'{label}: CV {cv:.2f}')
        bottom.semilogy(freqs[1:], power[1:] + 1e-9, lw=0.8, label=f'{label}: peak {peak:.0f} Hz')
    top.set(xlabel='time (ms)', ylabel='population rate (Hz)', title='CUBA, 4,000 neurons: delays and rhythm')
    bottom.set(xlabel='frequency (Hz)', ylabel='power of the rate', xlim=(0, 200))
    top.legend(loc='upper right', fontsize=8)
    bottom.legend(loc='upper right', fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def cpu_backends():
    """The CPU backends of the delivery operator that can run here."""
    status = ej.backends_available()
    return [b for b in ('jax', 'numba', 'warp') if b in status and status[b]['cpu'].available]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--duration', type=float, default=500.0, help='model time in ms (default 500)')
    parser.add_argument('--backends', nargs='+', help='default: jax, numba and warp where they run')
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--plot', default=str(HERE / 'cuba_delays.png'), help='output PNG ("" for none)')
    args = parser.parse_args(argv)
    if args.plot and importlib.util.find_spec('matplotlib') is None:
        parser.error("--plot needs matplotlib: pip install 'eventjax[plot]', or pass --plot ''")
    steps = int(round(args.duration / DT))
    backends = args.backends or cpu_backends()
    print(f'CUBA with delays: {N} neurons, {args.duration:.0f} ms at dt={DT} ms')

    summary = {}
    networks, v0 = make_network(args.seed)
    # The one-step run is only the comparison: it runs once, on the fastest backend here.
    fastest = 'numba' if 'numba' in backends else backends[0]
    spikes, wall = simulate(*networks['one step'], v0, steps, fastest)
    summary['delay 0.1 ms'] = rhythm(spikes)
    print(f'  delay 0.1 ms     {fastest:<6} rate {spikes.sum() / N / (args.duration * 1e-3):5.2f} Hz  '
          f'CV {summary["delay 0.1 ms"][1]:.2f}  peak {summary["delay 0.1 ms"][2]:5.1f} Hz  wall {wall:5.2f} s')

    exc, inh = networks['uniform']
    trains = {}
    for backend in backends:
        spikes, wall = simulate(exc, inh, v0, steps, backend)
        trains[backend] = spikes
        _, cv, peak, _ = rhythm(spikes)
        print(f'  delay 1-5 ms     {backend:<6} rate {spikes.sum() / N / (args.duration * 1e-3):5.2f} Hz  '
              f'CV {cv:.2f}  peak {peak:5.1f} Hz  wall {wall:5.2f} s')
    first, *others = trains
    summary['delay 1-5 ms'] = rhythm(trains[first])
    same = all(np.array_equal(trains[first], trains[b]) for b in others)
    print(f'  same spike trains on {", ".join(trains)}: {same}')
    if args.plot:
        plot(summary, args.plot)
        print(f'  plot saved to {args.plot}')
    return 0 if same else 1


if __name__ == '__main__':
    raise SystemExit(main())
