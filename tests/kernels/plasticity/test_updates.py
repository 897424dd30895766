"""Every plasticity update, on every backend, against a NumPy loop: eager, jit, donated, vmap, grad, bad input."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import eventjax as ej
from eventjax.kernels.plasticity.csr2csc_on_post import _csr2csc_on_post
from eventjax.kernels.plasticity.csr_on_pre import _csr_on_pre
from eventjax.kernels.plasticity.dense_on_post import _dense_on_post
from eventjax.kernels.plasticity.dense_on_pre import _dense_on_pre
from eventjax.kernels.plasticity.fcn_on_pre import _fcn_on_pre

M, N, K = 7, 5, 3
LO, HI = -0.1, 0.3


def _bound(v, lo, hi):
    if lo is not None and v < lo:
        return lo
    if hi is not None and v > hi:
        return hi
    return v


def _events(rng, size, kind):
    if kind == 'bool':
        return rng.random(size) < 0.4
    return np.where(rng.random(size) < 0.4, rng.random(size) + 0.1, -rng.random(size)).astype(np.float32)


def _random_csr(rng, m, n):
    rows = [np.sort(rng.choice(n, size=rng.integers(0, n + 1), replace=False)) for _ in range(m)]
    indptr = np.concatenate([[0], np.cumsum([len(r) for r in rows])]).astype(np.int32)
    indices = np.concatenate(rows).astype(np.int32) if rows else np.zeros(0, np.int32)
    return indices, indptr


class UpdateSuite:
    """Subclasses define ``case(rng, kind)`` -> (args, kwargs, expected(lo, hi)) and ``prim``."""

    prim = None

    def call(self, args, kwargs, backend, lo=None, hi=None):
        raise NotImplementedError

    def test_matches_numpy(self, backend):
        for seed, kind in ((0, 'bool'), (1, 'float')):
            args, kwargs, expected = self.case(np.random.default_rng(seed), kind)
            out = self.call(args, kwargs, backend)
            np.testing.assert_allclose(np.asarray(out), expected(None, None), rtol=1e-6)

    def test_bounds_apply_to_touched_entries_only(self, backend):
        args, kwargs, expected = self.case(np.random.default_rng(2), 'bool')
        out = self.call(args, kwargs, backend, lo=LO, hi=HI)
        np.testing.assert_allclose(np.asarray(out), expected(LO, HI), rtol=1e-6)
        # Entries the events did not reach keep their value, even outside the bounds.
        untouched = expected(None, None) == np.asarray(args[0])
        np.testing.assert_array_equal(np.asarray(out)[untouched], np.asarray(args[0])[untouched])

    def test_float16_weights_with_bounds_match_the_jax_kernel_exactly(self, backend):
        args, kwargs, _ = self.case(np.random.default_rng(3), 'bool')
        args = (np.asarray(args[0]).astype(np.float16), *args[1:])
        out = self.call(args, kwargs, backend, lo=LO, hi=HI)
        assert out.dtype == np.float16
        np.testing.assert_array_equal(np.asarray(out), np.asarray(self.call(args, kwargs, 'jax', lo=LO, hi=HI)))

    def test_jit_with_donation_matches_and_copies_nothing(self, backend):
        args, kwargs, expected = self.case(np.random.default_rng(3), 'bool')
        w, rest = args[0], args[1:]
        f = jax.jit(lambda w: self.call((w, *rest), kwargs, backend), donate_argnums=0)
        compiled = f.lower(jnp.asarray(w)).compile().as_text()
        assert not weight_copies(compiled, w)
        np.testing.assert_allclose(np.asarray(f(jnp.asarray(w))), expected(None, None), rtol=1e-6)

    def test_jit_without_donation_keeps_the_weights(self, backend):
        args, kwargs, expected = self.case(np.random.default_rng(4), 'float')
        w = jnp.asarray(args[0])
        out = jax.jit(lambda w: self.call((w, *args[1:]), kwargs, backend))(w)
        np.testing.assert_allclose(np.asarray(out), expected(None, None), rtol=1e-6)
        np.testing.assert_array_equal(np.asarray(w), args[0])

    def test_no_events_leave_the_weights_unchanged(self, backend):
        args, kwargs, _ = self.case(np.random.default_rng(5), 'bool')
        args = list(args)
        args[self.spike_pos] = np.zeros_like(args[self.spike_pos])
        np.testing.assert_array_equal(np.asarray(self.call(tuple(args), kwargs, backend)), args[0])

    def test_nan_trace_reaches_only_touched_entries(self, backend):
        args, kwargs, expected = self.case(np.random.default_rng(6), 'bool')
        args = list(args)
        args[self.trace_pos] = np.full_like(args[self.trace_pos], np.nan)
        out = np.asarray(self.call(tuple(args), kwargs, backend, lo=LO, hi=HI))
        want = self.reference(args, kwargs, LO, HI)  # NaN + w is NaN, and a bound keeps it NaN
        np.testing.assert_array_equal(np.isnan(out), np.isnan(want))
        assert np.isnan(want).any()
        np.testing.assert_array_equal(out[~np.isnan(out)], want[~np.isnan(want)])

    def test_vmap_over_traces(self, backend):
        args, kwargs, expected = self.case(np.random.default_rng(7), 'bool')
        t = self.trace_pos
        traces = np.stack([args[t], 2 * args[t]])

        def one(trace):
            a = list(args)
            a[t] = trace
            return self.call(tuple(a), kwargs, backend)

        out = jax.jit(jax.vmap(one))(jnp.asarray(traces))
        np.testing.assert_allclose(np.asarray(out[0]), expected(None, None), rtol=1e-6)
        delta = expected(None, None) - args[0]
        np.testing.assert_allclose(np.asarray(out[1]), args[0] + 2 * delta, rtol=1e-5, atol=1e-6)

    def test_grad_is_linear_in_weights_and_trace(self, backend):
        args, kwargs, expected = self.case(np.random.default_rng(8), 'bool')
        t = self.trace_pos
        ct = np.random.default_rng(9).random(np.shape(args[0])).astype(np.float32)

        def loss(w, trace):
            a = list(args)
            a[0], a[t] = w, trace
            return jnp.sum(self.call(tuple(a), kwargs, backend) * ct)

        gw, gt = jax.jit(jax.grad(loss, argnums=(0, 1)))(jnp.asarray(args[0]), jnp.asarray(args[t]))
        np.testing.assert_allclose(np.asarray(gw), ct, rtol=1e-6)
        # d/dtrace[j] = sum of ct over the entries trace[j] was added to: finite difference of a linear map.
        a = list(args)
        eps = np.zeros_like(args[t])
        want = []
        for j in range(eps.shape[0]):
            e = eps.copy()
            e[j] = 1.0
            a[t] = e
            a[0] = np.zeros_like(args[0])
            want.append(float(np.sum(expected_with(self, a, kwargs) * ct)))
        np.testing.assert_allclose(np.asarray(gt), want, rtol=1e-5, atol=1e-6)

    def test_grad_is_zero_where_a_bound_clipped(self, backend):
        args, kwargs, expected = self.case(np.random.default_rng(10), 'bool')
        f = lambda w: jnp.sum(self.call((w, *args[1:]), kwargs, backend, lo=LO, hi=HI))
        g = np.asarray(jax.jit(jax.grad(f))(jnp.asarray(args[0])))
        clipped = expected(LO, HI) != expected(None, None)
        assert clipped.any()
        np.testing.assert_array_equal(g, np.where(clipped, 0.0, 1.0))


def weight_copies(hlo: str, w) -> list[str]:
    """The lines of compiled HLO that copy an array of ``w``'s shape (float32)."""
    shape = 'f32[' + ','.join(str(d) for d in np.shape(w)) + ']'
    return [line for line in hlo.splitlines() if ' copy(' in line and shape in line]


