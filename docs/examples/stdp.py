"""Additive STDP makes the input weights bimodal (Song, Miller & Abbott 2000, Nature Neuroscience 3:919).

One conductance-based integrate-and-fire neuron receives 1,000 excitatory
Poisson inputs through plastic synapses and 200 inhibitory ones through
fixed synapses. Pair-based additive STDP with exponential traces: a
presynaptic spike depresses its synapse by the postsynaptic trace
(``eventjax.dense_on_pre``), a postsynaptic spike potentiates every synapse
by its presynaptic trace (``eventjax.dense_on_post``), and the weights are
bounded to ``[0, g_max]``. Depression slightly outweighs potentiation
(``A- / A+ = 1.05``): the synapses compete, and the weights split into two
groups, near 0 and near ``g_max``, while the output rate settles.

The weights are a ``(1000, 1)`` matrix in the carry of a jitted
``lax.scan``; the updates touch only the rows (columns) of the neurons that
fired, in place.

Run ``python docs/examples/stdp.py [seconds] [plot.png]``.
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


def simulate(seconds: float, *, seed: int = 0, rate_hz: float = 10.0, a_plus: float = A_PLUS, dt: float = 0.5,
             chunk_ms: float = 1000.0):
    """Train for ``seconds``; returns ``(initial weights, final weights, output rate per chunk in Hz)``.

    Weights are in units of ``G_MAX`` (in ``[0, 1]``). The input spikes of
    each chunk are drawn with NumPy (seeded) and fed to the scan.
    """
    rng = np.random.default_rng(seed)
    w0 = jnp.asarray(rng.uniform(0.0, G_MAX, (N_EX, 1)), jnp.float32)
    p_ex, p_in = rate_hz * dt * 1e-3, 10.0 * dt * 1e-3
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
        # Traces in units of G_MAX: P rises by A+ at each presynaptic spike, M falls by A- at each output spike.
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
        pre = rng.random((steps, N_EX), np.float32) < p_ex
        n_in = rng.binomial(N_IN, p_in, steps).astype(np.float32)
        carry, count = chunk(carry, pre, n_in)
        rates.append(float(count) / (chunk_ms / 1000))
    return np.asarray(w0[:, 0]) / G_MAX, np.asarray(carry[0][:, 0]) / G_MAX, np.asarray(rates)


def bimodal_fraction(w, margin: float = 0.1) -> float:
    """The fraction of weights (in units of ``G_MAX``) within ``margin`` of 0 or of 1."""
    w = np.asarray(w)
    return float(np.mean((w <= margin) | (w >= 1 - margin)))


def plot(w_before, w_after, rates, path):
    import matplotlib  # noqa: PLC0415

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt  # noqa: PLC0415

    fig, axes = plt.subplots(1, 3, figsize=(12, 3.4))
    axes[0].hist(w_before, bins=40, range=(0, 1), color='0.5')
    axes[0].set(title='weights before', xlabel='w / g_max', ylabel='synapses')
    axes[1].hist(w_after, bins=40, range=(0, 1), color='C0')
    axes[1].set(title=f'after: {bimodal_fraction(w_after):.0%} within 10% of 0 or g_max', xlabel='w / g_max')
    axes[2].plot(np.arange(1, len(rates) + 1), rates, color='C1')
    axes[2].set(title='output rate', xlabel='time (s)', ylabel='Hz', ylim=(0, None))
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == '__main__':
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 200.0
    before, after, rates = simulate(seconds)
    print(f'{seconds:.0f} s trained: {bimodal_fraction(after):.1%} of the weights within 10% of 0 or g_max; '
          f'output rate {rates[:5].mean():.1f} Hz in the first 5 s, {rates[-5:].mean():.1f} Hz in the last 5 s')
    if len(sys.argv) > 2:
        plot(before, after, rates, sys.argv[2])
