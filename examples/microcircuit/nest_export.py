"""PD14 spike for spike: build the reference network in NEST (DC drive), export it, and rerun it on eventjax.

``python -m examples.microcircuit.nest_export --scale 0.05 --k-scale 0.5 --t-sim 300`` (needs the ``models``
extra): the reference package builds and connects the network in NEST; its
synapses (``nest.GetConnections``: sources, targets, weights, delays), the
initial potentials and the DC amplitudes are exported; NEST runs ``--t-sim``
ms recording every spike; eventjax runs the exported network in float64 with
NEST's arithmetic (excitatory and inhibitory currents kept apart, summed in
NEST's order ``V P22 + I_ex P21 + I_in P21 + I_e P20``) and the two spike
trains are compared: the milliseconds of identical trains, and at the first
update where they part the neuron that parts. Each step's synaptic input is
summed in a different order than NEST's ring buffer sums it (the weights
differ per synapse), so the potentials drift apart by rounding, and the
trains part once a neuron lies that close to its threshold.
"""

from __future__ import annotations

import argparse
import tempfile

import jax

jax.config.update('jax_enable_x64', True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import eventjax as ej  # noqa: E402
from examples.brette2007.model import propagator_32, refractory_steps  # noqa: E402
from examples.microcircuit import params as P  # noqa: E402


def run_nest(scale, k_scale, t_sim, seed, threads):
    """The reference network in NEST: ``(sources, targets, weights, delays ms, V_m, I_e, spike steps, senders)``."""
    import nest
    from microcircuit.network_params import default_net_dict
    from microcircuit.sim_params import default_sim_dict
    from microcircuit.stimulus_params import default_stim_dict

    from microcircuit.network import Network

    nest.set_verbosity('M_ERROR')
    data = tempfile.mkdtemp(prefix='pd14_export_') + '/'
    net = Network(dict(default_sim_dict, data_path=data, local_num_threads=threads, rng_seed=seed,
                       print_time=False, store_metadata=False),
                  dict(default_net_dict, N_scaling=scale, K_scaling=k_scale, bg_input_type='dc'),
                  dict(default_stim_dict))
    net.create()
    net.connect()
    neurons = net.pops[0]
    for pop in net.pops[1:]:
        neurons = neurons + pop
    first = neurons[0].global_id
    conns = nest.GetConnections(source=neurons, target=neurons).get(['source', 'target', 'weight', 'delay'])
    conns = {k: np.asarray(v) for k, v in conns.items()}
    v0 = np.asarray(neurons.get('V_m'), np.float64)
    i_e = np.asarray(neurons.get('I_e'), np.float64)
    recorder = nest.Create('spike_recorder')
    nest.Connect(neurons, recorder)
    nest.Simulate(t_sim)
    ev = recorder.get('events')
    steps = np.round(np.asarray(ev['times']) / P.DT).astype(np.int64) - 1  # a spike of update n is stamped n + 1
    return (conns['source'] - first, conns['target'] - first, conns['weight'], conns['delay'], v0, i_e,
            steps, np.asarray(ev['senders']) - first, nest.__version__)


def run_eventjax(src, tgt, w, delay_ms, v0, i_e, steps, backend='numba'):
    """The exported network in float64 with NEST's arithmetic; the ``(steps, n)`` spike raster."""
    n = v0.size
    h = P.DT
    p22, p11 = np.exp(-h / P.TAU_M), np.exp(-h / P.TAU_SYN)
    p21 = propagator_32(P.TAU_SYN, P.TAU_M, P.C_M, h)
    p20 = P.TAU_M / P.C_M * (1.0 - p22)
    theta, v_reset, ref = P.V_TH - P.E_L, P.V_RESET - P.E_L, refractory_steps(P.T_REF)
    # columns: j for an excitatory input of neuron j, n + j for an inhibitory one (NEST's two buffers)
    cols = tgt + np.where(w < 0, n, 0)
    order = np.argsort(src, kind='stable')
    indptr = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=indptr[1:])
    delays = np.maximum(np.floor(delay_ms / h + 0.5), 1).astype(np.int32)
    W = ej.DelayedCSR.from_csr_arrays(w[order], cols[order].astype(np.int32), indptr.astype(np.int32),
                                      delays[order], shape=(n, 2 * n))
    length = W.ring_length
    drive = jnp.asarray(i_e * p20)

    def step(carry, t):
        v, ie, ii, r, ring = carry
        slot = t % length
        inp = ring[slot]
        free = r == 0
        v = jnp.where(free, v * p22 + ie * p21 + ii * p21 + drive, v)
        r = jnp.where(free, r, r - 1)
        ie = ie * p11 + inp[:n]
        ii = ii * p11 + inp[n:]
        spike = (v >= theta) & (ie == ie)  # the read ordered before the in-place delivery (see simulation.py)
        v = jnp.where(spike, v_reset, v)
        r = jnp.where(spike, ref, r)
        ring = W.deliver(ring, spike, t, backend=backend)
        return (v, ie, ii, r, ring.at[slot].set(0)), spike

    @jax.jit
    def run(v, W):
        zeros = jnp.zeros(n)
        init = (v, zeros, zeros, jnp.zeros(n, jnp.int32), W.init_ring(length))
        return jax.lax.scan(step, init, jnp.arange(steps, dtype=jnp.int32))[1]

    return np.asarray(run(jnp.asarray(v0 - P.E_L), W))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--scale', type=float, default=0.05)
    parser.add_argument('--k-scale', type=float, default=0.5)
    parser.add_argument('--t-sim', type=float, default=300.0)
    parser.add_argument('--seed', type=int, default=55)
    parser.add_argument('--threads', type=int, default=1)
    parser.add_argument('--backend', default='numba')
    args = parser.parse_args(argv)
    src, tgt, w, d, v0, i_e, spike_steps, senders, version = run_nest(args.scale, args.k_scale, args.t_sim,
                                                                      args.seed, args.threads)
    n, steps = v0.size, int(round(args.t_sim / P.DT))
    theirs = np.zeros((steps, n), bool)
    theirs[spike_steps[spike_steps < steps], senders[spike_steps < steps]] = True
    ours = run_eventjax(src, tgt, w, d, v0, i_e, steps, args.backend)
    differ = np.nonzero((ours != theirs).any(axis=1))[0]
    identical = steps if differ.size == 0 else int(differ[0])
    print(f'NEST {version}: {n} neurons, {src.size} synapses, {int(theirs.sum())} spikes in {args.t_sim:g} ms; '
          f'eventjax {int(ours.sum())}')
    print(f'identical spike trains for {identical * P.DT:g} ms'
          + ('' if differ.size == 0 else
             f' (first parting in update {identical}: neurons {np.nonzero(ours[identical] != theirs[identical])[0]})'))
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