def expected_with(suite, args, kwargs):
    """The NumPy reference of ``suite`` on ``args`` (no bounds)."""
    return suite.reference(args, kwargs, None, None)


class TestCsrOnPre(UpdateSuite):
    prim = _csr_on_pre.primitive
    spike_pos, trace_pos = 3, 4

    def case(self, rng, kind):
        indices, indptr = _random_csr(rng, M, N)
        w = rng.standard_normal(indices.shape[0]).astype(np.float32) * 0.2
        args = (w, indices, indptr, _events(rng, M, kind), rng.standard_normal(N).astype(np.float32) * 0.2)
        kwargs = {'shape': (M, N)}
        return args, kwargs, lambda lo, hi: self.reference(args, kwargs, lo, hi)

    def reference(self, args, kwargs, lo, hi):
        w, indices, indptr, spikes, trace = (np.asarray(a) for a in args)
        out = w.copy()
        for i in range(kwargs['shape'][0]):
            if spikes[i] > 0:
                for k in range(indptr[i], indptr[i + 1]):
                    out[k] = _bound(out[k] + trace[indices[k]], lo, hi)
        return out

    def call(self, args, kwargs, backend, lo=None, hi=None):
        return ej.csr_on_pre(*args, lo, hi, backend=backend, **kwargs)

    def test_a_max_row_length_shorter_than_a_row_costs_time_not_entries(self, backend):
        args, kwargs, want = self.case(np.random.default_rng(21), 'bool')
        longest = int(np.max(np.diff(args[2])))
        assert longest > 2
        f = jax.jit(lambda ptr: ej.csr_on_pre(args[0], args[1], ptr, *args[3:], backend=backend,
                                              max_row_length=2, **kwargs))
        np.testing.assert_allclose(f(args[2]), want(None, None), rtol=1e-6)

    def test_one_long_row_among_short_ones_updates_every_entry(self, backend):
        # 600 entries in row 3 among rows of 2: read in pieces of a few slots (16, 16, 32, ... 512), and past
        # a max_row_length promise of 40 under jit.
        rng = np.random.default_rng(22)
        lens = np.full(40, 2)
        lens[3] = 600
        indptr = np.concatenate([[0], np.cumsum(lens)]).astype(np.int32)
        indices = rng.integers(0, 50, indptr[-1]).astype(np.int32)
        w = rng.random(indptr[-1]).astype(np.float32)
        trace = rng.standard_normal(50).astype(np.float32) * 0.1
        spikes = rng.random(40) < 0.5
        spikes[3] = True
        want = w.copy()
        for i in np.flatnonzero(spikes):
            want[indptr[i]:indptr[i + 1]] += trace[indices[indptr[i]:indptr[i + 1]]]
        got = ej.csr_on_pre(w, indices, indptr, spikes, trace, shape=(40, 50), backend=backend)
        np.testing.assert_allclose(got, want, rtol=1e-6)
        f = jax.jit(lambda p: ej.csr_on_pre(w, indices, p, spikes, trace, shape=(40, 50), backend=backend,
                                            max_row_length=40))
        np.testing.assert_allclose(f(indptr), want, rtol=1e-6)


