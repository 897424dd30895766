"""Generic per-edge rules: the event-driven *_apply_on_* agree with evaluating the rule on every edge and selecting."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import eventjax as ej

M, N = 200, 40  # 200 rows: the compaction has capacities 25 and 100, so few and many events take both paths


def _csr(rng):
    mask = rng.random((M, N)) < 0.15
    indptr = np.concatenate([[0], np.cumsum(mask.sum(1))]).astype(np.int32)
    return np.nonzero(mask)[1].astype(np.int32), indptr


def rule(edge, pre, post, params):
    """A weight and an eligibility trace, changed by both neurons' values."""
    w, e = edge['w'], edge['e']
    return {'w': w + params['lr'] * e * post, 'e': 0.5 * e + pre}


def _naive_on_pre(edge, indices, indptr, spikes, pre, post, params):
    rows = np.repeat(np.arange(M), np.diff(indptr))
    new = jax.vmap(rule, in_axes=(0, 0, 0, None))(edge, pre[rows], post[indices], params)
    fired = np.asarray(spikes)[rows] > 0
    return jax.tree.map(lambda n, o: jnp.where(fired, n, o), new, edge)


@pytest.mark.parametrize('rate', [0.05, 0.9])
def test_csr_apply_on_pre_matches_the_rule_on_every_edge(rate):
    rng = np.random.default_rng(0)
    indices, indptr = _csr(rng)
    nnz = indices.shape[0]
    edge = {'w': jnp.asarray(rng.random(nnz), jnp.float32), 'e': jnp.asarray(rng.random(nnz), jnp.float32)}
    spikes = rng.random(M) < rate
    pre, post = jnp.asarray(rng.random(M), jnp.float32), jnp.asarray(rng.random(N), jnp.float32)
    params = {'lr': jnp.float32(0.1)}
    out = jax.jit(lambda e: ej.csr_apply_on_pre(rule, e, indices, indptr, spikes, pre_vals=pre, post_vals=post,
                                                params=params, shape=(M, N)))(edge)
    want = _naive_on_pre(edge, indices, indptr, spikes, pre, post, params)
    for k in edge:
        np.testing.assert_allclose(out[k], want[k], rtol=1e-6)


def test_csr_apply_on_post_matches_the_rule_on_every_edge():
    rng = np.random.default_rng(1)
    indices, indptr = _csr(rng)
    nnz = indices.shape[0]
    edge = {'w': jnp.asarray(rng.random(nnz), jnp.float32), 'e': jnp.asarray(rng.random(nnz), jnp.float32)}
    spikes = rng.random(N) < 0.2
    pre, post = jnp.asarray(rng.random(M), jnp.float32), jnp.asarray(rng.random(N), jnp.float32)
    params = {'lr': jnp.float32(0.1)}
    out = ej.csr_apply_on_post(rule, edge, indices, indptr, spikes, pre_vals=pre, post_vals=post, params=params,
                               shape=(M, N))
    rows = np.repeat(np.arange(M), np.diff(indptr))
    new = jax.vmap(rule, in_axes=(0, 0, 0, None))(edge, pre[rows], post[indices], params)
    fired = spikes[indices]
    for k in edge:
        np.testing.assert_allclose(out[k], np.where(fired, new[k], edge[k]), rtol=1e-6)


def test_params_are_differentiable_through_the_event_driven_path():
    rng = np.random.default_rng(2)
    indices, indptr = _csr(rng)
    nnz = indices.shape[0]
    edge = {'w': jnp.asarray(rng.random(nnz), jnp.float32), 'e': jnp.asarray(rng.random(nnz), jnp.float32)}
    spikes = rng.random(M) < 0.05
    pre, post = jnp.asarray(rng.random(M), jnp.float32), jnp.asarray(rng.random(N), jnp.float32)

    def loss(lr, fn):
        return jnp.sum(fn(lr)['w'])

    fast = lambda lr: ej.csr_apply_on_pre(rule, edge, indices, indptr, spikes, pre_vals=pre, post_vals=post,
                                          params={'lr': lr}, shape=(M, N))
    slow = lambda lr: _naive_on_pre(edge, indices, indptr, spikes, pre, post, {'lr': lr})
    g = jax.grad(loss)(jnp.float32(0.1), fast)
    assert float(g) > 0
    np.testing.assert_allclose(g, jax.grad(loss)(jnp.float32(0.1), slow), rtol=1e-5)


