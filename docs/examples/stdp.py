"""Additive STDP makes the input weights bimodal (Song, Miller & Abbott 2000, Nature Neuroscience 3:919).

One conductance-based integrate-and-fire neuron receives 1,000 excitatory
Poisson inputs (10 to 40 Hz) through plastic synapses and 200 inhibitory
ones (10 Hz) through fixed synapses. Pair-based additive STDP with
exponential traces: a presynaptic spike depresses its synapse by the
postsynaptic trace (``eventjax.dense_on_pre``), a postsynaptic spike
potentiates every synapse by its presynaptic trace
(``eventjax.dense_on_post``), and the weights are bounded to ``[0, g_max]``.
Depression slightly outweighs potentiation (``A- / A+ = 1.05``): the synapses
compete, the weights split into two groups, near 0 and near ``g_max``, and
the output rate settles at about the same value whatever the input rate
(fewer synapses stay strong when the inputs fire faster).

The weights are a ``(1000, 1)`` matrix in the carry of a jitted
``lax.scan``; the updates touch only the rows (columns) of the neurons that
fired, in place.

Run ``python docs/examples/stdp.py [seconds per input rate] [plot.png]``.
"""

from __future__ import annotations

import sys

import jax
import jax.numpy as jnp
import numpy as np

import eventjax as ej

# Song, Miller & Abbott (2000): conductances in units of the leak conductance, times in ms.
N_EX, N_IN = 1000, 200
TAU_M, V_REST, V_TH, V_RESET = 20.0, -70.0, -54.0, -60.0
E_EX, E_IN, TAU_EX, TAU_IN = 0.0, -70.0, 5.0, 5.0
G_MAX, G_IN = 0.015, 0.05
TAU_PLUS = TAU_MINUS = 20.0
A_PLUS, RATIO = 0.005, 1.05  # A- = RATIO * A+
RATE_IN = 10.0  # Hz, the inhibitory inputs; the excitatory ones run at 10 to 40 Hz
DT = 1.0  # ms
INPUT_RATES = (10.0, 20.0, 40.0)  # Hz, the paper's range


def poisson_grid(rng, steps: int, n: int, p: float) -> np.ndarray:
    """A ``(steps, n)`` bool array, each entry ``True`` with probability ``p`` independently.

    Drawn as the geometric gaps between successive spikes of the flattened
    grid (the same law as ``rng.random((steps, n)) < p``), which costs a
    draw per spike rather than per entry: about 25 times fewer at 40 Hz.
    """
    total = steps * n
    flat = np.zeros(total, bool)
    if p <= 0 or total == 0:
        return flat.reshape(steps, n)
    at = np.cumsum(rng.geometric(p, int(total * p + 6 * np.sqrt(total * p) + 16))) - 1
    while at[-1] < total:  # rarely: the draw fell short of the grid's end
        at = np.concatenate([at, at[-1] + np.cumsum(rng.geometric(p, 64))])
    flat[at[at < total]] = True
    return flat.reshape(steps, n)


