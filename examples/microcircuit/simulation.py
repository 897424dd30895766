"""PD14 on eventjax: ``iaf_psc_exp`` neurons updated by NEST's exact propagators, synapses delivered into a
ring of delay slots by :class:`eventjax.DelayedCSR`, spikes recorded as a raster per chunk.

One update, as NEST's ``iaf_psc_exp::update`` orders it (potentials relative
to ``E_L``; PD14's excitatory and inhibitory currents share ``tau_syn``, so
one current carries both)::

    v     = v * P22 + i_syn * P21 + I_e * P20          (unless refractory)
    i_syn = i_syn * P11 + ring[t % L] (+ Poisson drive)
    spike = v >= theta  ->  v = V_reset, refractory for t_ref / dt updates
    ring  = W.deliver(ring, spike, t);  ring[t % L] = 0

On numba (rows stored in two parts) no ring is kept: :mod:`pull` holds the
spiking rows of the last ``L - 1`` steps and sums the synapses arriving at
``t + 1`` into one vector, the ring's slot bit for bit, a chunk of updates
per numba call (:mod:`chunk`; ``delivery='push'`` keeps the ring,
:mod:`owner_split`, and the scan below).

The Poisson drive (``--drive poisson``): each neuron gets a Poisson count
with mean ``lambda = 8 Hz x K_ext x dt`` (1.2-2.3) every update, times the
external weight, drawn by inversion: one uniform 32-bit integer ``u`` per
neuron and update (JAX's ``rbg`` generator, keyed by the update's index)
and the count ``k = #{j : u >= T_j}`` for the thresholds
``T_j = round(2**32 P(X <= j))`` of the population's Poisson CDF. The
counts then follow the Poisson law to within 2**-32 in each probability
(the law itself, not an approximation of it), at the cost of one random
word and ~15 comparisons per neuron and update; ``jax.random.poisson``
(rejection sampling, threefry) measured ~50 ms a step at full scale, about
ten times more. The
reference's 1.5 ms delay of that input only shifts an independent stream
and is not modelled. The run goes in chunks of updates,
each one jitted ``lax.scan`` with its state donated, so the ring is updated
in place and a progress bar can follow the chunks.
"""

from __future__ import annotations

import dataclasses
import math
import sys
import time

import jax
import jax.numpy as jnp
import numba
import numpy as np

import eventjax as ej
from eventjax.kernels.delay import pallas_tpu_pull, pallas_tpu_sorted
from examples.brette2007.model import propagator_32, refractory_steps
from examples.microcircuit import chunk, network, neurons, owner_split, pull
from examples.microcircuit import params as P

CHUNK_STEPS = 100  # updates per jitted chunk (10 ms): model times in multiples of it never compile twice
MAX_SPIKES = 256  # rows a step the TPU's delivery at read time holds (full scale: ~25 a step, a few hundred at most)


def progress_bar(label, done, total, start, stream=sys.stderr):
    """Draw ``label [#####.....] 42% 3.1 s`` on one line (finished with a newline at 100%)."""
    if stream is None:
        return
    frac = done / total if total else 1.0
    bar = '#' * int(30 * frac)
    end = '\n' if done >= total else ''
    stream.write(f'\r  {label:<12} [{bar:<30}] {100 * frac:5.1f}%  {time.perf_counter() - start:7.1f} s{end}')
    stream.flush()


@dataclasses.dataclass
class Model:
    """A built network: its projection, per-neuron constants and initial state."""

    derived: P.Derived
    W: ej.DelayedCSR
    v0: np.ndarray
    pop_of: np.ndarray  # population index of each neuron
    i_e: np.ndarray  # DC per neuron (pA)
    lam: np.ndarray | None  # Poisson mean per neuron and update, or None for DC drive
    nnz: int
    dtype: np.dtype
    splits: jax.Array | None = None  # where each row's second part begins (owner_split), or None: one part
    split_column: int | None = None  # the first column of the rows' second parts

    @property
    def n(self):
        return int(self.v0.shape[0])


def build_for(backend, scale=0.1, k_scale=None, drive='dc', seed=55, dtype=np.float32, delivery=None):
    """:func:`build` as ``python -m examples.microcircuit --backend`` builds it: rows in two parts on numba; on
    pallas whole tiles of synapses, 128-column rows, and each row by delay and column for the delivery at
    read time (what the TPU reads)."""
    pallas = backend == 'pallas'
    return build(scale, k_scale, drive, seed, dtype, split=backend == 'numba', whole_tiles=pallas,
                 column_multiple=128 if pallas else 1, sort_rows=pallas and delivery == 'pull')