def test_additive_rule_is_csr_on_pre():
    rng = np.random.default_rng(3)
    indices, indptr = _csr(rng)
    w = jnp.asarray(rng.random(indices.shape[0]), jnp.float32)
    spikes, trace = rng.random(M) < 0.05, jnp.asarray(rng.random(N), jnp.float32)
    out = ej.csr_apply_on_pre(lambda e, pre, post, p: e + post, w, indices, indptr, spikes, post_vals=trace,
                              shape=(M, N))
    np.testing.assert_allclose(out, ej.csr_on_pre(w, indices, indptr, spikes, trace, shape=(M, N), backend='jax'),
                               rtol=1e-6)


def test_fcn_and_dense_rules_touch_only_firing_rows_and_columns():
    rng = np.random.default_rng(4)
    idx = rng.integers(0, N, (M, 3)).astype(np.int32)
    w = jnp.asarray(rng.random((M, 3)), jnp.float32)
    spikes, trace = rng.random(M) < 0.05, jnp.asarray(rng.random(N), jnp.float32)
    add = lambda e, pre, post, p: e + post
    out = ej.fcn_apply_on_pre(add, w, idx, spikes, post_vals=trace, shape=(M, N))
    np.testing.assert_allclose(out, ej.fcn_on_pre(w, idx, spikes, trace, shape=(M, N), backend='jax'), rtol=1e-6)
    W = jnp.asarray(rng.random((M, N)), jnp.float32)
    np.testing.assert_allclose(ej.dense_apply_on_pre(add, W, spikes, post_vals=trace),
                               ej.dense_on_pre(W, spikes, trace, backend='jax'), rtol=1e-6)
    pre_trace, post_spikes = jnp.asarray(rng.random(M), jnp.float32), rng.random(N) < 0.3
    np.testing.assert_allclose(ej.dense_apply_on_post(lambda e, pre, post, p: e + pre, W, post_spikes,
                                                      pre_vals=pre_trace),
                               ej.dense_on_post(W, pre_trace, post_spikes, backend='jax'), rtol=1e-6)


def test_vmap_over_spikes_applies_each_member():
    rng = np.random.default_rng(5)
    indices, indptr = _csr(rng)
    w = jnp.zeros(indices.shape[0], jnp.float32)
    spikes = jnp.asarray(rng.random((2, M)) < 0.05)
    trace = jnp.ones(N, jnp.float32)
    out = jax.vmap(lambda s: ej.csr_apply_on_pre(lambda e, pre, post, p: e + post, w, indices, indptr, s,
                                                 post_vals=trace, shape=(M, N)))(spikes)
    for b in range(2):
        np.testing.assert_allclose(out[b], ej.csr_on_pre(w, indices, indptr, spikes[b], trace, shape=(M, N),
                                                         backend='jax'))


def test_traced_structure_needs_the_longest_row():
    f = jax.jit(lambda i, p: ej.csr_apply_on_pre(lambda e, a, b, c: e, jnp.zeros(2), i, p, jnp.array([True]),
                                                 shape=(1, 2)))
    with pytest.raises(ValueError, match='pass max_row_length='):
        f(jnp.array([0, 1]), jnp.array([0, 2]))


def test_a_max_row_length_below_the_longest_row_is_refused_eagerly_and_nan_under_jit():
    indices, indptr = jnp.array([0, 1, 0, 1, 0]), jnp.array([0, 3, 5])
    add = lambda e, pre, post, p: e + 1.0
    with pytest.raises(ValueError, match='max_row_length=2, but a neuron has 3 edges'):
        ej.csr_apply_on_pre(add, jnp.zeros(5), np.asarray(indices), np.asarray(indptr), jnp.array([True, True]),
                            shape=(2, 2), max_row_length=2)
    f = jax.jit(lambda i, p, s: ej.csr_apply_on_pre(add, jnp.zeros(5), i, p, s, shape=(2, 2), max_row_length=2))
    out = np.asarray(f(indices, indptr, jnp.array([True, True])))
    assert np.isnan(out[:2]).all()  # the long row: never its first edges updated and its tail skipped
    np.testing.assert_array_equal(out[3:], [1.0, 1.0])  # the row within the promise is updated
    np.testing.assert_array_equal(f(indices, indptr, jnp.array([False, True])), [0, 0, 0, 1, 1])


def test_rule_returning_another_structure_is_refused():
    with pytest.raises(TypeError, match='must return the edge state with the structure'):
        ej.csr_apply_on_pre(lambda e, a, b, c: (e, e), jnp.zeros(2), np.array([0, 1]), np.array([0, 2]),
                            jnp.array([True]), shape=(1, 2))
