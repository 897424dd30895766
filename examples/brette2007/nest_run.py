"""Run NEST's own CUBA or COBA benchmark network (its ``brette_et_al_2007`` example's build) and print one JSON line.

``python -m examples.brette2007.nest_run --model cuba --t-sim 1000 --threads 1`` (needs the ``models`` extra):
the network, the Poisson stimulus and the parameters of NEST's example, every
neuron recorded; wall time of ``nest.Simulate`` per model second, and the rates.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from examples.brette2007 import model


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--model', choices=('cuba', 'coba'), default='cuba')
    parser.add_argument('--t-sim', type=float, default=1000.0)
    parser.add_argument('--threads', type=int, default=1)
    parser.add_argument('--seed', type=int, default=1)
    args = parser.parse_args(argv)
    print(json.dumps(run(args.model, args.t_sim, args.threads, args.seed)[0]))
    return 0


def run(model_name, t_sim, threads=1, seed=1):
    """Build and simulate NEST's network; ``(figures, ids from 0, spike times ms)``."""
    import nest

    nest.set_verbosity('M_ERROR')
    nest.ResetKernel()
    nest.SetKernelStatus({'resolution': model.DT, 'local_num_threads': threads, 'rng_seed': seed})
    p = model.MODELS[model_name]()
    name = 'iaf_psc_exp' if model_name == 'cuba' else 'iaf_cond_exp'
    keys = [f.name for f in __import__('dataclasses').fields(p) if f.name not in ('w_ex', 'w_in')]
    start = time.perf_counter()
    nest.SetDefaults(name, {k: getattr(p, k) for k in keys})
    exc, inh = nest.Create(name, model.N_E), nest.Create(name, model.N_I)
    stim = nest.Create('poisson_generator', params={'rate': model.STIM_RATE, 'start': model.STIM_START,
                                                    'stop': model.STIM_STOP, 'origin': 0.0})
    nest.CopyModel('static_synapse', 'syn_ex', {'weight': p.w_ex, 'delay': model.DT})
    nest.CopyModel('static_synapse', 'syn_in', {'weight': p.w_in, 'delay': model.DT})
    for pre, k, syn in ((exc, model.C_E, 'syn_ex'), (inh, model.C_I, 'syn_in')):
        for post in (exc, inh):
            nest.Connect(pre, post, {'rule': 'fixed_indegree', 'indegree': k}, syn)
    nest.Connect(stim, exc[:model.N_STIM], 'all_to_all', 'syn_ex')
    recorder = nest.Create('spike_recorder')
    nest.Connect(exc + inh, recorder)
    nest.Prepare()
    nest.Cleanup()
    build = time.perf_counter() - start
    start = time.perf_counter()
    nest.Simulate(t_sim)
    wall = time.perf_counter() - start
    events = recorder.get('events')
    ids = np.asarray(events['senders'], np.int64) - exc[0].global_id
    seconds = t_sim * 1e-3
    figures = {'simulator': f'NEST {nest.__version__}', 'model': model_name, 'threads': threads,
               'build_s': build, 'wall_s': wall, 's_per_model_s': wall / seconds,
               'rate_e': float(np.sum(ids < model.N_E) / model.N_E / seconds),
               'rate_i': float(np.sum(ids >= model.N_E) / model.N_I / seconds)}
    return figures, ids, np.asarray(events['times'], np.float64)


if __name__ == '__main__':
    raise SystemExit(main())
