"""The CUBA and COBA networks of Brette et al. (2007) as NEST's ``brette_et_al_2007`` examples define them.

4,000 neurons (3,200 E, 800 I), each receiving exactly 64 E and 16 I
connections (NEST's ``fixed_indegree``, autapses and multapses allowed),
every delay 0.1 ms (one step), and a 300 Hz Poisson stimulus into each of
the first 50 E neurons from 1 to 51 ms; afterwards the activity sustains
itself. Time is counted in updates: update ``n`` takes the state from
``n * dt`` to ``(n + 1) * dt``, as NEST's ``update(origin, lag)`` does.

- CUBA, ``iaf_psc_exp``: the membrane potential relative to ``E_L`` and the
  two exponential currents advance by NEST's exact propagators
  (``P22 = exp(-h/tau_m)``, ``P21 = propagator_32``, ``P20``), in NEST's
  order: the potential with the currents of the previous step, then the
  currents decay and take this step's input, then the threshold
  ``V >= V_th``; a spike resets ``V`` and holds it for ``t_ref / dt`` updates.
- COBA, ``iaf_cond_exp``: the potential obeys a linear equation whose
  coefficients (the conductances) decay exponentially, which has no closed
  form over a step; NEST integrates it with GSL's adaptive RKF45 (absolute
  tolerance 1e-3). Here one classical Runge-Kutta 4 step per update, with
  the conductances taken exactly at the stage times: its local error at
  dt = 0.1 ms is ~1e-7 mV at these rates, far inside NEST's tolerance, and it
  needs no step control (vectorised over all neurons). The conductances
  then take the step's input, and the refractory clamp and the threshold
  follow NEST's ``iaf_cond_exp::update``.

Each step's input is one event product,
``eventjax.binary_csrmv(..., transpose=True)``: a CSR matrix whose rows are
the presynaptic neurons, visited only for the rows that spiked, and whose
``2 N`` columns are the targets' excitatory inputs then their inhibitory
ones (one call a step, not two: a call costs more than the few rows it
visits). The stimulus rides in the same product as extra "virtual" rows
(row ``4000 + k * 50 + j`` is the ``k``-th stimulus spike of target ``j``
in a step), so every input of a step is added one synapse at a time into a
zero accumulator, as NEST's ring buffer does: with one weight per
population that sum is exact in any order, and float64 runs reproduce
NEST's spikes.
"""

from __future__ import annotations

import dataclasses
import math
import time

import jax
import jax.numpy as jnp
import numpy as np

import eventjax as ej

N_E, N_I = 3200, 800
N = N_E + N_I
C_E, C_I = int(N_E * 0.02), int(N_I * 0.02)
DT = 0.1  # ms
N_STIM = 50
STIM_RATE = 300.0  # Hz
STIM_START, STIM_STOP = 1.0, 51.0  # ms


@dataclasses.dataclass(frozen=True)
class CubaParams:
    """``iaf_psc_exp`` as NEST's cuba.py sets it (mV, ms, pF, pA)."""

    E_L: float = -49.0
    V_m: float = -49.0
    V_th: float = -50.0
    V_reset: float = -60.0
    C_m: float = 200.0
    tau_m: float = 20.0
    tau_syn_ex: float = 5.0
    tau_syn_in: float = 10.0
    t_ref: float = 5.0
    I_e: float = 0.0
    w_ex: float = 16.2
    w_in: float = -139.5


@dataclasses.dataclass(frozen=True)
class CobaParams:
    """``iaf_cond_exp`` as NEST's coba.py sets it (mV, ms, pF, nS); ``V_m`` is the model's default."""

    E_L: float = -60.0
    V_m: float = -70.0
    V_th: float = -50.0
    V_reset: float = -60.0
    t_ref: float = 5.0
    E_ex: float = 0.0
    E_in: float = -80.0
    C_m: float = 200.0
    g_L: float = 10.0
    tau_syn_ex: float = 5.0
    tau_syn_in: float = 10.0
    I_e: float = 0.0
    w_ex: float = 6.0
    w_in: float = -67.0


MODELS = {'cuba': CubaParams, 'coba': CobaParams}


def propagator_32(tau_syn, tau, c, h):
    """NEST's ``propagator_32``: the potential's response over ``h`` to a unit synaptic current at its start."""
    p32_linear = 1 / (2.0 * c * tau * tau) * h * h * (tau_syn - tau) * math.exp(-h / tau)
    p32_singular = h / c * math.exp(-h / tau)
    if tau == tau_syn:  # NEST's C++ divides by zero here and then takes the singular form
        return p32_singular
    p32 = -tau / (c * (1 - tau / tau_syn)) * math.exp(-h / tau_syn) * math.expm1(h * (1 / tau_syn - 1 / tau))
    if (abs(tau - tau_syn) < 0.1 and abs(p32 - p32_singular) > 2 * abs(p32_linear)):
        return p32_singular
    return p32


def refractory_steps(t_ref, dt=DT):
    """NEST's ``Time(Time::ms(t_ref)).get_steps()``: the refractory period rounded to whole steps."""
    return int(math.floor(t_ref / dt + 0.5))


