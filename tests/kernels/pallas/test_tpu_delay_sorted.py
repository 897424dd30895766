"""Delivery into rings past the whole-ring one-hot block (``pallas_tpu_sorted``), in Pallas's TPU interpreter."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import eventjax as ej
from eventjax.kernels.delay import pallas_tpu, pallas_tpu_sorted
from tests.kernels.delay import oracle
from tests.kernels.pallas.tpu_interpret import BACKEND, tpu_kernels_on_cpu


def _problem(seed, m, n, length, *, weighted, shared_w=False, rate=0.5, dtype=np.float32):
    """Rows of 0 to 11 synapses, one of 300 and one of 140 (past 128 entries, many delays in each)."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(0, 12, m)
    lengths[min(3, m - 1)], lengths[m // 2] = 300, 140
    indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    nnz = int(indptr[-1])
    indices = rng.integers(0, n, nnz).astype(np.int32)
    delays = rng.integers(1, length, nnz).astype(np.int32)
    data = rng.normal(size=1 if shared_w else nnz).astype(np.float32)
    if weighted:
        events = np.where(rng.random(m) < rate, rng.normal(size=m), 0).astype(np.float32)
    else:
        events = rng.random(m) < rate
    ring = rng.normal(size=(length, n)).astype(dtype)
    return ring, events, data, indices, indptr, delays


def _kernel(ring, events, data, indices, indptr, delays, t, *, weighted, layout=False, **options):
    """The kernel itself, interpreted, on the plain form or (``layout``) a delay-sorted layout's packed offsets."""
    shape = (events.shape[0], ring.shape[1])
    if layout:
        lay = ej.CSRDelayLayout.build(data, indices, indptr, delays, shape=shape)
        data, columns, delays = lay.data, lay.offsets, None
    else:
        columns, delays = jnp.asarray(indices), jnp.asarray(delays)
    call = jax.jit(lambda r, e, w, c, d: pallas_tpu_sorted.deliver(
        r, e, w, c, d, jnp.asarray(indptr), jnp.asarray(t), shape=shape, weighted=weighted, interpret=True,
        **options))
    return call(ring, events, jnp.asarray(data), columns, delays)


def _close(got, want, dtype=np.float32):
    assert got.dtype == dtype
    tol = 2e-2 if dtype == np.float16 else 1e-5
    np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=tol, atol=tol, equal_nan=True)


CASES = [  # (m, n, length, weighted, shared_w, layout, t, options)
    (23, 1100, 7, False, False, False, 12, {}),  # odd n past 1,024 columns
    (17, 37, 5, True, True, True, -3, {}),
    # small pieces and windows: a piece spans several windows, passes of 4 rows
    (21, 300, 9, True, False, True, 4, dict(piece=128, window=8, pass_rows=4)),
    pytest.param(19, 301, 11, True, False, False, 4, dict(precise='highest'), marks=pytest.mark.long),
    pytest.param(29, 1031, 3, False, True, True, 2, dict(piece=256, window=16), marks=pytest.mark.long),
]


@pytest.mark.parametrize('m, n, length, weighted, shared_w, layout, t, options', CASES)
def test_sorted_kernel_matches_the_oracle(m, n, length, weighted, shared_w, layout, t, options):
    """Odd sizes, rows past 128 synapses with mixed delays, both forms, shared or per-synapse weights, any ``t``."""
    ring, events, data, indices, indptr, delays = _problem(m + n, m, n, length, weighted=weighted, shared_w=shared_w)
    got = _kernel(ring, events, data, indices, indptr, delays, t, weighted=weighted, layout=layout, **options)
    _close(got, oracle.deliver(ring, events, data, indices, indptr, delays, t, weighted=weighted))


def test_no_events_leave_the_ring_and_all_events_deliver_every_row():
    m, n, length = 13, 45, 6
    ring, _, data, indices, indptr, delays = _problem(4, m, n, length, weighted=False)
    np.testing.assert_array_equal(_kernel(ring, np.zeros(m, bool), data, indices, indptr, delays, 5,
                                          weighted=False, layout=True), ring)
    events = np.ones(m, bool)
    got = _kernel(ring, events, data, indices, indptr, delays, 5, weighted=False, layout=True, pass_rows=5)
    _close(got, oracle.deliver(ring, events, data, indices, indptr, delays, 5, weighted=False))


