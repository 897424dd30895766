"""Build Brette's CUBA network in NEST, export it and NEST's spikes, and compare eventjax's float64 run with them.

``python -m examples.brette2007.nest_export [--t-sim 1000] [--seed 1] [--out PATH]`` (needs the ``models``
extra: ``pip install -e '.[models]'``):

1. builds the network of NEST's ``cuba.py`` in NEST (``fixed_indegree`` E and I
   projections, 0.1 ms delays, ``V_m = -49 mV``); the 300 Hz Poisson stimulus is
   drawn here with NumPy and given to NEST as one ``spike_generator`` per
   stimulated neuron, so that both simulators get the same stimulus spikes;
2. exports the connections (``nest.GetConnections``: sources, targets, weights,
   delays, checked to be the model's), the initial potentials and the stimulus;
3. runs NEST and records every neuron's spikes;
4. runs the exported network on eventjax in float64 and finds the first update
   where the spike trains part; reruns NEST with a ``multimeter`` on the neuron
   that parts, and stores both membrane potentials up to that update;
5. writes all of it to ``data/cuba_nest.npz`` (a few hundred kB), which
   ``tests/examples/test_brette2007.py`` replays without NEST.
"""

from __future__ import annotations

import argparse
import pathlib

import jax
import numpy as np

jax.config.update('jax_enable_x64', True)

from examples.brette2007 import model  # noqa: E402

HERE = pathlib.Path(__file__).parent
DEFAULT_OUT = HERE / 'data' / 'cuba_nest.npz'


def run_nest(t_sim, seed, stim_counts, record_v=None, threads=1):
    """Build and run CUBA in NEST; returns ``(connections, v0, spike steps, senders, version, v trace)``."""
    import nest

    nest.set_verbosity('M_ERROR')
    nest.ResetKernel()
    nest.SetKernelStatus({'resolution': model.DT, 'rng_seed': seed, 'local_num_threads': threads})
    p = model.CubaParams()
    nest.SetDefaults('iaf_psc_exp', {k: getattr(p, k) for k in
                                     ('E_L', 'V_m', 'V_th', 'V_reset', 'C_m', 'tau_m', 'tau_syn_ex',
                                      'tau_syn_in', 't_ref', 'I_e')})
    exc = nest.Create('iaf_psc_exp', model.N_E)
    inh = nest.Create('iaf_psc_exp', model.N_I)
    nest.CopyModel('static_synapse', 'syn_ex', {'weight': p.w_ex, 'delay': model.DT})
    nest.CopyModel('static_synapse', 'syn_in', {'weight': p.w_in, 'delay': model.DT})
    for pre, k, syn in ((exc, model.C_E, 'syn_ex'), (inh, model.C_I, 'syn_in')):
        for post in (exc, inh):
            nest.Connect(pre, post, {'rule': 'fixed_indegree', 'indegree': k}, syn)
    connections = []
    for pre in (exc, inh):
        conns = nest.GetConnections(source=pre, target=exc + inh).get(['source', 'target', 'weight', 'delay'])
        conns = {k: np.asarray(v) for k, v in conns.items()}
        assert np.all(conns['delay'] == model.DT), 'every delay must be one step'
        weight = p.w_ex if pre is exc else p.w_in
        assert np.all(conns['weight'] == weight), 'one weight per population'
        # NEST's global ids count from 1, E neurons first
        connections.append((conns['source'] - 1, conns['target'] - 1))
    v0 = np.asarray((exc + inh).get('V_m'), np.float64)
    # stimulus: the spikes arriving in update n are stamped n steps (delay one step)
    first, _ = model.stimulus_window()
    for j in range(model.N_STIM):
        counts = stim_counts[:, j]
        steps = np.repeat(first + np.arange(len(counts)), counts)
        gen = nest.Create('spike_generator', params={'spike_times': np.round(steps * model.DT, 10).tolist()})
        nest.Connect(gen, exc[j], syn_spec='syn_ex')
    recorder = nest.Create('spike_recorder')
    nest.Connect(exc + inh, recorder)
    trace = None
    if record_v is not None:
        meter = nest.Create('multimeter', params={'record_from': ['V_m'], 'interval': model.DT})
        nest.Connect(meter, (exc + inh)[int(record_v)])
    nest.Simulate(t_sim)
    events = recorder.get('events')
    # a spike of update n is stamped (n + 1) steps
    steps = np.round(np.asarray(events['times']) / model.DT).astype(np.int64) - 1
    senders = np.asarray(events['senders']) - 1
    if record_v is not None:
        ev = meter.get('events')
        # the multimeter's sample at time (n + 1) dt is V_m after update n; the last few may not be in yet
        trace = np.full(int(round(t_sim / model.DT)), np.nan)
        trace[np.round(np.asarray(ev['times']) / model.DT).astype(np.int64) - 1] = ev['V_m']
    return connections, v0, steps, senders, nest.__version__, trace