class TestCsr2CscOnPost(UpdateSuite):
    prim = _csr2csc_on_post.primitive
    spike_pos, trace_pos = 5, 4

    def case(self, rng, kind):
        indices, indptr = _random_csr(rng, M, N)
        rows, col_ptr, pos = (np.asarray(a) for a in ej.csr_column_view(indices, indptr, shape=(M, N)))
        w = rng.standard_normal(indices.shape[0]).astype(np.float32) * 0.2
        self._csr = (indices, indptr)
        args = (w, rows, col_ptr, pos, rng.standard_normal(M).astype(np.float32) * 0.2, _events(rng, N, kind))
        kwargs = {'shape': (M, N)}
        return args, kwargs, lambda lo, hi: self.reference(args, kwargs, lo, hi)

    def reference(self, args, kwargs, lo, hi):
        w, trace, spikes = np.asarray(args[0]), np.asarray(args[4]), np.asarray(args[5])
        indices, indptr = self._csr
        out = w.copy()
        for i in range(kwargs['shape'][0]):
            for k in range(indptr[i], indptr[i + 1]):
                if spikes[indices[k]] > 0:
                    out[k] = _bound(out[k] + trace[i], lo, hi)
        return out

    def call(self, args, kwargs, backend, lo=None, hi=None):
        return ej.csr2csc_on_post(*args, lo, hi, backend=backend, **kwargs)

    def test_a_max_col_length_shorter_than_a_column_costs_time_not_entries(self, backend):
        args, kwargs, want = self.case(np.random.default_rng(22), 'bool')
        assert int(np.max(np.diff(args[2]))) > 2
        f = jax.jit(lambda ptr: ej.csr2csc_on_post(args[0], args[1], ptr, *args[3:], backend=backend,
                                                   max_col_length=2, **kwargs))
        np.testing.assert_allclose(f(args[2]), want(None, None), rtol=1e-6)