@pytest.mark.parametrize('piece, window', [(128, 8), (256, 64)])
def test_add_sorted_adds_each_sorted_key_once(piece, window):
    """Keys spread past one window per piece, repeated keys, and keys past the block (dropped)."""
    rng = np.random.default_rng(piece)
    rows = 72
    block = rng.normal(size=(rows, 128)).astype(np.float32)
    keys = np.sort(np.concatenate([rng.integers(0, rows * 128 + 300, 700), np.full(5, 77)])).astype(np.int32)
    coefs = rng.normal(size=keys.shape[0]).astype(np.float32)
    got = pallas_tpu_sorted.add_sorted(jnp.asarray(block), jnp.asarray(keys), jnp.asarray(coefs), piece=piece,
                                       window=window, interpret=True)
    want = block.astype(np.float64).reshape(-1)
    kept = keys < rows * 128
    np.add.at(want, keys[kept], coefs[kept].astype(np.float64))
    np.testing.assert_allclose(np.asarray(got, np.float64).reshape(-1), want, rtol=1e-6, atol=1e-6)


def test_non_finite_terms_reach_only_their_own_targets():
    """NaN and inf weights (and inf + -inf on one target) give IEEE's result; their neighbours stay finite."""
    m, n, length = 11, 200, 5
    ring, events, data, indices, indptr, delays = _problem(8, m, n, length, weighted=True)
    events[3] = 1.5
    first = indptr[3]
    data[first + 5], data[first + 100], data[first + 200] = np.nan, np.inf, -np.inf
    indices[first + 200], delays[first + 200] = indices[first + 100], delays[first + 100]
    data[first + 7] = np.inf
    got = np.asarray(_kernel(ring, events, data, indices, indptr, delays, 2, weighted=True))
    want = oracle.deliver(ring, events, data, indices, indptr, delays, 2, weighted=True)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
    assert np.isnan(want).sum() >= 2 and np.isinf(want).any()
    finite = np.isfinite(want)
    np.testing.assert_allclose(got[finite], want[finite], rtol=1e-5, atol=1e-5)


def test_delivery_past_the_one_hot_limit_takes_the_sorted_kernel(monkeypatch):
    """The operator picks this kernel past ``MAX_TARGETS``: same result as the oracle, under jit and vmap."""
    monkeypatch.setattr(pallas_tpu, 'MAX_TARGETS', 0)
    calls = []
    monkeypatch.setattr(pallas_tpu_sorted, 'add_sorted', lambda *a, f=pallas_tpu_sorted.add_sorted, **k:
                        calls.append(1) or f(*a, **k))
    m, n, length = 9, 131, 4
    ring, events, data, indices, indptr, delays = _problem(6, m, n, length, weighted=False, dtype=np.float16)
    lay = ej.CSRDelayLayout.build(data, indices, indptr, delays, shape=(m, n))
    batch = np.stack([events, ~events])
    with tpu_kernels_on_cpu():
        got = jax.jit(jax.vmap(lambda e: ej.csr_delay_deliver_layout(ring, e, lay, 3, backend=BACKEND)))(batch)
    assert calls
    for k in range(2):
        _close(got[k], oracle.deliver(ring, batch[k], data, indices, indptr, delays, 3, weighted=False), np.float16)


def test_which_problems_fit_the_sorted_kernel():
    assert pallas_tpu_sorted.fits_the_chip(n=77_169, length=64)  # PD14 at full scale
    assert not pallas_tpu_sorted.fits_the_chip(n=1_000_000, length=64)  # the padded ring past VMEM
    assert not pallas_tpu_sorted.fits_the_chip(n=100_000, length=200)
    assert not pallas_tpu.fits_the_chip(m=77_169, nnz=300_000_000, length=64, n=77_169)  # the one-hot kernel's limit


def test_structure_in_int64_under_x64_matches_the_oracle():
    """With ``jax_enable_x64`` on, int64 columns, delays, row pointers and step: the same delivery."""
    m, n, length = 9, 140, 5
    ring, events, data, indices, indptr, delays = _problem(12, m, n, length, weighted=False)
    with jax.enable_x64(True):
        got = _kernel(ring, events, data, indices.astype(np.int64), indptr.astype(np.int64),
                      delays.astype(np.int64), np.int64(7), weighted=False)
    _close(got, oracle.deliver(ring, events, data, indices, indptr, delays, 7, weighted=False))


