"""PD14's neuron update as one numba kernel: the ring's slot read and cleared, NEST's exact propagators,
refractoriness, threshold and reset, in one pass over the neurons.

As XLA ops the update took ~5 ns a neuron at full scale (77,169 neurons:
an odd length, which XLA's CPU loops ran about 2.5x slower than a multiple
of 64), and the ring's read and clear another ~2. One pass reads and
writes each neuron's state once.

``update(state, drive, extra, t, constants)`` returns the new state and the
spikes; ``v``, ``i_syn``, ``r`` and the ring are updated in place. Each
operation is rounded in float32 in the order written, as NumPy would; XLA's
update may fuse a multiply-add where its fusion allows (1 ulp apart), so
runs of the two agree spike for spike only until the first threshold
crossing that ulp decides.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numba
import numpy as np

import eventjax as ej


@numba.njit(inline='always')
def advance(vj, ij, rj, inp, drive, c22, c21, c11, th, reset, ref):
    """One neuron's update from its potential, current, refractory count and this step's input:
    ``(v, i_syn, r, spike)``, each operation rounded in the neuron's dtype in the order written."""
    if rj == 0:
        vj = vj * c22 + ij * c21 + drive
    else:
        rj -= 1
    ij = ij * c11 + inp
    spike = vj >= th and ij == ij  # a NaN current never fires, as in the XLA update
    if spike:
        vj, rj = reset, ref
    return vj, ij, rj, spike


def _numba_kernel(outs, p22, p21, p11, theta, v_reset, ref):
    packed = len(outs) == 6  # the spikes also as bitpack's words, for the exchange between processes

    @numba.njit  # no fused multiply-adds: each operation rounded as NumPy's
    def run(v_out, i_out, r_out, ring_out, drive, extra, t, spikes, words):
        dt = v_out.dtype.type
        c22, c21, c11, th, reset = dt(p22), dt(p21), dt(p11), dt(theta), dt(v_reset)
        slot = np.int64(t[0]) % np.int64(ring_out.shape[0])
        row = ring_out[slot]
        poisson = extra.shape[0] != 0
        word = 0
        for j in range(v_out.shape[0]):
            inp = row[j] + extra[j] if poisson else row[j]
            row[j] = 0
            v_out[j], i_out[j], r_out[j], spike = advance(v_out[j], i_out[j], r_out[j], inp, drive[j], c22, c21,
                                                          c11, th, reset, ref)
            spikes[j] = spike
            if packed:
                # packed in the same pass: bit j % 32 of word j // 32, as bitpack's layout
                word |= np.int64(spike) << (j & 31)
                if j & 31 == 31 or j == v_out.shape[0] - 1:
                    words[j >> 5] = np.uint32(word)
                    word = 0

    if packed:
        @numba.njit
        def kernel(v, i_syn, r, ring, drive, extra, t, v_out, i_out, r_out, ring_out, spikes, words):
            run(v_out, i_out, r_out, ring_out, drive, extra, t, spikes, words)
    else:
        @numba.njit
        def kernel(v, i_syn, r, ring, drive, extra, t, v_out, i_out, r_out, ring_out, spikes):
            run(v_out, i_out, r_out, ring_out, drive, extra, t, spikes, np.empty(0, np.uint32))
    return kernel


def _jax_kernel(outs, p22, p21, p11, theta, v_reset, ref):
    def kernel(v, i_syn, r, ring, drive, extra, t):
        c = lambda x: jnp.asarray(x, v.dtype)  # noqa: E731
        slot = t[0] % ring.shape[0]
        inp = ring[slot] + extra if extra.shape[0] else ring[slot]
        free = r == 0
        v = jnp.where(free, v * c(p22) + i_syn * c(p21) + drive, v)
        r = jnp.where(free, r, r - 1)
        i_syn = i_syn * c(p11) + inp
        spike = (v >= c(theta)) & (i_syn == i_syn)
        out = (jnp.where(spike, c(v_reset), v), i_syn, jnp.where(spike, ref, r), ring.at[slot].set(0), spike)
        return out + (ej.bitpack(spike),) if len(outs) == 6 else out
    return kernel


_update = ej.XLACustomKernel('pd14_neuron_update')
_update.def_numba_kernel(_numba_kernel)
_update.def_jax_kernel(_jax_kernel)


def update(state, drive, extra, t, constants, backend='numba', packed=False):
    """One update of ``state = (v, i_syn, r, ring)``: returns ``(state, spikes)`` with the ring's slot
    ``t % L`` read into the current and cleared; with ``packed``, ``(state, spikes, words)``, the spikes
    also as :func:`eventjax.bitpack`'s uint32 words, packed in the same pass over the neurons.

    ``drive``: ``I_e * P20`` per neuron; ``extra``: more input per neuron
    this step (the Poisson drive), or an empty array; ``constants``: a dict
    of ``p22, p21, p11, theta, v_reset`` (floats) and ``ref`` (steps).

    Example:
        >>> import jax.numpy as jnp
        >>> k = dict(p22=1.0, p21=0.0, p11=1.0, theta=1.0, v_reset=0.0, ref=2)
        >>> state = (jnp.array([0.5, 0.9]), jnp.zeros(2), jnp.zeros(2, jnp.int32), jnp.ones((2, 2)))
        >>> state, spikes = update(state, jnp.array([0.25, 0.25]), jnp.zeros(0), 0, k)
        >>> spikes, state[0], state[3][0]
        (Array([False,  True], dtype=bool), Array([0.75, 0.  ], dtype=float32), Array([0., 0.], dtype=float32))
        >>> update(state, jnp.array([0.25, 0.25]), jnp.zeros(0), 1, k, packed=True)[2]  # neuron 0 fires: bit 0
        Array([1], dtype=uint32)
    """
    v, i_syn, r, ring = state
    t = jnp.asarray(t, jnp.int32).reshape(1)
    outs = tuple(jax.ShapeDtypeStruct(x.shape, x.dtype) for x in state) + (jax.ShapeDtypeStruct(v.shape, bool),)
    if packed:
        outs += (jax.ShapeDtypeStruct((-(-v.shape[0] // 32),), jnp.uint32),)
    *new, spikes = _update(v, i_syn, r, ring, drive, extra, t, outs=outs,
                           input_output_aliases={0: 0, 1: 1, 2: 2, 3: 3}, backend=backend, **constants)
    if packed:
        return tuple(new[:4]), new[4], spikes
    return tuple(new), spikes