class TestDenseOnPre(UpdateSuite):
    prim = _dense_on_pre.primitive
    spike_pos, trace_pos = 1, 2

    def case(self, rng, kind):
        args = (rng.standard_normal((M, N)).astype(np.float32) * 0.2, _events(rng, M, kind),
                rng.standard_normal(N).astype(np.float32) * 0.2)
        return args, {}, lambda lo, hi: self.reference(args, {}, lo, hi)

    def reference(self, args, kwargs, lo, hi):
        w, spikes, trace = (np.asarray(a) for a in args)
        out = w.copy()
        for i in np.flatnonzero(spikes > 0):
            out[i] = [_bound(v, lo, hi) for v in out[i] + trace]
        return out

    def call(self, args, kwargs, backend, lo=None, hi=None):
        return ej.dense_on_pre(*args, lo, hi, backend=backend)


class TestDenseOnPost(UpdateSuite):
    prim = _dense_on_post.primitive
    spike_pos, trace_pos = 2, 1

    def case(self, rng, kind):
        args = (rng.standard_normal((M, N)).astype(np.float32) * 0.2, rng.standard_normal(M).astype(np.float32) * 0.2,
                _events(rng, N, kind))
        return args, {}, lambda lo, hi: self.reference(args, {}, lo, hi)

    def reference(self, args, kwargs, lo, hi):
        w, trace, spikes = (np.asarray(a) for a in args)
        out = w.copy()
        for j in np.flatnonzero(spikes > 0):
            out[:, j] = [_bound(v, lo, hi) for v in out[:, j] + trace]
        return out

    def call(self, args, kwargs, backend, lo=None, hi=None):
        return ej.dense_on_post(*args, lo, hi, backend=backend)


class TestFcnOnPre(UpdateSuite):
    prim = _fcn_on_pre.primitive
    spike_pos, trace_pos = 2, 3

    def case(self, rng, kind):
        indices = np.stack([rng.choice(N, K, replace=False) for _ in range(M)]).astype(np.int32)
        args = (rng.standard_normal((M, K)).astype(np.float32) * 0.2, indices, _events(rng, M, kind),
                rng.standard_normal(N).astype(np.float32) * 0.2)
        kwargs = {'shape': (M, N)}
        return args, kwargs, lambda lo, hi: self.reference(args, kwargs, lo, hi)

    def reference(self, args, kwargs, lo, hi):
        w, indices, spikes, trace = (np.asarray(a) for a in args)
        out = w.copy()
        for i in np.flatnonzero(spikes > 0):
            out[i] = [_bound(v, lo, hi) for v in out[i] + trace[indices[i]]]
        return out

    def call(self, args, kwargs, backend, lo=None, hi=None):
        return ej.fcn_on_pre(*args, lo, hi, backend=backend, **kwargs)