def _tiled(seed, m, n, length, *, weighted, shared_w=False, longest=3000, layout=False):
    """Rows of 0 to ``longest`` synapses (an empty one among them), stored in whole tiles of 1,024: the entries
    past the last row hold NaN weights, which no row reads. Returns the padded operands for the kernel and the
    plain ones for the oracle."""
    ring, events, data, indices, indptr, delays = _problem(seed, m, n, length, weighted=weighted, shared_w=shared_w)
    rng = np.random.default_rng(seed)
    lengths = rng.integers(0, longest + 1, m)
    lengths[1] = 0
    indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    nnz = int(indptr[-1])
    indices = rng.integers(0, n, nnz).astype(np.int32)
    delays = rng.integers(1, length, nnz).astype(np.int32)
    data = rng.normal(size=1 if shared_w else nnz).astype(np.float32)
    plain = (ring, events, data, indices, indptr, delays)
    pad = max(-nnz % 1024, 1024 if nnz == 0 else 0)
    if layout:
        lay = ej.CSRDelayLayout.build(data, indices, indptr, delays, shape=(m, n))
        columns, weights, delay_arg = np.asarray(lay.offsets), np.asarray(lay.data), None
        columns = np.concatenate([columns, np.full(pad, -1, np.int32)])
    else:
        columns, weights, delay_arg = indices, data, np.concatenate([delays, np.ones(pad, np.int32)])
        columns = np.concatenate([columns, np.zeros(pad, np.int32)])
    if not shared_w:
        weights = np.concatenate([weights, np.full(pad, np.nan, np.float32)])
    return (ring, events, weights, columns, delay_arg, indptr), plain


def _deliver_tiled(ring, events, weights, columns, delays, indptr, t, *, weighted, **options):
    call = jax.jit(lambda r, e, w, c, d: pallas_tpu_sorted.deliver(
        r, e, w, c, d, jnp.asarray(indptr), jnp.asarray(t), shape=(events.shape[0], ring.shape[1]),
        weighted=weighted, interpret=True, **options))
    return call(ring, events, jnp.asarray(weights), jnp.asarray(columns), None if delays is None else
                jnp.asarray(delays))


TILED = [  # (m, n, length, weighted, shared_w, layout, longest, t, options)
    # a budget of 6 tiles: rows end in the next pass, several passes
    (9, 300, 7, False, False, True, 3000, 5, dict(pass_rows=2)),
    (11, 1100, 5, True, True, False, 3000, -2, {}),
    # short rows listed by tiles anyway: rows share a tile, 2 tiles a pass
    (40, 257, 6, True, False, True, 40, 3, dict(tiles=True, pass_rows=1)),
    pytest.param(13, 129, 9, True, False, False, 2500, 11, dict(pass_rows=3, piece=128, window=8),
                 marks=pytest.mark.long),
]


@pytest.mark.parametrize('m, n, length, weighted, shared_w, layout, longest, t, options', TILED)
def test_rows_listed_by_tiles_match_the_oracle(m, n, length, weighted, shared_w, layout, longest, t, options):
    """Rows of up to 3,000 synapses read as whole tiles, a few tiles a pass, both forms, shared weights or not."""
    operands, plain = _tiled(m + n + length, m, n, length, weighted=weighted, shared_w=shared_w, longest=longest,
                             layout=layout)
    got = _deliver_tiled(*operands, t, weighted=weighted, **options)
    _close(got, oracle.deliver(*plain, t, weighted=weighted))


