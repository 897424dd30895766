"""The CUBA network of ``cuba.py`` written with brainstate's ``EventFixedProb`` and brainunit units.

The model is the one of ``cuba.py`` (Brette et al. 2007, benchmark 2), with
potentials, currents and times as brainunit quantities and the two
projections as ``brainstate.nn.EventFixedProb`` layers: 80 targets per
presynaptic neuron (2% of 4,000), drawn by brainstate, each synapse
``1 mV``, so each step's product counts arriving spikes in mV -- small
integers, exact in float32 in any order -- and the synaptic weight scales
the count afterwards, as in ``cuba.py``.

brainstate imports brainevent by name; this script opts in with
``eventjax.compat.brainevent.install`` so the same brainstate code runs on
eventjax. For each CPU backend it runs the network and checks that the spike
trains equal those of ``cuba.py``'s own simulation (plain eventjax, no units)
on the same connectivity. ``--brainevent`` runs the same brainstate model
on the real brainevent instead (no opt-in; ``pip install brainevent==0.2.1``)
for the time per step side by side.

Run with ``python docs/examples/cuba_brainstate.py [--duration MS] [--brainevent]``;
needs ``pip install 'eventjax[brainstate]'``.
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time

import brainunit as u
import jax
import jax.numpy as jnp
import numpy as np

import eventjax as ej

HERE = pathlib.Path(__file__).parent
sys.path.insert(0, str(HERE))
import cuba  # noqa: E402  (the model's parameters and its plain-eventjax simulation)


def _opt_in(use_brainevent: bool):
    """Make brainstate's ``import brainevent`` resolve to eventjax, unless the real brainevent is wanted."""
    if not use_brainevent:
        import eventjax.compat.brainevent as compat

        compat.install(replace_installed=True)


def build(seed: int):
    """The two projections as brainstate layers (weights 1 mV) and the initial potentials (mV)."""
    # Imported only now, after the opt-in: brainstate imports brainevent when it is imported.
    import brainstate

    exc = brainstate.nn.EventFixedProb(cuba.N_E, cuba.N, cuba.P_CONN, 1.0 * u.mV, seed=seed)
    inh = brainstate.nn.EventFixedProb(cuba.N_I, cuba.N, cuba.P_CONN, 1.0 * u.mV, seed=seed + 1)
    v0 = cuba.V_R + jax.random.uniform(jax.random.key(seed), (cuba.N,), jnp.float32) * (cuba.V_T - cuba.V_R)
    return exc, inh, v0 * u.mV


def simulate(exc, inh, v0, steps):
    """Run ``steps`` steps of the brainstate model; return the (steps, N) spike raster and the wall time."""
    a_m, a_e, a_i = (float(np.exp(-cuba.DT / tau)) for tau in (cuba.TAU_M, cuba.TAU_E, cuba.TAU_I))
    e_l, v_t, v_r = cuba.E_L * u.mV, cuba.V_T * u.mV, cuba.V_R * u.mV
    t_ref = cuba.T_REF * u.ms

    def step(state, t):
        v, ge, gi, last = state
        v_free = e_l + (v - e_l) * a_m + (ge + gi) * (1 - a_m)
        v = u.math.where(t - last < t_ref, v, v_free)
        spike = v > v_t
        v = u.math.where(spike, v_r, v)
        last = u.math.where(spike, t, last)
        ge = ge * a_e + cuba.W_E * exc(spike[:cuba.N_E])   # spike counts in mV, scaled by w_e
        gi = gi * a_i + cuba.W_I * inh(spike[cuba.N_E:])
        return (v, ge, gi, last), spike

    @jax.jit
    def run(v0):
        zeros = jnp.zeros(cuba.N, jnp.float32) * u.mV
        init = (v0, zeros, zeros, jnp.full(cuba.N, -1e9, jnp.float32) * u.ms)
        times = jnp.arange(steps, dtype=jnp.float32) * cuba.DT * u.ms
        return jax.lax.scan(step, init, times)[1]

    compiled = run.lower(v0).compile()
    start = time.perf_counter()
    spikes = np.asarray(jax.block_until_ready(compiled(v0)))
    return spikes, time.perf_counter() - start


def plain_csr(layer):
    """The layer's connectivity as ``cuba.py``'s ``(data, indices, indptr)`` with weight 1."""
    indices = jnp.asarray(layer.conn.indices)
    m, k = indices.shape
    indptr = jnp.arange(m + 1, dtype=indices.dtype) * k
    return jnp.ones(1, jnp.float32), indices.reshape(-1), indptr


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--duration', type=float, default=1000.0, help='model time in ms (default 1000)')
    parser.add_argument('--backends', nargs='+', help='eventjax CPU backends (default: every one here)')
    parser.add_argument('--brainevent', action='store_true', help='run brainstate on the real brainevent instead')
    parser.add_argument('--seed', type=int, default=0)
    args = parser.parse_args(argv)
    _opt_in(args.brainevent)
    steps = int(round(args.duration / cuba.DT))
    exc, inh, v0 = build(args.seed)
    print(f'CUBA on brainstate.nn.EventFixedProb with units: {cuba.N} neurons, '
          f'{args.duration:.0f} ms at dt={cuba.DT} ms, on {"brainevent" if args.brainevent else "eventjax"}')
    # cuba.py's own simulation (plain eventjax, no units) on the same connectivity.
    reference, _ = cuba.simulate(plain_csr(exc), plain_csr(inh), np.asarray(v0.mantissa), steps, None)
    same = True
    if args.brainevent:
        runs = [('brainevent', None)]
    else:
        runs = [(b, b) for b in (args.backends or cuba.cpu_backends())]
    for label, backend in runs:
        if backend is None:
            spikes, wall = simulate(exc, inh, v0, steps)
        else:
            with ej.config.override(cpu=backend):
                spikes, wall = simulate(exc, inh, v0, steps)
        rate = spikes.sum() / cuba.N / (args.duration * 1e-3)
        equal = np.array_equal(spikes, reference)
        same &= equal
        print(f'  {label:<10} rate {rate:5.2f} Hz  wall {wall:6.2f} s ({wall / steps * 1e6:.0f} us/step)  '
              f'spikes identical to cuba.py: {equal}')
    return 0 if same else 1


if __name__ == '__main__':
    raise SystemExit(main())
