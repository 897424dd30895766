"""brainevent's rules as numbers, computed on eventjax or on brainevent 0.3.0 in this process.

Every case calls brainevent's public names only, with spikes that are
negative, zero and NaN (events by brainevent's ``!= 0`` rule, not all by
eventjax's ``> 0``), weights that start outside the bounds, and brainunit
units; then brainpy 2.9's ``Dense.stdp_update`` and ``CSRLinear.stdp_update``
with ``w_min=0, w_max=1``. ``test_rules.py`` runs it once per stack and
compares the two files case by case.

    python stack_tests/rules.py --on eventjax|brainevent --out FILE.npz
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

SPIKES = np.array([2., -1., 0., np.nan, 0., -0.5], np.float32)
INT_SPIKES = np.array([1, -3, 0, 2, 0, 0], np.int32)


def _stack(on: str):
    if on == 'eventjax':
        import eventjax as ej
        import eventjax.compat.brainevent as compat

        compat.install(replace_installed=True)
        ej.set_backend('cpu', 'jax')  # the rules, not the kernels: no numba compiles
    import brainevent

    return brainevent


def _error(fn) -> np.ndarray:
    """Which of (AssertionError, MathError, ValueError) the call raised."""
    import brainevent

    try:
        fn()
    except Exception as e:  # noqa: BLE001 (the class is the result)
        return np.array([isinstance(e, AssertionError), isinstance(e, brainevent.MathError),
                         isinstance(e, ValueError)])
    return np.array([False, False, False])


def cases(be) -> dict[str, np.ndarray]:
    import brainunit as u
    import jax.numpy as jnp

    rng = np.random.default_rng(0)
    m, n = SPIKES.size, 4
    dense = rng.uniform(-0.5, 1.5, (m, n)).astype(np.float32)  # some weights outside [0, 1]
    mask = rng.random((m, n)) < 0.6
    pre_trace, post_trace = rng.random(m).astype(np.float32), rng.random(n).astype(np.float32)
    post_spikes = np.array([-1., 0., np.nan, 3.], np.float32)
    out: dict[str, np.ndarray] = {}

    for name, x in (('float', SPIKES), ('int', INT_SPIKES)):
        out[f'dense_product_{name}'] = be.BinaryArray(jnp.asarray(x)) @ jnp.asarray(dense)
        A = be.CSR.fromdense(jnp.asarray(dense * mask))
        out[f'csr_product_{name}'] = be.BinaryArray(jnp.asarray(x)) @ A
        ring = jnp.zeros((3, n), jnp.float32)
        delays = jnp.asarray(rng.integers(1, 3, A.indices.shape), jnp.int32)
        out[f'delay_{name}'] = be.csr_delay_deliver(ring, jnp.asarray(x), A.data, A.indices, A.indptr, delays, 0,
                                                    shape=(m, n))
        out[f'delay_binary_array_{name}'] = be.csr_delay_deliver(ring, be.BinaryArray(jnp.asarray(x)), A.data,
                                                                 A.indices, A.indptr, delays, 0, shape=(m, n))

    W = jnp.asarray(dense)
    out['dense_pre'] = be.update_dense_on_binary_pre(W, jnp.asarray(SPIKES), jnp.asarray(post_trace), 0., 1.)
    out['dense_post'] = be.update_dense_on_binary_post(W, jnp.asarray(pre_trace), jnp.asarray(post_spikes), 0., 1.)
    out['dense_pre_unbounded'] = be.update_dense_on_binary_pre(W, jnp.asarray(SPIKES), jnp.asarray(post_trace))
    out['dense_pre_max_only'] = be.update_dense_on_binary_pre(W, jnp.asarray(SPIKES), jnp.asarray(post_trace),
                                                              None, 1.)

    A = be.CSR.fromdense(jnp.asarray(dense * mask))
    out['csr_pre'] = be.update_csr_on_binary_pre(A.data, A.indices, A.indptr, jnp.asarray(SPIKES),
                                                 jnp.asarray(post_trace), 0., 1., shape=(m, n))
    csc_indptr, csc_rows, perm = be.csr_to_csc_index(A.indptr, A.indices, shape=(m, n))
    out['csr_post'] = be.update_csr_on_binary_post(A.data, csc_rows, csc_indptr, perm, jnp.asarray(pre_trace),
                                                   jnp.asarray(post_spikes), 0., 1., shape=(m, n))
    out['csr_container_pre'] = A.update_on_pre(jnp.asarray(SPIKES), jnp.asarray(post_trace), 0., 1.).todense()
    out['csr_container_post'] = A.update_on_post(jnp.asarray(pre_trace), jnp.asarray(post_spikes), 0., 1.).todense()
    C = be.CSC.fromdense(jnp.asarray(dense * mask))
    out['csc_pre'] = be.update_csc_on_binary_pre(C.data, C.indices, C.indptr, jnp.asarray(SPIKES),
                                                 jnp.asarray(post_trace), 0., 1., shape=(m, n))
    out['csc_post'] = be.update_csc_on_binary_post(C.data, C.indices, C.indptr, jnp.asarray(pre_trace),
                                                   jnp.asarray(post_spikes), 0., 1., shape=(m, n))

    k = 2
    idx = jnp.asarray(np.stack([rng.choice(n, k, replace=False) for _ in range(m)]), jnp.int32)
    fw = jnp.asarray(rng.uniform(-0.5, 1.5, (m, k)).astype(np.float32))
    out['fcn_pre'] = be.update_fixed_post_conn_on_binary_pre(fw, idx, jnp.asarray(SPIKES), jnp.asarray(post_trace),
                                                             0., 1., shape=(m, n))
    pidx = jnp.asarray(np.stack([rng.choice(m, k, replace=False) for _ in range(n)]), jnp.int32)
    pw = jnp.asarray(rng.uniform(-0.5, 1.5, (n, k)).astype(np.float32))
    out['fcn_post'] = be.update_fixed_pre_conn_on_binary_post(pw, pidx, jnp.asarray(pre_trace),
                                                              jnp.asarray(post_spikes), 0., 1., shape=(m, n))

    # Units: weights in mS, the trace in S (converted), bounds in mS.
    q = be.update_dense_on_binary_pre(W * u.mS, jnp.asarray(SPIKES), jnp.asarray(post_trace) * u.siemens * 1e-3,
                                      0. * u.mS, 1. * u.mS)
    out['units_dense_pre'] = q.to_decimal(u.mS)
    q = be.update_csr_on_binary_pre(A.data * u.mS, A.indices, A.indptr, jnp.asarray(SPIKES),
                                    jnp.asarray(post_trace) * u.mS, shape=(m, n))
    out['units_csr_pre'] = q.to_decimal(u.mS)

    out['error_shape'] = _error(lambda: be.BinaryArray(np.ones((2, 3), np.uint8)) @ np.ones((2, 2)))
    out['error_rank0'] = _error(lambda: be.BinaryArray(np.array(1, np.uint8)) @ np.ones((2, 2)))
    return {k: np.asarray(v) for k, v in out.items()}


def brainpy_stdp() -> dict[str, np.ndarray]:
    """brainpy 2.9's layers' ``stdp_update(w_min=0, w_max=1)`` from weights outside the bounds."""
    import brainpy as bp
    import brainpy.math as bm
    import jax.numpy as jnp

    rng = np.random.default_rng(1)
    m, n = SPIKES.size, 4
    start = rng.uniform(-0.5, 1.5, (m, n)).astype(np.float32)
    spikes, post_spikes = jnp.asarray(SPIKES), jnp.asarray(np.array([-1., 0., 1., 0.], np.float32))
    pre_trace, post_trace = jnp.asarray(rng.random(m), jnp.float32), jnp.asarray(rng.random(n), jnp.float32)
    out = {}
    layer = bp.dnn.Dense(m, n, W_initializer=jnp.asarray(start), b_initializer=None)
    layer.stdp_update(on_pre={'spike': spikes, 'trace': post_trace},
                      on_post={'spike': post_spikes, 'trace': pre_trace}, w_min=0., w_max=1.)
    out['brainpy_dense_stdp'] = np.asarray(bm.as_jax(layer.W))
    conn = bp.conn.FixedProb(0.5, seed=3)(m, n)
    sparse = bp.dnn.CSRLinear(conn, weight=jnp.asarray(rng.uniform(-0.5, 1.5, conn.require('csr')[0].size),
                                                       jnp.float32))
    sparse.stdp_update(on_pre={'spike': spikes, 'trace': post_trace},
                       on_post={'spike': post_spikes, 'trace': pre_trace}, w_min=0., w_max=1.)
    out['brainpy_csr_stdp'] = np.asarray(bm.as_jax(sparse.weight))
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--on', choices=('eventjax', 'brainevent'), required=True)
    parser.add_argument('--out', required=True)
    args = parser.parse_args(argv)
    be = _stack(args.on)
    np.savez(args.out, **cases(be), **brainpy_stdp())
    return 0


if __name__ == '__main__':
    sys.exit(main())