def raster(steps, senders, n_steps):
    """A ``(n_steps, N)`` boolean raster from spike (update, neuron) pairs."""
    out = np.zeros((n_steps, model.N), bool)
    keep = steps < n_steps
    out[steps[keep], senders[keep]] = True
    return out


def first_parting(ours, theirs):
    """``(update, neuron)`` of the first difference between two rasters, or ``None``."""
    diff = np.nonzero((ours != theirs).any(axis=1))[0]
    if diff.size == 0:
        return None
    n = int(diff[0])
    return n, int(np.nonzero(ours[n] != theirs[n])[0][0])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--t-sim', type=float, default=1000.0)
    parser.add_argument('--seed', type=int, default=1)
    parser.add_argument('--backend', default='numba')
    parser.add_argument('--out', default=str(DEFAULT_OUT))
    args = parser.parse_args(argv)
    n_steps = int(round(args.t_sim / model.DT))
    first, last = model.stimulus_window()
    stim_counts = np.random.default_rng(args.seed).poisson(model.STIM_RATE * model.DT * 1e-3,
                                                           (last - first + 1, model.N_STIM))
    connections, v0, steps, senders, version, _ = run_nest(args.t_sim, args.seed, stim_counts)
    theirs = raster(steps, senders, n_steps)
    net = model.build('cuba', connections=connections, v0=v0, stim_counts=stim_counts)
    ours, _, _, _ = model.simulate('cuba', net, args.t_sim, args.backend, np.float64)
    parting = first_parting(ours, theirs)
    identical = n_steps if parting is None else parting[0]
    print(f'NEST {version}: {len(steps)} spikes in {args.t_sim:g} ms; eventjax {int(ours.sum())}')
    print(f'identical spike trains for {identical * model.DT:g} ms')
    record = parting[1] if parting is not None else 0
    upto = identical + 1 if parting is not None else n_steps
    *_, nest_v = run_nest((upto + 10) * model.DT, args.seed, stim_counts, record_v=record)
    nest_v = nest_v[:upto]
    _, our_v, _, _ = model.simulate('cuba', net, upto * model.DT, args.backend, np.float64, record=record)
    # before the update that parts (its own potentials are the ones that decide)
    before = slice(0, upto - 1) if parting is not None else slice(0, upto)
    gap = float(np.max(np.abs(nest_v[before] - our_v[before]))) if upto > 1 else 0.0
    if parting is None:
        print(f'neuron {record}: |V_NEST - V_eventjax| <= {gap:.3g} mV over all {upto} updates')
    else:
        print(f'neuron {record} parts in update {identical}: |V_NEST - V_eventjax| <= {gap:.3g} mV over the '
              f'{identical} updates before; then NEST {nest_v[-1]!r} mV, eventjax {our_v[-1]!r} mV '
              f'(threshold {model.CubaParams().V_th} mV)')
    (src_e, tgt_e), (src_i, tgt_i) = connections
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(out, src_e=src_e.astype(np.uint16), tgt_e=tgt_e.astype(np.uint16),
                        src_i=src_i.astype(np.uint16), tgt_i=tgt_i.astype(np.uint16), v0=v0,
                        stim_counts=stim_counts.astype(np.uint8), spike_steps=steps.astype(np.int32),
                        spike_senders=senders.astype(np.uint16), t_sim=args.t_sim, seed=args.seed,
                        nest_version=version, identical_steps=identical, record=record,
                        nest_v=nest_v, eventjax_v=our_v)
    print(f'wrote {out} ({out.stat().st_size / 1e3:.0f} kB)')
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