class TestChecks:
    def test_homogeneous_weight_is_refused_with_the_fix(self):
        with pytest.raises(ValueError, match='one homogeneous value.*materialise'):
            ej.csr_on_pre(0.5, np.array([0, 1]), np.array([0, 2]), np.array([True]), np.ones(2), shape=(1, 2))

    def test_homogeneous_dense_weight_is_refused(self):
        with pytest.raises(ValueError, match='one homogeneous value'):
            ej.dense_on_pre(jnp.float32(0.5), np.array([True]), np.ones(2, np.float32))

    def test_bounds_in_the_wrong_order_are_refused(self):
        with pytest.raises(ValueError, match='w_min = 1.0 must not exceed w_max = 0.0'):
            ej.dense_on_pre(jnp.zeros((1, 2)), np.array([True]), np.ones(2, np.float32), 1.0, 0.0)

    def test_traced_bound_says_to_pass_a_number(self):
        f = jax.jit(lambda hi: ej.dense_on_pre(jnp.zeros((1, 2)), np.array([True]), np.ones(2, np.float32), None, hi))
        with pytest.raises(TypeError, match='w_max must be a Python number'):
            f(1.0)

    def test_trace_of_the_wrong_length_names_it(self):
        with pytest.raises(ValueError, match='post_trace must have length 2'):
            ej.dense_on_pre(jnp.zeros((1, 2)), np.array([True]), np.ones(3, np.float32))

    def test_bad_concrete_structure_is_refused(self):
        with pytest.raises(ValueError, match='indices\\[1\\] = 7 is outside'):
            ej.csr_on_pre(jnp.zeros(2), np.array([0, 7]), np.array([0, 2]), np.array([True]), np.ones(3),
                          shape=(1, 3))

    @pytest.mark.parametrize('backend', ('jax', 'numba', 'warp'))
    def test_unvalidated_bad_entries_are_skipped_on_every_backend(self, backend):
        out = ej.csr_on_pre(jnp.zeros(3), np.array([0, 7, 2]), np.array([0, 3]), np.array([True]),
                            np.ones(3, np.float32), shape=(1, 3), validate=False, backend=backend)
        np.testing.assert_array_equal(np.asarray(out), [1.0, 0.0, 1.0])

    def test_column_view_lists_each_column_in_row_order(self):
        rows, ptr, pos = ej.csr_column_view(np.array([1, 0, 1]), np.array([0, 2, 3]), shape=(2, 2))
        traced = jax.jit(lambda i, p: ej.csr_column_view(i, p, shape=(2, 2)))(jnp.array([1, 0, 1]),
                                                                             jnp.array([0, 2, 3]))
        for a, b in zip((rows, ptr, pos), traced):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
        assert np.asarray(pos).tolist() == [1, 0, 2]


@pytest.mark.parametrize('rate', [0.01, 0.2, 0.9])
def test_event_driven_jax_kernels_match_numpy_with_few_and_many_events(rate):
    # 300 neurons: the compaction has capacities 9, 37 and 150, so the rates take the compacted and full paths.
    m, n = 300, 40
    rng = np.random.default_rng(11)
    indices, indptr = _random_csr(rng, m, n)
    w = rng.standard_normal(indices.shape[0]).astype(np.float32) * 0.2
    pre, post = rng.random(m) < rate, rng.random(n) < rate
    pre_trace, post_trace = rng.standard_normal(m).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    csr_pre = TestCsrOnPre()
    want = csr_pre.reference((w, indices, indptr, pre, post_trace), {'shape': (m, n)}, LO, HI)
    got = jax.jit(lambda w: ej.csr_on_pre(w, indices, indptr, pre, post_trace, LO, HI, shape=(m, n), backend='jax'),
                  donate_argnums=0)(jnp.asarray(w))
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)
    rows, col_ptr, pos = ej.csr_column_view(indices, indptr, shape=(m, n))
    dense = np.zeros((m, n), np.float32)
    dense[np.repeat(np.arange(m), np.diff(indptr)), indices] = w
    got = ej.csr2csc_on_post(w, rows, col_ptr, pos, pre_trace, post, LO, HI, shape=(m, n), backend='jax')
    stored = dense != 0
    want = np.where(stored & post[None, :], np.clip(dense + pre_trace[:, None], LO, HI), dense)
    np.testing.assert_allclose(np.asarray(got), want[np.repeat(np.arange(m), np.diff(indptr)), indices], rtol=1e-6)
    W = rng.standard_normal((m, n)).astype(np.float32) * 0.2
    np.testing.assert_allclose(np.asarray(ej.dense_on_pre(W, pre, post_trace, LO, HI, backend='jax')),
                               np.where(pre[:, None], np.clip(W + post_trace, LO, HI), W), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(ej.dense_on_post(W, pre_trace, post, LO, HI, backend='jax')),
                               np.where(post[None, :], np.clip(W + pre_trace[:, None], LO, HI), W), rtol=1e-6)
    idx = rng.integers(0, n, (m, 4)).astype(np.int32)
    Wf = rng.standard_normal((m, 4)).astype(np.float32) * 0.2
    np.testing.assert_allclose(np.asarray(ej.fcn_on_pre(Wf, idx, pre, post_trace, LO, HI, shape=(m, n),
                                                        backend='jax')),
                               np.where(pre[:, None], np.clip(Wf + post_trace[idx], LO, HI), Wf), rtol=1e-6)