def simulate(seconds: float, *, seed: int = 0, rate_hz: float = 40.0, a_plus: float = A_PLUS, dt: float = DT,
             chunk_ms: float = 1000.0):
    """Train for ``seconds`` at input rate ``rate_hz``; returns ``(initial weights, final weights, rate per chunk)``.

    Weights are in units of ``G_MAX`` (in ``[0, 1]``), drawn uniformly at
    the start; the output rate is in Hz, one value per chunk. The input
    spikes of each chunk are drawn with NumPy (seeded) and fed to the scan.
    """
    rng = np.random.default_rng(seed)
    w0 = jnp.asarray(rng.uniform(0.0, G_MAX, (N_EX, 1)), jnp.float32)
    p_ex, p_in = rate_hz * dt * 1e-3, RATE_IN * dt * 1e-3
    d_plus, d_minus = np.exp(-dt / TAU_PLUS), np.exp(-dt / TAU_MINUS)
    d_ex, d_in = np.exp(-dt / TAU_EX), np.exp(-dt / TAU_IN)
    a_minus = RATIO * a_plus

    def step(carry, inputs):
        w, v, g_ex, g_in, pre_trace, post_trace = carry
        pre, n_in = inputs
        g_ex = g_ex * d_ex + ej.binary_densemv(w, pre, transpose=True)[0]
        g_in = g_in * d_in + G_IN * n_in
        v = v + dt / TAU_M * (V_REST - v + g_ex * (E_EX - v) + g_in * (E_IN - v))
        fired = v >= V_TH
        v = jnp.where(fired, V_RESET, v)
        # Traces in units of G_MAX: P rises by A+ at each presynaptic spike, M falls by A- at each output
        # spike. A pre and a post spike in the same step count as both orders (their times are unresolved
        # within dt): the pair adds A+ - A-, about nothing, rather than biasing the rule either way.
        pre_trace = pre_trace * d_plus + a_plus * pre.astype(jnp.float32)
        post_trace = post_trace * d_minus - a_minus * fired.astype(jnp.float32)
        w = ej.dense_on_pre(w, pre, G_MAX * post_trace[None], 0.0, G_MAX)     # depression, on input spikes
        w = ej.dense_on_post(w, G_MAX * pre_trace, fired[None], 0.0, G_MAX)   # potentiation, on output spikes
        return (w, v, g_ex, g_in, pre_trace, post_trace), fired

    @jax.jit
    def chunk(carry, pre, n_in):
        carry, fired = jax.lax.scan(step, carry, (pre, n_in))
        return carry, jnp.sum(fired)

    steps = int(round(chunk_ms / dt))
    carry = (w0, jnp.float32(V_REST), jnp.float32(0), jnp.float32(0), jnp.zeros(N_EX, jnp.float32),
             jnp.zeros((), jnp.float32))
    rates = []
    for _ in range(int(round(seconds * 1000 / chunk_ms))):
        pre = poisson_grid(rng, steps, N_EX, p_ex)
        n_in = rng.binomial(N_IN, p_in, steps).astype(np.float32)
        carry, count = chunk(carry, pre, n_in)
        rates.append(float(count) / (chunk_ms / 1000))
    return np.asarray(w0[:, 0]) / G_MAX, np.asarray(carry[0][:, 0]) / G_MAX, np.asarray(rates)


def bimodal_fraction(w, margin: float = 0.1) -> float:
    """The fraction of weights (in units of ``G_MAX``) within ``margin`` of 0 or of 1."""
    w = np.asarray(w)
    return float(np.mean((w <= margin) | (w >= 1 - margin)))


def plot(runs, path):
    """``runs``: ``{input rate: (w_before, w_after, rates)}``; histograms, output rate over time, rate vs input."""
    import matplotlib  # noqa: PLC0415

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt  # noqa: PLC0415

    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
    first = next(iter(runs.values()))
    axes[0].hist(first[0], bins=40, range=(0, 1), color='0.7', label='before')
    for k, (rate, (_, after, _)) in enumerate(runs.items()):
        axes[0].hist(after, bins=40, range=(0, 1), histtype='step', lw=1.5, color=f'C{k}',
                     label=f'after, {rate:.0f} Hz in: {bimodal_fraction(after):.0%} near 0 or g_max')
    axes[0].set(title='weights', xlabel='w / g_max', ylabel='synapses', yscale='log')
    axes[0].legend(fontsize=7)
    for k, (rate, (_, _, rates)) in enumerate(runs.items()):
        window = min(20, len(rates))  # seconds: a running mean, since one second holds only ~10 output spikes
        smooth = np.convolve(rates, np.ones(window) / window, mode='valid')
        axes[1].plot(np.arange(window, len(rates) + 1), smooth, color=f'C{k}', lw=1, label=f'{rate:.0f} Hz in')
    axes[1].set(title=f'output rate during training ({window} s mean)', xlabel='time (s)', ylabel='Hz',
                ylim=(0, 40))
    axes[1].legend(fontsize=7)
    inputs = list(runs)
    axes[2].plot(inputs, [np.mean(r[-100:]) for _, _, r in runs.values()], 'o-', color='k', label='after STDP')
    axes[2].plot(inputs, [r[0] for _, _, r in runs.values()], 's--', color='0.6', label='first second')
    axes[2].set(title='output rate vs input rate', xlabel='input rate (Hz)', ylabel='output rate (Hz)',
                yscale='log')
    axes[2].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)


if __name__ == '__main__':
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3000.0
    runs = {}
    for rate in INPUT_RATES:
        runs[rate] = simulate(seconds, rate_hz=rate)
        _, after, rates = runs[rate]
        print(f'{rate:.0f} Hz inputs, {seconds:.0f} s trained: {bimodal_fraction(after):.1%} of the weights within '
              f'10% of 0 or g_max ({np.mean(after >= 0.9):.1%} near g_max); output rate {rates[0]:.0f} Hz in the '
              f'first second, {rates[-100:].mean():.1f} Hz over the last 100 s', flush=True)
    if len(sys.argv) > 2:
        plot(runs, sys.argv[2])
