"""The plasticity updates write in place: donated buffers are reused, a scan carry is never copied.

Also the fast paths at sizes where they differ from the small cases of
``test_updates``: the ``jax`` kernel's loop over chunks of events (many
passes) and the numba kernels' prefetching of the rows ahead (normally only
beyond 4M stored entries), each against a NumPy loop.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from benchmarks.plasticity import weight_copies

import eventjax as ej
from eventjax.kernels.common import compaction
from eventjax.kernels.plasticity import numba_impl

M, N = 300, 40  # the jax kernel's chunk is 8192 // 40 = 204 neurons, so 2% and 90% events take 1 and 2 passes


def _csr(rng, m=M, n=N):
    counts = rng.integers(0, n + 1, m)
    counts[rng.integers(0, m)] = 0  # an empty row among the events
    indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
    indices = np.concatenate([rng.choice(n, c, replace=False) for c in counts]).astype(np.int32)
    return indices, indptr


def _on_pre(w, indices, indptr, spikes, trace, lo, hi):
    out = w.copy()
    for i in np.flatnonzero(spikes):
        for k in range(indptr[i], indptr[i + 1]):
            v = out[k] + trace[indices[k]]
            out[k] = lo if v < lo else hi if v > hi else v
    return out


def _problem(seed, rate):
    rng = np.random.default_rng(seed)
    indices, indptr = _csr(rng)
    w = rng.random(indices.size, dtype=np.float32)
    return w, indices, indptr, rng.random(M) < rate, rng.standard_normal(N).astype(np.float32) * 0.3


@pytest.mark.parametrize('backend', ['jax', 'numba', 'warp'])
def test_donated_update_reuses_the_weights_buffer_and_deletes_the_input(backend):
    w, indices, indptr, spikes, trace = _problem(0, 0.2)
    f = jax.jit(lambda w: ej.csr_on_pre(w, indices, indptr, spikes, trace, 0.0, 1.0, shape=(M, N),
                                        backend=backend), donate_argnums=0)
    x = jnp.asarray(w)
    where = x.unsafe_buffer_pointer()
    y = f(x)
    assert x.is_deleted()
    assert y.unsafe_buffer_pointer() == where
    np.testing.assert_allclose(np.asarray(y), _on_pre(w, indices, indptr, spikes, trace, 0.0, 1.0), rtol=1e-6)


@pytest.mark.parametrize('backend', ['jax', 'numba', 'warp'])
def test_scan_that_learns_keeps_its_carry_in_place(backend):
    # New events every step, as in a simulation: the compiled loop holds no copy of the weights,
    # and the donated carry comes back in the buffer it went in.
    w, indices, indptr, _, trace = _problem(1, 0.0)
    steps = np.random.default_rng(2).random((4, M)) < 0.1

    def run(w, steps):
        step = lambda w, s: (ej.csr_on_pre(w, indices, indptr, s, trace, 0.0, 1.0, shape=(M, N), backend=backend),
                             None)
        return jax.lax.scan(step, w, steps)[0]

    f = jax.jit(run, donate_argnums=0)
    assert weight_copies(f.lower(jnp.asarray(w), steps).compile().as_text(), w.size) == 0
    x = jnp.asarray(w)
    where = x.unsafe_buffer_pointer()
    y = f(x, steps)
    assert y.unsafe_buffer_pointer() == where
    want = w
    for s in steps:
        want = _on_pre(want, indices, indptr, s, trace, 0.0, 1.0)
    np.testing.assert_allclose(np.asarray(y), want, rtol=1e-5)


def test_jax_kernel_copies_no_weights_at_sizes_with_many_events():
    # A lax.switch over event counts fed each branch a copy of the weights; the chunk loop's carry is updated in place.
    w, indices, indptr, spikes, trace = _problem(3, 0.5)
    f = jax.jit(lambda w, s: ej.csr_on_pre(w, indices, indptr, s, trace, shape=(M, N), backend='jax'),
                donate_argnums=0)
    assert weight_copies(f.lower(jnp.asarray(w), spikes).compile().as_text(), w.size) == 0
    W = jnp.asarray(np.random.default_rng(4).random((M, N), dtype=np.float32))
    calls = (lambda W: ej.dense_on_pre(W, spikes, trace, backend='jax'),
             lambda W: ej.dense_on_post(W, jnp.ones(M), spikes[:N], backend='jax'))
    for call in calls:
        text = jax.jit(call, donate_argnums=0).lower(W).compile().as_text()
        assert not [line for line in text.splitlines() if ' copy(' in line and f'f32[{M},{N}]' in line]


@pytest.mark.parametrize('rate', [0.0, 0.02, 0.5, 1.0])
def test_jax_chunk_loop_over_many_passes_matches_numpy(monkeypatch, rate):
    # 64 slots a pass: one neuron (of up to 40 entries) per pass, so every event is its own pass.
    monkeypatch.setattr(compaction, 'CHUNK_SLOTS', 64)
    w, indices, indptr, spikes, trace = _problem(5, rate)
    lo, hi = -0.25, 0.75  # bounds no other test compiles, so the kernel is traced with the patched chunk
    got = jax.jit(lambda w: ej.csr_on_pre(w, indices, indptr, spikes, trace, lo, hi, shape=(M, N), backend='jax'),
                  donate_argnums=0)(jnp.asarray(w))
    np.testing.assert_allclose(np.asarray(got), _on_pre(w, indices, indptr, spikes, trace, lo, hi), rtol=1e-6)
    rows, col_ptr, pos = ej.csr_column_view(indices, indptr, shape=(M, N))
    post = np.random.default_rng(6).random(N) < rate
    pre_trace = np.random.default_rng(7).standard_normal(M).astype(np.float32)
    dense = np.zeros((M, N), np.float32)
    row_of = np.repeat(np.arange(M), np.diff(indptr))
    dense[row_of, indices] = w
    want = np.where(post[None, :], np.clip(dense + pre_trace[:, None], lo, hi), dense)[row_of, indices]
    got = ej.csr2csc_on_post(w, rows, col_ptr, pos, pre_trace, post, lo, hi, shape=(M, N), backend='jax')
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)


@pytest.mark.parametrize('name', ['csr_on_pre', 'csr2csc_on_post'])
def test_numba_prefetching_kernels_match_numpy(monkeypatch, name):
    # The rows ahead are prefetched from 4M stored entries on; lowered to 0, these small problems take that path.
    monkeypatch.setattr(numba_impl, 'PREFETCH_MIN_ENTRIES', 0)
    w, indices, indptr, spikes, trace = _problem(8, 0.3)
    lo, hi = -0.5, 0.5
    if name == 'csr_on_pre':
        kernel = numba_impl.csr_on_pre_kernel()
        out = w.copy()
        kernel(w, indices, indptr, spikes, trace, np.array([lo, hi], np.float32), out)
        want = _on_pre(w, indices, indptr, spikes, trace, lo, hi)
    else:
        rows, col_ptr, pos = (np.asarray(a) for a in ej.csr_column_view(indices, indptr, shape=(M, N)))
        post, pre_trace = spikes[:N], np.linspace(-1, 1, M, dtype=np.float32)
        kernel = numba_impl.csr2csc_on_post_kernel()
        out = w.copy()
        kernel(w, rows, col_ptr, pos, pre_trace, post, np.array([lo, hi], np.float32), out)
        want = w.copy()
        for j in np.flatnonzero(post):
            for c in range(col_ptr[j], col_ptr[j + 1]):
                want[pos[c]] = np.clip(want[pos[c]] + pre_trace[rows[c]], lo, hi)
    np.testing.assert_allclose(out, want, rtol=1e-6)
    assert not np.array_equal(out, w)


def test_numba_bounds_keep_nan_and_clip_inf():
    kernel = numba_impl.csr_on_pre_kernel()
    w = np.array([0.5, np.nan, 0.5, 0.5], np.float32)
    trace = np.array([np.nan, 0.1, np.inf, -np.inf], np.float32)
    out = w.copy()
    kernel(w, np.arange(4, dtype=np.int32), np.array([0, 4], np.int32), np.array([True]), trace,
           np.array([0.0, 1.0], np.float32), out)
    assert np.isnan(out[0]) and np.isnan(out[1])
    assert out[2:].tolist() == [1.0, 0.0]


def test_numba_kernel_repairs_an_unvalidated_indptr_itself():
    # The JAX-side repair is skipped for numba: a decreasing indptr, past the end, is repaired inside.
    w = np.zeros(4, np.float32)
    out = ej.csr_on_pre(w, np.array([0, 1, 0, 1]), np.array([0, 3, 1, 9]), np.array([True, True, True]),
                        np.ones(2, np.float32), shape=(3, 2), validate=False, backend='numba')
    ref = ej.csr_on_pre(w, np.array([0, 1, 0, 1]), np.array([0, 3, 1, 9]), np.array([True, True, True]),
                        np.ones(2, np.float32), shape=(3, 2), validate=False, backend='jax')
    np.testing.assert_array_equal(np.asarray(out), [1.0, 1.0, 1.0, 1.0])
    np.testing.assert_array_equal(np.asarray(out), np.asarray(ref))


def test_numba_bounds_are_an_operand_so_every_pair_shares_one_handler():
    # Compiled into the kernel, each pair of bounds cost a numba compilation (seconds); as an operand, none.
    pytest.importorskip('numba')
    from eventjax.backends.numba import bridge as numba_bridge  # noqa: PLC0415

    w, indices, indptr, spikes, trace = _problem(8, 0.5)
    ej.csr_on_pre(w, indices, indptr, spikes, trace, -1.0, 1.0, shape=(M, N), backend='numba')
    before = numba_bridge.target_count()
    for lo, hi in [(-0.01, 0.02), (None, 0.03), (0.0, None), (None, None)]:
        got = ej.csr_on_pre(w, indices, indptr, spikes, trace, lo, hi, shape=(M, N), backend='numba')
        want = _on_pre(w, indices, indptr, spikes, trace, -np.inf if lo is None else lo, np.inf if hi is None else hi)
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)
    assert numba_bridge.target_count() == before