@dataclasses.dataclass(frozen=True)
class Network:
    """One network: its projection (rows presynaptic), initial potentials and stimulus.

    ``proj`` is ``(data, indices, indptr)`` of shape ``(N + n_virtual, 2 N)``:
    the neurons' rows, then the stimulus' virtual rows; columns ``j`` and
    ``N + j`` are neuron ``j``'s excitatory and inhibitory input. ``stim`` is
    a boolean ``(steps, n_virtual)`` array: row ``n - stim_first`` holds the
    virtual rows' events of update ``n``.
    """

    proj: tuple
    v0: np.ndarray  # initial V_m (mV), length N
    stim: np.ndarray  # (stim_steps, n_virtual) bool: virtual events arriving in update stim_first + row
    stim_first: int

    @property
    def n_virtual(self):
        return self.stim.shape[1]


def csr_from_pairs(sources, targets, weights, n_rows, dtype):
    """A CSR matrix (rows = sources, NumPy arrays) with ``weights`` on the ``(source, target)`` pairs."""
    order = np.argsort(sources, kind='stable')
    indptr = np.zeros(n_rows + 1, np.int32)
    np.cumsum(np.bincount(sources, minlength=n_rows), out=indptr[1:])
    return np.asarray(weights, dtype)[order], targets[order].astype(np.int32), indptr


def stimulus_events(counts):
    """Virtual-row events from per-update stimulus spike counts ``(steps, N_STIM)``: ``k * N_STIM + j`` fires when
    target ``j`` receives more than ``k`` spikes in that update."""
    depth = max(int(counts.max()), 1)
    return np.concatenate([counts > k for k in range(depth)], axis=1)


def stimulus_window():
    """The updates in which the stimulus' spikes arrive: NEST's poisson_generator emits in ``(start, stop]``
    and a spike stamped ``s`` with delay ``d`` arrives in update ``s + d - 1``."""
    first = int(round(STIM_START / DT)) + 1
    last = int(round(STIM_STOP / DT))
    return first, last


def build(model, seed=0, dtype=np.float64, connections=None, v0=None, stim_counts=None):
    """Draw (or take) one network of ``model`` ('cuba' or 'coba'); see :class:`Network`.

    ``connections`` (``(sources, targets)`` of the E and of the I synapses,
    global neuron ids), ``v0`` and ``stim_counts`` replace the random draws
    (the NEST replay passes NEST's own).
    """
    p = MODELS[model]()
    rng = np.random.default_rng(seed)
    if connections is None:
        # fixed in-degree: every neuron draws C_E E sources and C_I I sources, with replacement
        tgt_e = np.repeat(np.arange(N), C_E)
        tgt_i = np.repeat(np.arange(N), C_I)
        connections = ((rng.integers(0, N_E, tgt_e.size), tgt_e), (rng.integers(N_E, N, tgt_i.size), tgt_i))
    (src_e, tgt_e), (src_i, tgt_i) = connections
    first, last = stimulus_window()
    if stim_counts is None:
        stim_counts = rng.poisson(STIM_RATE * DT * 1e-3, (last - first + 1, N_STIM))
    events = stimulus_events(np.asarray(stim_counts))
    n_virtual = events.shape[1]
    # virtual row k * N_STIM + j drives stimulated neuron j
    virt = np.arange(n_virtual)
    # iaf_cond_exp takes an inhibitory weight's magnitude as its conductance; iaf_psc_exp its signed current
    w_in = abs(p.w_in) if model == 'coba' else p.w_in
    src = np.concatenate([np.asarray(src_e), np.asarray(src_i), N + virt])
    tgt = np.concatenate([np.asarray(tgt_e), N + np.asarray(tgt_i), virt % N_STIM])
    weight = np.concatenate([np.full(len(src_e), p.w_ex), np.full(len(src_i), w_in), np.full(n_virtual, p.w_ex)])
    proj = csr_from_pairs(src, tgt, weight, N + n_virtual, dtype)
    v0 = np.full(N, p.V_m, np.float64) if v0 is None else np.asarray(v0, np.float64)
    return Network(proj, v0, events, first)


def _cuba_update(p, dtype):
    """One update of ``iaf_psc_exp`` in NEST's order, potentials relative to E_L."""
    h = DT
    p22 = math.exp(-h / p.tau_m)
    p11e, p11i = math.exp(-h / p.tau_syn_ex), math.exp(-h / p.tau_syn_in)
    p21e = propagator_32(p.tau_syn_ex, p.tau_m, p.C_m, h)
    p21i = propagator_32(p.tau_syn_in, p.tau_m, p.C_m, h)
    p20 = p.tau_m / p.C_m * (1.0 - p22)
    theta, v_reset = p.V_th - p.E_L, p.V_reset - p.E_L
    ref = refractory_steps(p.t_ref)
    c = lambda x: jnp.asarray(x, dtype)  # noqa: E731

    def update(v, ie, ii, r, in_e, in_i):
        free = r == 0
        # the same sum, in the same order, as NEST's update (with i_0 = 0)
        v = jnp.where(free, v * c(p22) + ie * c(p21e) + ii * c(p21i) + c(p.I_e) * c(p20), v)
        r = jnp.where(free, r, r - 1)
        ie = ie * c(p11e) + in_e
        ii = ii * c(p11i) + in_i
        spike = v >= c(theta)
        return jnp.where(spike, c(v_reset), v), ie, ii, jnp.where(spike, ref, r), spike

    to_state = lambda v0: v0 - p.E_L  # noqa: E731
    to_mv = lambda v: v + p.E_L  # noqa: E731
    return update, to_state, to_mv


