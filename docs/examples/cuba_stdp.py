"""The CUBA network with STDP on its excitatory synapses: what learning costs per step.

The network of ``cuba.py`` (4,000 leaky integrate-and-fire neurons, 2%
connectivity, Brette et al. 2007) with the 256,000 excitatory synapses made
plastic: each holds its own weight (``W_E`` at the start, bounded to
``[0, 2 W_E]``) and learns by additive pair-based STDP with exponential
traces (tau 20 ms, ``A+ = 1% of W_E``, ``A- = 1.05 A+``, as in Song, Miller &
Abbott 2000). Each step, after the spikes are delivered::

    w = ej.csr_on_pre(w, idx, ptr, spike[:N_E], -A_MINUS * post_trace, 0.0, W_MAX)        # depression
    w = ej.csr2csc_on_post(w, *column_view, A_PLUS * pre_trace, spike, 0.0, W_MAX)        # potentiation

Both updates visit only the synapses of the neurons that fired (rows on
pre, columns through the column view on post), in place in the carry of the
jitted ``lax.scan``. The script runs the same network with and without the
two updates, per backend, and prints the microseconds per step of each
(compilation excluded), the firing rates and how far the weights moved. The
learning run is short: it shows the cost, not a learned state.

Run with ``python docs/examples/cuba_stdp.py [--duration MS] [--backends numba jax]``.
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

HERE = pathlib.Path(__file__).parent


def _cuba():
    spec = importlib.util.spec_from_file_location('cuba', HERE / 'cuba.py')
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


cuba = _cuba()
N_E, N = cuba.N_E, cuba.N
TAU_STDP = 20.0  # ms, both traces
W_MAX = 2 * cuba.W_E  # mV
A_PLUS = 0.01 * cuba.W_E
A_MINUS = 1.05 * A_PLUS


def make_run(exc, inh, steps, backend, learn):
    """The jitted ``run(w, v0) -> (w, spike raster)`` of ``steps`` steps; ``w`` is donated (updated in place).

    ``exc`` is ``(weights, indices, indptr)`` with one weight per synapse
    (mV); ``learn`` adds the two STDP updates to every step.
    """
    _, idx, ptr = exc
    view = ej.csr_column_view(idx, ptr, shape=(N_E, N))
    a_m, a_e, a_i, a_s = (float(np.exp(-cuba.DT / tau)) for tau in (cuba.TAU_M, cuba.TAU_E, cuba.TAU_I, TAU_STDP))

    def step(state, t):
        w, v, ge, gi, last, pre_trace, post_trace = state
        v_free = cuba.E_L + (v - cuba.E_L) * a_m + (ge + gi) * (1 - a_m)
        v = jnp.where(t - last < cuba.T_REF, v, v_free)
        spike = v > cuba.V_T
        v = jnp.where(spike, cuba.V_R, v)
        last = jnp.where(spike, t, last)
        if learn:
            pre_trace = pre_trace * a_s + spike[:N_E].astype(jnp.float32)
            post_trace = post_trace * a_s + spike.astype(jnp.float32)
            w = ej.csr_on_pre(w, idx, ptr, spike[:N_E], -A_MINUS * post_trace, 0.0, W_MAX, shape=(N_E, N),
                              backend=backend)
            w = ej.csr2csc_on_post(w, *view, A_PLUS * pre_trace, spike, 0.0, W_MAX, shape=(N_E, N),
                                   backend=backend)
        # Learn first, then deliver with the updated weights: the product reads the updates' result, so XLA
        # orders the in-place updates before it. Read first, the weights would be copied twice per step.
        # The excitatory weights are in mV already; the inhibitory matrix holds 1s (a spike count).
        ge = ge * a_e + ej.binary_csrmv(w, idx, ptr, spike[:N_E], shape=(N_E, N), transpose=True, backend=backend)
        gi = gi * a_i + cuba.W_I * ej.binary_csrmv(*inh, spike[N_E:], shape=(cuba.N_I, N), transpose=True,
                                                   backend=backend)
        return (w, v, ge, gi, last, pre_trace, post_trace), spike

    def run(w, v0):
        zeros = jnp.zeros(N, jnp.float32)
        init = (w, v0, zeros, zeros, jnp.full(N, -1e9, jnp.float32), jnp.zeros(N_E, jnp.float32), zeros)
        times = jnp.arange(steps, dtype=jnp.float32) * cuba.DT
        state, spikes = jax.lax.scan(step, init, times)
        return state[0], spikes

    return jax.jit(run, donate_argnums=0)


def simulate(exc, inh, v0, steps, backend, learn):
    """Run ``steps`` steps; returns ``(spike raster, final excitatory weights, wall seconds)``."""
    compiled = make_run(exc, inh, steps, backend, learn).lower(exc[0], v0).compile()
    w0 = jnp.array(exc[0])  # a copy: the run consumes (donates) its weights
    start = time.perf_counter()
    w, spikes = jax.block_until_ready(compiled(w0, v0))
    return np.asarray(spikes), np.asarray(w), time.perf_counter() - start


def make_network(seed=0):
    """``cuba.py``'s network, its excitatory weights made one float per synapse (``W_E`` mV each)."""
    (data, idx, ptr), inh, v0 = cuba.make_network(seed)
    return (jnp.full(idx.shape, cuba.W_E, jnp.float32), idx, ptr), inh, v0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--duration', type=float, default=1000.0, help='model time in ms (default 1000)')
    parser.add_argument('--backends', nargs='+', default=['numba'], help='default: numba')
    parser.add_argument('--seed', type=int, default=0)
    args = parser.parse_args(argv)
    steps = int(round(args.duration / cuba.DT))
    exc, inh, v0 = make_network(args.seed)
    print(f'CUBA + STDP: {N} neurons, {int(exc[2][-1])} plastic excitatory synapses, {args.duration:.0f} ms at '
          f'dt={cuba.DT} ms')
    results = {}
    for backend in args.backends:
        for learn in (False, True):
            spikes, w, wall = simulate(exc, inh, v0, steps, backend, learn)
            rate = spikes.sum() / N / (args.duration * 1e-3)
            moved = np.mean(w != np.asarray(exc[0]))
            print(f'  {backend:<6} {"with" if learn else "without":<7} learning: {wall / steps * 1e6:7.0f} us/step  '
                  f'rate {rate:5.2f} Hz  weights changed {moved:6.1%}  mean {w.mean():.3f} mV')
            results[backend, learn] = wall / steps, w
        static, plastic = results[backend, False][0], results[backend, True][0]
        print(f'  {backend:<6} learning costs {plastic / static:.2f}x the step without it')
    return results


if __name__ == '__main__':
    main()
