"""The served model: the CUBA E/I network's connectivity, its JAX functions and their NumPy answers.

The server and the load generator both import this module: the server runs
the JAX functions, the load generator checks every answer against the NumPy
ones, built from the connectivity the server publishes at ``GET /network``.
The network is that of ``docs/examples/cuba.py`` (80% excitatory, 2%
connection probability, the published parameters) at any size.
"""

from __future__ import annotations

import functools

import numpy as np

P_CONN = 0.02
DT = 0.1  # ms
TAU_M, TAU_E, TAU_I = 20.0, 5.0, 10.0  # ms
V_T, V_R, E_L = -50.0, -60.0, -49.0  # mV
W_E, W_I = 60 * 0.27 / 10, -20 * 4.5 / 10  # mV
A_M, A_E, A_I = (float(np.exp(-DT / tau)) for tau in (TAU_M, TAU_E, TAU_I))


def make_network(n: int, seed: int = 0) -> dict:
    """Excitatory and inhibitory CSR rows (presynaptic) over all ``n`` targets, and initial potentials."""
    rng = np.random.default_rng(seed)
    n_e = n * 4 // 5
    net = {'n': n, 'n_e': n_e}
    for name, rows in (('exc', n_e), ('inh', n - n_e)):
        mask = rng.random((rows, n)) < P_CONN
        net[f'{name}_indptr'] = np.concatenate([[0], np.cumsum(mask.sum(axis=1))]).astype(np.int32)
        net[f'{name}_indices'] = np.nonzero(mask)[1].astype(np.int32)
    net['v0'] = (V_R + rng.random(n) * (V_T - V_R)).astype(np.float32)
    return net


def arrivals(net: dict, spikes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Excitatory and inhibitory spike counts arriving at each neuron, from the CSR rows in NumPy."""
    out = []
    for name, offset in (('exc', 0), ('inh', net['n_e'])):
        indptr, indices = np.asarray(net[f'{name}_indptr']), np.asarray(net[f'{name}_indices'])
        key = f'{name}_row_of_entry'  # cached in ``net``: the checker calls this for every answer
        if key not in net:
            net[key] = np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))
        row_of_entry = net[key]
        hit = indices[spikes[offset:offset + len(indptr) - 1][row_of_entry]]
        out.append(np.bincount(hit, minlength=net['n']).astype(np.float64))
    return out[0], out[1]


def numpy_input(net: dict, spikes: np.ndarray) -> np.ndarray:
    """Synaptic input (mV) of every neuron from a boolean spike vector."""
    e, i = arrivals(net, spikes)
    return W_E * e + W_I * i


def numpy_step(net: dict, v, ge, gi, spikes):
    """One network step (dt = 0.1 ms) in float64: returns v, ge, gi, spikes after it, and the free v."""
    v_free = E_L + (v - E_L) * A_M + (ge + gi) * (1 - A_M)
    fired = v_free > V_T
    e, i = arrivals(net, spikes)
    return np.where(fired, V_R, v_free), ge * A_E + W_E * e, gi * A_I + W_I * i, fired, v_free


def jax_functions(net: dict):
    """The served JAX functions, jitted, each taking ``backend=`` (a static argument).

    ``product(spikes)`` is the synaptic input from a boolean spike vector,
    ``product_rows(rows)`` the same for a ``(k, n)`` stack of them (the
    dynamic batcher's call), and ``step(v, ge, gi, spikes)`` one step of
    the network.
    """
    import jax
    import jax.numpy as jnp

    import eventjax as ej

    n, n_e = net['n'], net['n_e']
    one = jnp.ones((1,), jnp.float32)
    exc = (one, jnp.asarray(net['exc_indices']), jnp.asarray(net['exc_indptr']))
    inh = (one, jnp.asarray(net['inh_indices']), jnp.asarray(net['inh_indptr']))

    def inputs(exc, inh, spikes, backend):
        e = ej.binary_csrmv(*exc, spikes[:n_e], shape=(n_e, n), transpose=True, backend=backend)
        i = ej.binary_csrmv(*inh, spikes[n_e:], shape=(n - n_e, n), transpose=True, backend=backend)
        return e, i

    # backend is static: each value is its own compiled program (and jit cache entry).
    jit = functools.partial(jax.jit, static_argnames='backend')

    @jit
    def _product(exc, inh, spikes, backend=None):
        e, i = inputs(exc, inh, spikes, backend)
        return W_E * e + W_I * i

    @jit
    def _product_rows(exc, inh, rows, backend=None):
        # vmap of the event-driven mv folds into one mm per projection.
        return jax.vmap(lambda s: _product(exc, inh, s, backend=backend))(rows)

    @jit
    def _step(exc, inh, v, ge, gi, spikes, backend=None):
        v_free = E_L + (v - E_L) * A_M + (ge + gi) * (1 - A_M)
        fired = v_free > V_T
        e, i = inputs(exc, inh, spikes, backend)
        return jnp.where(fired, V_R, v_free), ge * A_E + W_E * e, gi * A_I + W_I * i, fired

    return {
        'product': lambda spikes, backend=None: _product(exc, inh, spikes, backend=backend),
        'product_rows': lambda rows, backend=None: _product_rows(exc, inh, rows, backend=backend),
        'step': lambda v, ge, gi, spikes, backend=None: _step(exc, inh, v, ge, gi, spikes, backend=backend),
    }