def build(scale=0.1, k_scale=None, drive='dc', seed=55, dtype=np.float32, split=True, delay_min=1,
          whole_tiles=False, column_multiple=1, sort_rows=False):
    """Build PD14 with ``N_scaling = scale`` and ``K_scaling = k_scale`` (default ``scale``); ``delay_min``:
    the shortest delay in steps (:func:`params.derive`).

    ``split``: store each row in two parts by target column, for :mod:`owner_split`'s delivery (the same
    network and spikes; without it each row is sorted by delay alone and the library's delivery runs).
    ``whole_tiles``: pad the stored synapses to a multiple of 1,024 with entries of no row, so the pallas TPU
    delivery reads them as ``(rows, 128)`` tiles in place (other counts cost it a copy of every synapse).
    ``column_multiple``: the ring's columns are ``n`` rounded up to a multiple of it (the targets past ``n``
    receive nothing): a pallas TPU delivery into a large ring holds it with whole 128-column rows, and a ring
    already that wide spares it a padded copy of the ring in and out every step.
    ``sort_rows``: each row's synapses sorted by delay, then column (not by delay alone): the TPU's delivery at
    read time reads each (row, delay, column group)'s synapses as one run.
    """
    k_scale = scale if k_scale is None else k_scale
    derived = P.derive(scale, k_scale, drive, delay_min)
    conn = network.build_connectivity(derived, seed, dtype, split)
    n, nnz, length = conn.n, conn.nnz, conn.max_delay + 1
    index_dtype = np.int32 if nnz < 2 ** 31 else np.int64
    indptr = conn.indptr.astype(index_dtype)
    splits = split_column = None
    if split:
        split_column = conn.split_column
        owner_split.check_splits(conn.indptr, conn.offsets, conn.splits, conn.split_column, n)
        splits = jnp.asarray(conn.splits.astype(index_dtype))
    # The rows are sorted by delay and packed by construction: the layout is made by hand (CSRDelayLayout.build
    # would check and sort all synapses once more) and keeps only what delivery reads, the weights and the
    # packed offsets. Both are 64-byte aligned, so device_put aliases them instead of copying 2 x 4 bytes a
    # synapse; the JAX arrays keep the NumPy buffers alive.
    weights, offsets = conn.weights, conn.offsets
    columns = -(-n // max(column_multiple, 1)) * column_multiple
    if column_multiple < 1 or length * columns >= 2 ** 31:
        raise ValueError(f'build(): column_multiple must be at least 1 and leave a ring of {length} x columns '
                         f'below 2**31 entries, got {column_multiple}.')
    if columns != n:
        widen_offsets(offsets, n, columns)
    if sort_rows:
        sort_by_offset(weights, offsets, conn.indptr)
    pad = -nnz % pallas_tpu_sorted.TILE if whole_tiles else 0
    if pad:
        # entries past indptr[-1] belong to no row; offset -1 is a synapse no ring keeps
        weights = np.concatenate([weights, np.zeros(pad, weights.dtype)])
        offsets = np.concatenate([offsets, np.full(pad, -1, offsets.dtype)])
    arrays = [jax.device_put(a, may_alias=True) for a in (weights, indptr, offsets)]
    del weights, offsets
    del conn
    data, indptr, offsets = arrays
    W = ej.DelayedCSR(ej.CSRDelayLayout(data, None, indptr, None, offsets, shape=(n, columns), ring_length=length))
    pop_of, i_e, lam = neuron_parameters(derived, drive)
    return Model(derived, W, network.initial_potentials(derived, seed), pop_of, i_e, lam, nnz, np.dtype(dtype),
                 splits, split_column)


@numba.njit(parallel=True, cache=True)
def widen_offsets(offsets, n, columns):
    """Repack the offsets ``delay * n + column`` as ``delay * columns + column``, in place (-1 stays -1).

    Example:
        >>> o = np.array([7, -1, 12], np.int32)
        >>> widen_offsets(o, 5, 8); o
        array([10, -1, 18], dtype=int32)
    """
    for e in numba.prange(offsets.size):
        o = offsets[e]
        if o >= 0:
            offsets[e] = (o // n) * columns + o % n


@numba.njit(parallel=True, cache=True)
def sort_by_offset(weights, offsets, indptr):
    """Sort each row's synapses by packed offset (delay, then column), in place; stable.

    Example:
        >>> w, o = np.array([1., 2., 3.], np.float32), np.array([9, 7, 5], np.int32)
        >>> sort_by_offset(w, o, np.array([0, 2, 3])); w.tolist(), o.tolist()
        ([2.0, 1.0, 3.0], [7, 9, 5])
    """
    for r in numba.prange(indptr.shape[0] - 1):
        lo, hi = indptr[r], indptr[r + 1]
        order = np.argsort(offsets[lo:hi], kind='mergesort')
        offsets[lo:hi] = offsets[lo:hi][order]
        weights[lo:hi] = weights[lo:hi][order]


def neuron_parameters(derived, drive):
    """``(population of each neuron, its DC in pA, its Poisson mean per update or None for DC drive)``."""
    pop_of = np.repeat(np.arange(8), derived.num_neurons)
    lam = (P.BG_RATE * derived.k_ext * P.DT * 1e-3)[pop_of] if drive == 'poisson' else None
    return pop_of, derived.dc_amp[pop_of], lam


def propagators():
    """``(constants, P20)``: NEST's exact propagators and the thresholds as :func:`neurons.update` takes them
    (potentials relative to ``E_L``), and the DC's propagator ``P20`` (``drive = I_e * P20``)."""
    h = P.DT
    p22, p11 = math.exp(-h / P.TAU_M), math.exp(-h / P.TAU_SYN)
    p21 = propagator_32(P.TAU_SYN, P.TAU_M, P.C_M, h)
    p20 = P.TAU_M / P.C_M * (1.0 - p22)
    theta, v_reset = P.V_TH - P.E_L, P.V_RESET - P.E_L
    return dict(p22=p22, p21=p21, p11=p11, theta=theta, v_reset=v_reset, ref=refractory_steps(P.T_REF)), p20


def poisson_thresholds(lams):
    """Per mean in ``lams``: the 32-bit thresholds ``round(2**32 P(X <= j))`` below 2**32, j = 0, 1, ..."""
    out = []
    for lam in lams:
        th, pmf, cdf, j = [], math.exp(-lam), 0.0, 0
        while True:
            cdf += pmf
            t = int(round(cdf * 2.0 ** 32))
            if t >= 2 ** 32:
                break
            th.append(t)
            j += 1
            pmf *= lam / j
        out.append(th)
    return out


def threshold_table(derived, lam):
    """The (K, 8) uint32 thresholds of each population's drive, from the per-neuron means ``lam``."""
    bounds = np.concatenate([[0], np.cumsum(derived.num_neurons)])
    thresholds = poisson_thresholds(lam[bounds[:-1]])
    table = np.full((max(map(len, thresholds)), 8), 2 ** 32 - 1, np.uint32)  # 2**32 - 1: a u never above it
    for p, th in enumerate(thresholds):
        table[:len(th), p] = th
    return table


def poisson_table(model):
    """``(thresholds (K, 8) uint32, population of each neuron)``: the drive's arguments (arrays, not constants)."""
    return jnp.asarray(threshold_table(model.derived, model.lam)), jnp.asarray(model.pop_of.astype(np.int32))


def poisson_counts(u, table, pop_of):
    """Poisson counts by inversion: ``#{j : u >= T_j}`` with the thresholds of each neuron's population."""
    return jax.lax.fori_loop(0, table.shape[0], lambda j, k: k + (u >= table[j][pop_of]).astype(jnp.int32),
                             jnp.zeros(u.shape, jnp.int32))


def raster_nonzero(raster):
    """``np.nonzero`` of a sparse 2-D bool ``raster``, read eight flags at a time.

    np.nonzero tests each flag: 25 ms for a full-scale chunk (100 x 77,169).
    NumPy skipping the zero 64-bit words first took 3-4 ms, serial after
    every chunk (a tenth of the step); one compiled pass over the words, a
    fraction of that.

    Example:
        >>> raster_nonzero(np.eye(3, dtype=bool))
        (array([0, 1, 2]), array([0, 1, 2]))
    """
    flat = np.ascontiguousarray(raster, np.bool_).reshape(-1)
    hits = _flag_hits(flat)
    return np.divmod(hits, raster.shape[1]) if raster.shape[1] else (hits, hits)


@numba.njit(cache=True, nogil=True)
def _flag_hits(flat):
    """The positions of the True flags of ``flat`` in order; a zero 64-bit word of flags costs one test."""
    whole = flat.size // 8
    words = flat[:whole * 8].view(np.uint64)
    nonzero = np.empty(whole, np.int64)  # pages never written cost nothing
    m = 0
    for w in range(whole):
        if words[w]:
            nonzero[m] = w
            m += 1
    hits = np.empty(8 * m + flat.size - 8 * whole, np.int64)
    at = 0
    for i in range(m):
        for b in range(8 * nonzero[i], 8 * nonzero[i] + 8):
            if flat[b]:
                hits[at] = b
                at += 1
    for b in range(8 * whole, flat.size):
        if flat[b]:
            hits[at] = b
            at += 1
    return hits[:at]


class Runner:
    """Steps a built :class:`Model`; ``run(ms)`` continues from where the last call stopped.

    ``delivery`` (numba, rows in two parts): ``'pull'`` (the default) sums each step's arriving synapses at
    read time (:mod:`pull`), ``'push'`` adds each spike's synapses into the ring (:mod:`owner_split`); the
    same spikes. On ``pallas`` (rows in one part, each sorted by delay and column: ``build(sort_rows=True)``),
    ``'pull'`` sums them at read time (:mod:`eventjax.kernels.delay.pallas_tpu_pull`: no ring; the spiking
    rows of the last ``L`` steps held, ``max_spikes`` a step: more in one step raise ValueError after the
    run), ``'push'`` (the default) delivers into the ring; the same spikes within float32 rounding of the
    sums. ``flat_ring`` (default: on ``pallas``): the ring held flat, a multiple of 8 steps long, as the TPU
    kernel's rows of 128 without a copy.
    """

    def __init__(self, model: Model, backend='numba', seed=55, delivery=None, max_spikes=MAX_SPIKES,
                 flat_ring=None):
        if delivery not in (None, 'pull', 'push'):
            raise ValueError(f"Runner(): delivery must be 'pull' or 'push' (None: the backend's default), got "
                             f'{delivery!r}.')
        delivery = ('pull' if backend == 'numba' else 'push') if delivery is None else delivery
        self.model, self.backend = model, backend
        dtype = model.dtype
        n = model.n
        self.constants, p20 = propagators()
        p22, p21, p11, theta, v_reset, ref = (self.constants[k] for k in ('p22', 'p21', 'p11', 'theta', 'v_reset',
                                                                          'ref'))
        c = lambda x: jnp.asarray(x, dtype)  # noqa: E731
        drive = jnp.asarray(model.i_e * p20, dtype)  # I_e * P20, per neuron
        w_ext = model.derived.weight_ext
        key = jax.random.key(seed, impl='rbg')
        table = None if model.lam is None else poisson_table(model)
        length = model.W.ring_length

        split = backend == 'numba' and model.splits is not None
        pulled = split and delivery == 'pull'  # the state holds the input and the spikes' rows, not a ring
        # pallas at read time: the state holds the spiking rows of the last L steps, the input is summed each step
        tpu_pulled = backend == 'pallas' and delivery == 'pull'
        if tpu_pulled and model.splits is not None:
            raise ValueError("Runner(): the pallas delivery at read time reads each row's synapses in one part; "
                             'build the model with split=False and sort_rows=True.')
        self.delivery = 'pull' if pulled or tpu_pulled else 'push'
        columns = model.W.shape[1]
        # The TPU kernel holds the ring as rows of 128 (whole 8-row tiles): a ring held flat, of a multiple of 8
        # steps, is that array without a copy, where an (L, columns) ring was relaid out twice an update
        # (about 80 us of copies and padding an update at full scale). More steps than the longest delay
        # needs change nothing delivered: a synapse lands delay steps ahead on any ring long enough.
        fused = backend == 'numba'  # the neuron update as one numba pass (neurons.py), else as XLA ops
        flat = (backend == 'pallas' if flat_ring is None else flat_ring) and self.delivery == 'push' and \
            not split and not fused and -(-length // 8) * 8 * columns < 2 ** 31
        steps_held = -(-length // 8) * 8 if flat else length
        groups = pallas_tpu_pull.groups_for(columns)
        no_extra = jnp.zeros(0, dtype)

        def poisson_input(t, table_args):
            u = jax.random.bits(jax.random.fold_in(key, t), (n,), jnp.uint32)
            return poisson_counts(u, *table_args).astype(dtype) * c(w_ext)

        def xla_update(v, i_syn, r, inp):
            free = r == 0
            v = jnp.where(free, v * c(p22) + i_syn * c(p21) + drive, v)
            r = jnp.where(free, r, r - 1)
            i_syn = i_syn * c(p11) + inp
            # The delivery updates the ring in place, so XLA must read this step's slot first. In NEST's
            # order the spikes do not depend on the read (the potential advances with the previous
            # current), and XLA then copied the whole ring every step to keep the read's values (2 ring
            # copies a step). `i_syn == i_syn` (false only for a NaN current, a run already broken) makes
            # the spikes depend on the read, which orders it first; no copy is left.
            spike = (v >= c(theta)) & (i_syn == i_syn)
            return jnp.where(spike, c(v_reset), v), i_syn, jnp.where(spike, ref, r), spike

        def tpu_pull_step(lay_table, state, t):
            data, offsets, bounds = lay_table[0]
            v, i_syn, r, spikes, dropped = state
            inp = pallas_tpu_pull.pull_input(data, offsets, bounds, spikes, t, columns=columns, groups=groups,
                                             interpret=interpret)[:n]
            v, i_syn, r, spike = xla_update(v, i_syn, r, inp if table is None else inp + poisson_input(
                t, lay_table[1:]))
            return (v, i_syn, r, *pallas_tpu_pull.record(spikes, dropped, spike, t)), spike

        def step(W_table, state, t):
            W, splits = W_table[:2]
            extra = no_extra if table is None else poisson_input(t, W_table[2:])
            if fused:
                (v, i_syn, r, ring), spike = neurons.update(state[:4], drive, extra, t, self.constants)
            else:
                v, i_syn, r, ring = state
                slot = t % steps_held
                due = jax.lax.dynamic_slice(ring, (slot * columns,), (columns,)) if flat else ring[slot]
                inp = due[:n] if table is None else due[:n] + extra  # the ring may be wider
                v, i_syn, r, spike = xla_update(v, i_syn, r, inp)
            if split:
                ring = owner_split.owner_split_deliver(ring, spike, W, splits, t)
            elif flat:
                ring = W.deliver(ring.reshape(steps_held, columns), spike, t, backend=backend).reshape(-1)
            else:
                ring = W.deliver(ring, spike, t, backend=backend)
            if not fused:  # cleared after the delivery: before it, XLA copied the ring to keep the read
                ring = jax.lax.dynamic_update_slice(ring, jnp.zeros(columns, ring.dtype), (slot * columns,)) \
                    if flat else ring.at[slot].set(0)
            # the spikes leave as the raster of the chunk, compacted on the host: compact_events on the device
            # cost 0.46 ms a step at full scale, a quarter of the step
            return (v, i_syn, r, ring), spike

        # the projection is an argument, not a closure: its arrays stay buffers, never constants of the program
        def scan_chunk(state, W_table, t0, steps):
            one = tpu_pull_step if tpu_pulled else step
            return jax.lax.scan(lambda s, t: one(W_table, s, t), state, t0 + jnp.arange(steps, dtype=jnp.int32))

        runs_of_drive = chunk.drive_runs(drive) if pulled else None

        def pulled_chunk(state, lay_table, t0, steps):
            # the whole chunk in one numba call (chunk.py); the Poisson counts drawn as the scan draws them
            extra = jnp.zeros((0, n), dtype)
            if table is not None:
                # lax.map, not vmap: rbg's draws under vmap are not the unbatched ones
                extra = jax.lax.map(lambda t: poisson_input(t, lay_table[1:]),
                                    t0 + jnp.arange(steps, dtype=jnp.int32))
            return chunk.run(state, runs_of_drive, extra, lay_table[0], t0, steps, self.constants)

        interpret = jax.default_backend() != 'tpu'  # Pallas's TPU interpreter elsewhere (tests on the CPU)
        self.max_spikes = max_spikes
        self._chunk = jax.jit(pulled_chunk if pulled else scan_chunk, static_argnums=3, donate_argnums=0)
        # at read time the refractory counts are bytes where they fit: the neuron pass reads and writes 3 bytes
        # a neuron fewer, a few percent of a full-scale step
        small = pulled and self.constants['ref'] < 2 ** 7
        self.state = (jnp.asarray(model.v0 - P.E_L, dtype), jnp.zeros(n, dtype),
                      jnp.zeros(n, jnp.int8 if small else jnp.int32),
                      model.W.init_ring(steps_held).reshape(-1) if flat else model.W.init_ring(length))
        self.args = (model.W, model.splits)
        if pulled:
            self.state = self.state[:3] + pull.init_state(n, length, dtype)
            self.args = (pull.layout(model.W, model.splits, model.split_column),)
        if tpu_pulled:
            lay = model.W.layout
            bounds = pallas_tpu_pull.build_bounds(np.asarray(lay.offsets), np.asarray(lay.indptr), columns=columns,
                                                  length=length, groups=groups)
            self.state = self.state[:3] + pallas_tpu_pull.init_spikes(length, max_spikes, n)
            # rows of 128 synapses, made once here (a reshape inside the update could copy every synapse)
            self.args = ((pallas_tpu_pull.as_rows(lay.data), pallas_tpu_pull.as_rows(lay.offsets),
                          jnp.asarray(bounds)),)
        self.args += () if table is None else table
        self.t = 0
        self.compile_s = 0.0

    def compile(self, steps=CHUNK_STEPS):
        """Compile the chunk of ``steps`` updates ahead of the timed run; returns the seconds it took."""
        start = time.perf_counter()
        # lowered from shapes alone: handing it the concrete arrays took a transient copy of the synapses
        abstract = jax.tree.map(lambda x: jax.ShapeDtypeStruct(x.shape, x.dtype), (self.state, self.args))
        self._chunk.lower(*abstract, jnp.int32(0), steps).compile()
        raster_nonzero(np.zeros((1, 9), bool))  # the host's readers too (numba: compiled, or loaded from its cache)
        chunk.word_hits(np.zeros((1, 1), np.uint32), 1)
        self.compile_s += time.perf_counter() - start
        return time.perf_counter() - start

    def check_dropped(self):
        """Raise ValueError if a step of the TPU's delivery at read time had more spikes than it holds."""
        if self.backend == 'pallas' and self.delivery == 'pull':
            dropped = int(self.state[4])
            if dropped:
                raise ValueError(f'Runner.run(): {dropped} spikes came in steps where more than {self.max_spikes} '
                                 'neurons fired and were not delivered; make the Runner with a larger max_spikes.')

    def run(self, ms, label='simulate', progress=sys.stderr, record=True):
        """Advance ``ms``; returns ``(spike steps, spike ids, wall seconds)`` (empty arrays unless ``record``)."""
        total = int(round(ms / P.DT))
        steps_out, ids_out = [], []
        start = time.perf_counter()
        done = 0
        pending = None  # the last chunk's raster and first step: read on the host while the next chunk runs

        def read(raster, t0):
            spikes = np.asarray(raster)
            rows, ids = (chunk.word_hits(spikes, self.model.n) if spikes.dtype == np.uint32
                         else raster_nonzero(spikes))
            steps_out.append(rows.astype(np.int64) + t0)
            ids_out.append(ids.astype(np.int32))

        while done < total:
            steps = min(CHUNK_STEPS, total - done)
            self.state, raster = self._chunk(self.state, self.args, jnp.int32(self.t), steps)  # returns at once
            if pending is not None:
                read(*pending)
            pending = (raster, self.t) if record else None
            self.t += steps
            done += steps
            progress_bar(label, done, total, start, progress)
        if pending is not None:
            read(*pending)
        jax.block_until_ready(self.state)
        wall = time.perf_counter() - start
        self.check_dropped()
        cat = lambda xs, dt: np.concatenate(xs) if xs else np.zeros(0, dt)  # noqa: E731
        return cat(steps_out, np.int64), cat(ids_out, np.int32), wall


def population_rates(model, ids, ms):
    """Mean rate (Hz) of each population from the spike ids of ``ms`` of model time."""
    per_pop = np.bincount(model.pop_of[ids], minlength=8)
    return per_pop / model.derived.num_neurons / (ms * 1e-3)