def _coba_update(p, dtype):
    """One update of ``iaf_cond_exp``: RK4 over the step (exact conductances at the stages), then NEST's order."""
    h = DT
    decay_e_half, decay_i_half = math.exp(-h / 2 / p.tau_syn_ex), math.exp(-h / 2 / p.tau_syn_in)
    ref = refractory_steps(p.t_ref)
    c = lambda x: jnp.asarray(x, dtype)  # noqa: E731

    def dv(v, ge, gi):
        return (-c(p.g_L) * (v - c(p.E_L)) + c(p.I_e) - ge * (v - c(p.E_ex)) - gi * (v - c(p.E_in))) / c(p.C_m)

    def update(v, ge, gi, r, in_e, in_i):
        ge_h, gi_h = ge * c(decay_e_half), gi * c(decay_i_half)
        ge_1, gi_1 = ge_h * c(decay_e_half), gi_h * c(decay_i_half)
        k1 = dv(v, ge, gi)
        k2 = dv(v + c(h / 2) * k1, ge_h, gi_h)
        k3 = dv(v + c(h / 2) * k2, ge_h, gi_h)
        k4 = dv(v + c(h) * k3, ge_1, gi_1)
        v = v + c(h / 6) * (k1 + 2 * k2 + 2 * k3 + k4)
        ge, gi = ge_1 + in_e, gi_1 + in_i
        refractory = r > 0
        spike = ~refractory & (v >= c(p.V_th))
        v = jnp.where(refractory | spike, c(p.V_reset), v)
        r = jnp.where(refractory, r - 1, jnp.where(spike, ref, r))
        return v, ge, gi, r, spike

    return update, (lambda v0: v0), (lambda v: v)


def make_runner(model, net, steps, backend, dtype=np.float64, record=None):
    """A compiled function ``run() -> (spikes (steps, N) bool, v of neuron ``record`` per update or None)``."""
    p = MODELS[model]()
    update, to_state, to_mv = (_cuba_update if model == 'cuba' else _coba_update)(p, dtype)
    mats = tuple(jnp.asarray(a) for a in (*net.proj, net.stim))
    n_rows = N + net.n_virtual
    stim_first, stim_steps = net.stim_first, net.stim.shape[0]
    no_stim = jnp.zeros(net.n_virtual, bool)

    def step(mats, state, n):
        data, indices, indptr, stim = mats
        v, ge, gi, r, spikes = state
        # one step of delay: last update's spikes arrive in this one, with the stimulus' virtual rows
        k = n - stim_first
        virt = jnp.where((k >= 0) & (k < stim_steps), stim[jnp.clip(k, 0, stim_steps - 1)], no_stim)
        inputs = ej.binary_csrmv(data, indices, indptr, jnp.concatenate([spikes, virt]), shape=(n_rows, 2 * N),
                                 transpose=True, backend=backend, validate=False)
        in_e, in_i = inputs[:N], inputs[N:]
        v, ge, gi, r, spikes = update(v, ge, gi, r, in_e, in_i)
        out = (spikes, to_mv(v[record])) if record is not None else (spikes, None)
        return (v, ge, gi, r, spikes), out

    # the matrices are arguments, not closures: XLA would otherwise treat them as constants of the loop,
    # which measured 8x slower per step
    @jax.jit
    def run(v0, mats):
        zeros = jnp.zeros(N, dtype)
        init = (to_state(v0.astype(dtype)), zeros, zeros, jnp.zeros(N, jnp.int32), jnp.zeros(N, bool))
        return jax.lax.scan(lambda s, n: step(mats, s, n), init, jnp.arange(steps, dtype=jnp.int32))[1]

    v0 = jnp.asarray(net.v0, dtype)
    compiled = run.lower(v0, mats).compile()
    return lambda: jax.block_until_ready(compiled(v0, mats))


def simulate(model, net, t_sim, backend, dtype=np.float64, record=None):
    """Run ``t_sim`` ms; returns ``(spikes (steps, N) bool, v trace or None, compile s, wall s)``."""
    steps = int(round(t_sim / DT))
    start = time.perf_counter()
    runner = make_runner(model, net, steps, backend, dtype, record)
    compiled = time.perf_counter() - start
    start = time.perf_counter()
    spikes, trace = runner()
    wall = time.perf_counter() - start
    return np.asarray(spikes), (None if trace is None else np.asarray(trace)), compiled, wall


def rates(spikes, t_sim):
    """Mean rates (Hz) of the E and the I population."""
    seconds = t_sim * 1e-3
    return float(spikes[:, :N_E].sum() / N_E / seconds), float(spikes[:, N_E:].sum() / N_I / seconds)