def test_the_tile_listing_is_taken_for_long_rows_in_whole_tiles(monkeypatch):
    """Mean rows of a tile and more in whole tiles: listed by tiles; entries not a multiple of 1,024, or short
    rows: through windows. Every way gives the oracle's ring, and no events leave it unchanged."""
    listed = []
    monkeypatch.setattr(pallas_tpu_sorted, '_by_event_tiles', lambda *a, f=pallas_tpu_sorted._by_event_tiles, **k:
                        listed.append(k['budget']) or f(*a, **k))
    operands, plain = _tiled(3, 6, 200, 5, weighted=False, layout=True, longest=4000)
    _close(_deliver_tiled(*operands, 4, weighted=False), oracle.deliver(*plain, 4, weighted=False))
    assert listed == [32 * (-(-operands[3].shape[0] // 6 // 1024) + 1)]
    np.testing.assert_array_equal(_deliver_tiled(operands[0], np.zeros(6, bool), *operands[2:], 4, weighted=False),
                                  operands[0])
    ring, events, data, indices, indptr, delays = plain  # the same rows, entries not in whole tiles
    _close(_kernel(ring, events, data, indices, indptr, delays, 4, weighted=False, layout=True),
           oracle.deliver(*plain, 4, weighted=False))
    operands, plain = _tiled(4, 30, 200, 5, weighted=False, longest=30)
    _close(_deliver_tiled(*operands, 1, weighted=False), oracle.deliver(*plain, 1, weighted=False))
    _close(_deliver_tiled(*operands, 1, weighted=False, tiles=False), oracle.deliver(*plain, 1, weighted=False))
    assert len(listed) == 2  # the no-event call; none of the others


def test_non_finite_weights_listed_by_tiles_reach_only_their_own_targets():
    operands, plain = _tiled(5, 7, 150, 4, weighted=True, layout=False)
    ring, events, weights, columns, delays, indptr = operands
    row = int(np.argmax(np.diff(indptr)))
    events[row] = 2.0
    first = indptr[row]
    assert indptr[row + 1] - first > 300
    weights[first + 3], weights[first + 200] = np.nan, -np.inf
    plain[2][first + 3], plain[2][first + 200] = np.nan, -np.inf
    got = np.asarray(_deliver_tiled(ring, events, weights, columns, delays, indptr, 2, weighted=True))
    want = oracle.deliver(*plain, 2, weighted=True)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
    finite = np.isfinite(want)
    assert np.isnan(want).any() and np.isinf(want).any() and finite.sum() > want.size // 2
    np.testing.assert_allclose(got[finite], want[finite], rtol=1e-5, atol=1e-5)


def test_the_operator_lists_rows_in_whole_tiles_by_tiles_under_jit_and_vmap(monkeypatch):
    """A layout padded to whole tiles by hand (as PD14's pallas build pads it), a float16 ring, a batch of
    event vectors: the operator's result is the oracle's, and the tile listing ran."""
    monkeypatch.setattr(pallas_tpu, 'MAX_TARGETS', 0)
    listed = []
    monkeypatch.setattr(pallas_tpu_sorted, '_by_event_tiles', lambda *a, f=pallas_tpu_sorted._by_event_tiles, **k:
                        listed.append(1) or f(*a, **k))
    m, n, length = 5, 130, 4
    operands, plain = _tiled(9, m, n, length, weighted=False, layout=True, longest=2500)
    _, _, weights, offsets, _, indptr = operands
    ring = plain[0].astype(np.float16)
    lay = ej.CSRDelayLayout(jnp.asarray(weights), None, jnp.asarray(indptr), None, jnp.asarray(offsets), shape=(m, n),
                            ring_length=length)
    batch = np.stack([np.ones(m, bool), np.arange(m) % 2 == 0])
    with tpu_kernels_on_cpu():
        got = jax.jit(jax.vmap(lambda e: ej.csr_delay_deliver_layout(ring, e, lay, 2, backend=BACKEND)))(batch)
    assert listed
    for k in range(2):
        _close(got[k], oracle.deliver(ring, batch[k], *plain[2:], 2, weighted=False), np.float16)


def test_rows_listed_by_tiles_with_int64_structure_under_x64_match_the_oracle():
    operands, plain = _tiled(14, 6, 140, 5, weighted=False, longest=2500)
    ring, events, weights, columns, delays, indptr = operands
    with jax.enable_x64(True):
        got = _deliver_tiled(ring, events, weights, columns.astype(np.int64), delays.astype(np.int64),
                             indptr.astype(np.int64), np.int64(7), weighted=False, tiles=True, pass_rows=2)
    _close(got, oracle.deliver(*plain, 7, weighted=False))
