"""Three models of the brain-simulation stack, run on eventjax or on brainevent 0.3.0, one per process.

- ``ei``: the 4,000-neuron E/I network of ``docs/examples/cuba_brainstate.py``
  (3,200 excitatory, 800 inhibitory; the CUBA benchmark of Brette et al.
  2007) with brainunit units and two ``brainstate.nn.EventFixedProb`` layers.
- ``coba``: brainpy's ``brainpy.state`` COBA network: ``LIFRef`` neurons, two
  ``AlignPostProj`` projections (``EventFixedProb``, ``Expon``, ``COBA``).
- ``train``: a surrogate-gradient training step of a spiking network with
  ``EventFixedProb`` and ``EventLinear`` layers, Adam, a few steps.

``python stack_tests/models.py MODEL --on eventjax|brainevent --out FILE.npz
[--steps N]`` writes the raster (or the losses) and the wall time of the
compiled run. ``--on eventjax`` installs ``eventjax.compat.brainevent`` before
anything imports brainevent; ``--on brainevent`` runs the real brainevent
0.3.0. Both draw the same connectivity (brainstate draws it, from the seed).
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time

import numpy as np


def _stack(on: str):
    if on == 'eventjax':
        import eventjax.compat.brainevent as compat

        compat.install(replace_installed=True)
    import brainevent
    import brainstate
    import braintools
    import brainunit as u

    return brainevent, brainstate, braintools, u


def ei(steps: int, on: str):
    """The E/I network of docs/examples/cuba_brainstate.py: ``(raster (steps, 4000) bool, seconds)``."""
    _stack(on)
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / 'docs' / 'examples'))
    import cuba_brainstate

    exc, inh, v0 = cuba_brainstate.build(seed=1)
    return cuba_brainstate.simulate(exc, inh, v0, steps)


def coba(steps: int, on: str):
    """brainpy's COBA network: ``(raster (steps, 4000) bool, seconds)``."""
    _, brainstate, braintools, u = _stack(on)
    import brainpy
    import jax

    brainstate.random.seed(0)

    class EINet(brainstate.nn.Module):
        def __init__(self):
            super().__init__()
            self.n_exc, self.n_inh = 3200, 800
            self.num = self.n_exc + self.n_inh
            self.N = brainpy.state.LIFRef(self.num, V_rest=-60. * u.mV, V_th=-50. * u.mV, V_reset=-60. * u.mV,
                                          tau=20. * u.ms, tau_ref=5. * u.ms,
                                          V_initializer=braintools.init.Normal(-55. * u.mV, 2. * u.mV))
            self.E = brainpy.state.AlignPostProj(
                comm=brainstate.nn.EventFixedProb(self.n_exc, self.num, conn_num=0.02, conn_weight=0.6 * u.mS,
                                                  seed=1),
                syn=brainpy.state.Expon.desc(self.num, tau=5. * u.ms),
                out=brainpy.state.COBA.desc(E=0. * u.mV), post=self.N)
            self.I = brainpy.state.AlignPostProj(
                comm=brainstate.nn.EventFixedProb(self.n_inh, self.num, conn_num=0.02, conn_weight=6.7 * u.mS,
                                                  seed=2),
                syn=brainpy.state.Expon.desc(self.num, tau=10. * u.ms),
                out=brainpy.state.COBA.desc(E=-80. * u.mV), post=self.N)

        def update(self, t, inp):
            with brainstate.environ.context(t=t):
                spk = self.N.get_spike() != 0.
                self.E(spk[:self.n_exc])
                self.I(spk[self.n_exc:])
                self.N(inp)
                return self.N.get_spike()

    net = EINet()
    brainstate.nn.init_all_states(net)
    dt = 0.1 * u.ms
    times = u.math.arange(steps) * dt

    @brainstate.transform.jit
    def run(times):
        with brainstate.environ.context(dt=dt):
            return brainstate.transform.for_loop(lambda t: net.update(t, 20. * u.mA), times)

    # The first call compiles; the state it leaves is reset to the same start for the timed run.
    start_state = {k: v.value for k, v in net.states().items()}
    jax.block_until_ready(run(times))
    for k, v in net.states().items():
        v.value = start_state[k]
    start = time.perf_counter()
    raster = np.asarray(jax.block_until_ready(run(times))) != 0
    return raster, time.perf_counter() - start


def train(steps: int, on: str):
    """The training step, ``steps`` times: ``(losses (steps,), seconds)``."""
    _, brainstate, braintools, u = _stack(on)
    import jax
    import jax.numpy as jnp

    # In float64: float32 sums in another order differ by an ulp, which 15 Adam steps amplify past 1e-6.
    jax.config.update('jax_enable_x64', True)
    brainstate.environ.set(precision=64)
    n_in, n_hid, n_out, t_len, batch = 100, 200, 10, 50, 16
    brainstate.random.seed(0)
    layer1 = brainstate.nn.EventFixedProb(n_in, n_hid, 0.2, braintools.init.Normal(0.3, 0.1), seed=3)
    layer2 = brainstate.nn.EventLinear(n_hid, n_out, braintools.init.Normal(0.0, 0.1))
    rng = np.random.RandomState(0)
    inputs = jnp.asarray(rng.rand(t_len, batch, n_in) < 0.1, jnp.float64)
    labels = jnp.asarray(rng.randint(0, n_out, batch))
    surrogate = braintools.surrogate.Sigmoid()
    weights = {**layer1.states(brainstate.ParamState), **layer2.states(brainstate.ParamState)}

    def loss_fn():
        def step(carry, x):
            v, out = carry
            current = jax.vmap(layer1)(x)
            v = 0.9 * v + current
            spike = surrogate(v - 1.0)
            v = v - jax.lax.stop_gradient(spike)
            out = 0.8 * out + jax.vmap(layer2)(spike)
            return (v, out), out

        init = (jnp.zeros((batch, n_hid)), jnp.zeros((batch, n_out)))
        outs = jax.lax.scan(step, init, inputs)[1]
        return braintools.metric.softmax_cross_entropy_with_integer_labels(outs.mean(0), labels).mean()

    opt = braintools.optim.Adam(lr=1e-2)
    opt.register_trainable_weights(weights)

    @brainstate.transform.jit
    def train_step():
        grads, loss = brainstate.transform.grad(loss_fn, weights, return_value=True)()
        opt.update(grads)
        return loss

    start = time.perf_counter()
    losses = np.array([float(train_step()) for _ in range(steps)])
    return losses, time.perf_counter() - start


MODELS = {'ei': ei, 'coba': coba, 'train': train}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('model', choices=sorted(MODELS))
    parser.add_argument('--on', choices=['eventjax', 'brainevent'], required=True)
    parser.add_argument('--steps', type=int, default=None)
    parser.add_argument('--out', required=True)
    args = parser.parse_args(argv)
    steps = args.steps or {'ei': 2000, 'coba': 2000, 'train': 5}[args.model]
    result, seconds = MODELS[args.model](steps, args.on)
    np.savez(args.out, result=result, seconds=seconds)
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
