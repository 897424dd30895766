"""The pallas TPU kernels compiled and run on a TPU, against a float64 NumPy oracle of the same operation.

Skipped where JAX sees no TPU (CI compiles these kernels for a v5e without one, ``make test-tpu``, and runs
them in Pallas's TPU interpreter). On a TPU machine, in one process (one program holds the chip at a time):

    python -m pytest -q -p no:cacheprovider --noconftest tests/kernels/pallas/test_tpu_chip.py
"""

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import eventjax as ej

if jax.devices()[0].platform != 'tpu':
    pytest.skip('needs a TPU (JAX sees none here)', allow_module_level=True)

# (rows, columns, connections per row): odd sizes, neither multiples of 8 nor of 128.
SHAPES = [(1001, 777, 37), (300, 530, 120)]
COLUMNS = 3  # event columns of the mm products


def _events(rng, n, mm, binary):
    shape = (n, COLUMNS) if mm else (n,)
    if binary:
        return rng.random(shape) < 0.1
    return rng.normal(size=shape).astype(np.float32)


def _csr_rows(rng, lengths, n, homogeneous=False):
    """``(indptr, indices, data)`` of rows of ``lengths`` entries to random columns, random float32 weights."""
    indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    indices = rng.integers(0, n, indptr[-1]).astype(np.int32)
    data = rng.normal(size=1 if homogeneous else indptr[-1]).astype(np.float32)
    return indptr, indices, data


def _csr_dense(indptr, indices, data, n):
    """The float64 matrix of those rows (repeated columns add up)."""
    dense = np.zeros((indptr.size - 1, n))
    np.add.at(dense, (np.repeat(np.arange(indptr.size - 1), np.diff(indptr)), indices),
              np.broadcast_to(data, indices.shape).astype(np.float64))
    return dense


def _oracle(dense, x, transpose):
    x = np.asarray(x)
    x = (x > 0).astype(np.float64) if x.dtype == bool or not np.issubdtype(x.dtype, np.floating) else x
    return (x.T @ dense).T if transpose and x.ndim == 2 else (x @ dense if transpose else dense @ x)


def _check(y, want, dtype):
    y = np.asarray(y, np.float64)
    tol = 1e-4 if dtype == np.float32 else 2e-2
    scale = 1 + np.max(np.abs(want), initial=0)
    assert y.shape == want.shape
    assert np.max(np.abs(y - want), initial=0) / scale < tol


@pytest.mark.parametrize('shape, transpose, mm, binary, homogeneous',
                         list(itertools.product(SHAPES, (True, False), (False, True), (True, False), (False, True))))
@pytest.mark.parametrize('family', ['fcn', 'csr'])
def test_sparse_products_on_the_chip_equal_the_oracle(family, shape, transpose, mm, binary, homogeneous):
    m, n, k = shape
    rng = np.random.default_rng(m + n + k)
    indices = rng.integers(0, n, (m, k)).astype(np.int32)
    weights = rng.normal(size=(1,) if homogeneous else (m, k)).astype(np.float32)
    dense = np.zeros((m, n))
    np.add.at(dense, (np.repeat(np.arange(m), k), indices.reshape(-1)),
              np.broadcast_to(weights, (m, k)).reshape(-1).astype(np.float64))
    x = _events(rng, m if transpose else n, mm, binary)
    name = ('binary_' if binary else '') + family + ('mm' if mm else 'mv')
    op = getattr(ej, name)
    if family == 'fcn':
        args = (jnp.asarray(weights), jnp.asarray(indices), jnp.asarray(x))
    else:
        indptr = np.arange(0, m * k + 1, k, dtype=np.int32)
        args = (jnp.asarray(weights.reshape(-1)), jnp.asarray(indices.reshape(-1)), jnp.asarray(indptr),
                jnp.asarray(x))
    with jax.default_matmul_precision('highest'):
        y = jax.jit(lambda *a: op(*a, shape=(m, n), transpose=transpose, backend='pallas'))(*args)
    _check(y, _oracle(dense, x, transpose), np.float32)


@pytest.mark.parametrize('shape, transpose, mm, binary, dtype',
                         list(itertools.product([(1001, 777), (300, 530)], (True, False),
                                                (False, True), (True, False), (np.float32, np.float16))))
def test_dense_products_on_the_chip_equal_the_oracle(shape, transpose, mm, binary, dtype):
    m, n = shape
    rng = np.random.default_rng(m * n)
    weights = rng.normal(size=(m, n)).astype(dtype)
    x = _events(rng, m if transpose else n, mm, True)
    if not binary:
        x = x.astype(np.float32)  # 0/1 floats: events where > 0
    op = ej.binary_densemm if mm else ej.binary_densemv
    with jax.default_matmul_precision('highest'):
        y = jax.jit(lambda w, s: op(w, s, transpose=transpose, backend='pallas'))(jnp.asarray(weights),
                                                                                 jnp.asarray(x))
    _check(y, _oracle(weights.astype(np.float64), x, transpose), dtype)


def test_nan_weights_of_non_events_stay_out_on_the_chip():
    rng = np.random.default_rng(0)
    weights = rng.normal(size=(300, 530)).astype(np.float32)
    spikes = np.zeros(300, bool)
    spikes[[3, 77, 250]] = True
    weights[5] = np.nan  # a row no event names
    y = ej.binary_densemv(jnp.asarray(weights), jnp.asarray(spikes), transpose=True, backend='pallas')
    want = weights[[3, 77, 250]].astype(np.float64).sum(axis=0)
    _check(y, want, np.float32)


def _csr_problem(rng, m, n, k, length):
    lengths = rng.integers(0, 2 * k, m)
    lengths[1] = 300  # three 128-wide pieces
    indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    nnz = int(indptr[-1])
    return (rng.normal(size=nnz).astype(np.float32), rng.integers(0, n, nnz).astype(np.int32), indptr,
            rng.integers(1, length, nnz).astype(np.int32))


def _delivery_events(rng, m, weighted):
    """A tenth of ``m`` rows with events: normal values (weighted) or True."""
    if weighted:
        return np.where(rng.random(m) < 0.1, rng.normal(size=m), 0).astype(np.float32)
    return rng.random(m) < 0.1


def _delivered(ring, events, data, indices, indptr, delays, t, weighted):
    """The oracle: ``ring[(t + d) % L, j] += w * value`` over every synapse of every event row, in float64."""
    length = ring.shape[0]
    rows = np.repeat(np.arange(events.shape[0]), np.diff(indptr))
    value = (events if weighted else events.astype(np.float64))[rows]
    want = ring.astype(np.float64)
    np.add.at(want, ((t + delays) % length, indices), np.broadcast_to(data, delays.shape).astype(np.float64) * value)
    return want


def _deliver_on_chip(ring, events, data, indices, indptr, delays, t, weighted, layout):
    """The pallas delivery, jitted: the plain form, or a layout built from the same arrays."""
    shape = (events.shape[0], ring.shape[1])
    if layout:
        lay = ej.CSRDelayLayout.build(data, indices, indptr, delays, shape=shape)
        return jax.jit(lambda r, e: ej.csr_delay_deliver_layout(r, e, lay, t, backend='pallas'))(ring, events)
    return jax.jit(lambda r, e: ej.csr_delay_deliver(r, e, data, indices, indptr, delays, t, shape=shape,
                                                     weighted=weighted, backend='pallas'))(ring, events)


@pytest.mark.parametrize('weighted, dtype, layout', [(False, np.float32, False), (True, np.float32, False),
                                                      (False, np.float16, False), (False, np.float32, True)])
def test_delivery_on_the_chip_equals_the_oracle(weighted, dtype, layout):
    m, n, length, t = 1001, 777, 9, 13
    rng = np.random.default_rng(m + length)
    data, indices, indptr, delays = _csr_problem(rng, m, n, 37, length)
    ring = rng.normal(size=(length, n)).astype(dtype)
    events = _delivery_events(rng, m, weighted)
    want = _delivered(ring, events, data.astype(dtype), indices, indptr, delays, t, weighted)
    got = _deliver_on_chip(ring, events, data, indices, indptr, delays, t, weighted, layout)
    assert got.dtype == dtype
    _check(got, want, dtype)


def test_presynaptic_plasticity_on_the_chip_equals_the_oracle():
    m, n, k = 1001, 777, 37
    rng = np.random.default_rng(7)
    spikes = rng.random(m) < 0.1
    trace = rng.normal(size=n).astype(np.float32)
    dense = rng.normal(size=(m, n)).astype(np.float32)
    got = jax.jit(lambda w: ej.dense_on_pre(w, spikes, trace, -1.0, 1.0, backend='pallas'))(dense)
    want = np.where(spikes[:, None], np.clip(dense + trace, -1.0, 1.0), dense)
    _check(got, want, np.float32)
    weight = rng.normal(size=(m, k)).astype(np.float32)
    targets = rng.integers(0, n, (m, k)).astype(np.int32)
    got = jax.jit(lambda w: ej.fcn_on_pre(w, targets, spikes, trace, shape=(m, n), backend='pallas'))(weight)
    _check(got, np.where(spikes[:, None], weight + trace[targets], weight), np.float32)
    ptr = np.arange(0, m * k + 1, k, dtype=np.int32)
    got = jax.jit(lambda w: ej.csr_on_pre(w, targets.reshape(-1), ptr, spikes, trace, shape=(m, n),
                                          backend='pallas'))(weight.reshape(-1))
    _check(got, np.where(spikes[:, None], weight + trace[targets], weight).reshape(-1), np.float32)


@pytest.mark.parametrize('m, n, rate', [(1001, 777, 0.1), (2500, 300, 0.004), (300, 530, 1.0)])
def test_postsynaptic_plasticity_on_the_chip_equals_the_oracle(m, n, rate):
    """Edge blocks of rows and of the last column tile, a few events, every column; NaN and inf traces."""
    rng = np.random.default_rng(m)
    spikes = rng.random(n) < rate
    spikes[-1] = True
    trace = rng.normal(size=m).astype(np.float32)
    trace[[1, 2]] = np.nan, np.inf
    dense = rng.normal(size=(m, n)).astype(np.float32)
    got = jax.jit(lambda w: ej.dense_on_post(w, trace, spikes, -1.0, 1.0, backend='pallas'), donate_argnums=0)(
        jnp.asarray(dense))
    want = np.where(spikes[None, :], np.clip(dense + trace[:, None], -1.0, 1.0), dense)
    np.testing.assert_array_equal(np.isnan(np.asarray(got)), np.isnan(want))
    _check(np.nan_to_num(np.asarray(got)), np.nan_to_num(want), np.float32)
    k = 37
    indices = np.stack([np.sort(rng.choice(n, k, replace=False)) for _ in range(m)]).reshape(-1).astype(np.int32)
    indptr = np.arange(0, m * k + 1, k, dtype=np.int32)
    rows, col_ptr, positions = ej.csr_column_view(indices, indptr, shape=(m, n))
    data = rng.normal(size=m * k).astype(np.float32)
    finite = np.nan_to_num(trace, nan=0.5, posinf=0.25)
    got = jax.jit(lambda w: ej.csr2csc_on_post(w, rows, col_ptr, positions, finite, spikes, -1.0, 1.0,
                                               shape=(m, n), backend='pallas'))(data)
    hit = spikes[indices]
    want = np.where(hit, np.clip(data + np.repeat(finite, k), -1.0, 1.0), data)
    _check(got, want, np.float32)


@pytest.mark.parametrize('binary, n, m, k', [(True, 100_000, 203, 33), (False, 9_000, 203, 33),
                                             (True, 40_000, 5_000, 100), (True, 3_000, 70, 600)])
def test_gathers_over_many_table_rows_on_the_chip(binary, n, m, k):
    """W @ s where x spans many 128-wide table rows (25 unrolled; 71, past 64, looped), over two programs of
    sideways blocks, and with rows of 600 entries (read as stored)."""
    rng = np.random.default_rng(n)
    indices = rng.integers(0, n, (m, k)).astype(np.int32)
    weights = rng.normal(size=(m, k)).astype(np.float32)
    x = _events(rng, n, False, binary)
    op = ej.binary_fcnmv if binary else ej.fcnmv
    y = jax.jit(lambda w, i, s: op(w, i, s, shape=(m, n), transpose=False, backend='pallas'))(
        jnp.asarray(weights), jnp.asarray(indices), jnp.asarray(x))
    xs = (x > 0).astype(np.float64) if binary else x.astype(np.float64)
    _check(y, (weights.astype(np.float64) * xs[indices]).sum(axis=1), np.float32)


@pytest.mark.parametrize('transpose', [True, False])
def test_non_finite_weights_reach_only_their_own_targets_on_the_chip(transpose):
    m, n, k = 300, 530, 20
    rng = np.random.default_rng(9)
    indices = rng.integers(0, n, (m, k)).astype(np.int32)
    weights = rng.normal(size=(m, k)).astype(np.float32)
    weights[4, 3], weights[7, 0], weights[9, 1] = np.nan, np.inf, -np.inf
    spikes = np.ones(m if transpose else n, bool)
    y = jax.jit(lambda w, i, s: ej.binary_fcnmv(w, i, s, shape=(m, n), transpose=transpose, backend='pallas'))(
        jnp.asarray(weights), jnp.asarray(indices), jnp.asarray(spikes))
    want = ej.binary_fcnmv(jnp.asarray(weights), jnp.asarray(indices), jnp.asarray(spikes), shape=(m, n),
                           transpose=transpose, backend='jax')
    y, want = np.asarray(y), np.asarray(want)
    np.testing.assert_array_equal(np.isnan(y), np.isnan(want))
    np.testing.assert_array_equal(np.isinf(y), np.isinf(want))
    finite = np.isfinite(want)
    assert finite.sum() > 0.9 * finite.size
    np.testing.assert_allclose(y[finite], want[finite], rtol=1e-4, atol=1e-3)


def test_csr_rows_longer_than_128_entries_scatter_in_pieces_on_the_chip():
    m, n = 9, 700
    rng = np.random.default_rng(10)
    indptr, indices, data = _csr_rows(rng, np.array([600, 0, 3, 129, 130, 256, 1, 0, 400]), n)
    spikes = np.ones(m, bool)
    spikes[2] = False
    dense = _csr_dense(indptr, indices, data, n)
    y = jax.jit(lambda *a: ej.binary_csrmv(*a, shape=(m, n), transpose=True, backend='pallas'))(
        jnp.asarray(data), jnp.asarray(indices), jnp.asarray(indptr), jnp.asarray(spikes))
    _check(y, _oracle(dense, spikes, True), np.float32)


@pytest.mark.parametrize('homogeneous', [False, True])
def test_csr_entries_in_whole_layout_rows_are_read_in_place_on_the_chip(homogeneous):
    """Entries filling whole 128-wide rows take no padding: the rows ending in the layout's last row (one
    straddling into it, one inside it, empty ones at its end) are fetched with the row before."""
    m, n = 203, 999
    rng = np.random.default_rng(13)
    lengths = np.r_[rng.integers(0, 100, m - 4), 120, 5, 0, 0]
    lengths[0] += -lengths.sum() % 128
    indptr, indices, data = _csr_rows(rng, lengths, n, homogeneous)
    assert indptr[-1] % 128 == 0
    spikes = rng.random(m) < 0.5
    spikes[-4:] = True
    dense = _csr_dense(indptr, indices, data, n)
    y = jax.jit(lambda *a: ej.binary_csrmv(*a, shape=(m, n), transpose=True, backend='pallas'))(
        jnp.asarray(data), jnp.asarray(indices), jnp.asarray(indptr), jnp.asarray(spikes))
    _check(y, _oracle(dense, spikes, True), np.float32)


@pytest.mark.parametrize('family', ['fcn', 'csr'])
def test_float32_coefficients_keep_every_bit_on_the_chip(family):
    """One entry per target: s @ W is each weight exactly (three bfloat16 parts on the MXU); CSR rows of 97
    to 128 entries start at every lane offset of their layout."""
    rng = np.random.default_rng(11)
    m = 41
    lengths = np.full(m, 100) if family == 'fcn' else rng.integers(97, 129, m)
    n = int(lengths.sum())
    indices = rng.permutation(n).astype(np.int32)
    data = (rng.normal(size=n) * 2.0 ** rng.integers(-20, 20, n)).astype(np.float32)
    spikes = jnp.ones(m, bool)
    if family == 'fcn':
        f = lambda w, i, s: ej.binary_fcnmv(w, i, s, shape=(m, n), transpose=True, backend='pallas')  # noqa: E731
        args = (data.reshape(m, 100), indices.reshape(m, 100))
    else:
        indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
        f = lambda w, i, p, s: ej.binary_csrmv(w, i, p, s, shape=(m, n), transpose=True,  # noqa: E731
                                               backend='pallas')
        args = (data, indices, indptr)
    y = jax.jit(f)(*map(jnp.asarray, args), spikes)
    want = np.zeros(n, np.float32)
    want[indices] = data
    np.testing.assert_array_equal(np.asarray(y), want)


@pytest.mark.parametrize('weight', [0.1, np.nan])
def test_a_shared_weight_times_the_count_of_entries_on_the_chip(weight):
    m, n, k = 500, 300, 40
    rng = np.random.default_rng(12)
    indices = rng.integers(0, n // 10, (m, k)).astype(np.int32)  # many entries into each of 30 targets
    spikes = rng.random(m) < 0.5
    y = jax.jit(lambda w, i, s: ej.binary_fcnmv(w, i, s, shape=(m, n), transpose=True, backend='pallas'))(
        jnp.full((1,), weight, jnp.float32), jnp.asarray(indices), jnp.asarray(spikes))
    counts = np.bincount(indices[spikes].reshape(-1), minlength=n)
    want = np.where(counts > 0, counts * np.float64(weight), 0.0)
    y = np.asarray(y)
    np.testing.assert_array_equal(np.isnan(y), np.isnan(want))
    if not np.isnan(weight):
        _check(y, want, np.float32)


@pytest.mark.parametrize('weighted, shared_w, layout, n', [(False, False, True, 5003), (True, False, False, 5003),
                                                           (False, True, False, 5120)])
def test_delivery_into_a_large_ring_on_the_chip_equals_the_oracle(weighted, shared_w, layout, n):
    """A ring past the whole-ring one-hot block (120 x 5,003 or 5,120 entries, whole 128-column rows needing no
    padding): the sorted-target kernel, its pieces over many windows, its event rows in several passes."""
    m, length, t = 1001, 120, 77
    rng = np.random.default_rng(m + length + weighted)
    data, indices, indptr, delays = _csr_problem(rng, m, n, 37, length)
    delays = np.clip(np.round(rng.normal(15, 6, delays.shape[0])), 1, length - 1).astype(np.int32)  # PD14-like
    data = data[:1] if shared_w else data
    ring = rng.normal(size=(length, n)).astype(np.float32)
    events = _delivery_events(rng, m, weighted)
    want = _delivered(ring, events, data, indices, indptr, delays, t, weighted)
    got = _deliver_on_chip(ring, events, data, indices, indptr, delays, t, weighted, layout)
    _check(got, want, np.float32)
    _check(got, np.asarray(ej.csr_delay_deliver(ring, events, data, indices, indptr, delays, t, shape=(m, n),
                                                weighted=weighted, backend='jax'), np.float64), np.float32)


@pytest.mark.parametrize('weighted, layout', [(False, True), (True, False)])
def test_long_rows_in_whole_tiles_into_a_large_ring_on_the_chip_equal_the_oracle(weighted, layout):
    """Rows of 0 to 4,000 synapses stored in whole tiles of 1,024 (padded past the last row, as PD14's pallas
    build pads them): the sorted-target kernel with its rows listed by tiles, several passes an update."""
    m, n, length, t = 300, 5003, 120, 41
    rng = np.random.default_rng(m + weighted)
    data, indices, indptr, delays = _csr_problem(rng, m, n, 2000, length)
    ring = rng.normal(size=(length, n)).astype(np.float32)
    events = np.where(rng.random(m) < 0.2, rng.normal(size=m), 0).astype(np.float32) if weighted else \
        rng.random(m) < 0.2
    want = _delivered(ring, events, data, indices, indptr, delays, t, weighted)
    pad = -indices.shape[0] % 1024
    if layout:
        lay = ej.CSRDelayLayout.build(data, indices, indptr, delays, shape=(m, n))
        lay = ej.CSRDelayLayout(jnp.concatenate([lay.data, jnp.zeros(pad, jnp.float32)]), None, lay.indptr, None,
                                jnp.concatenate([lay.offsets, jnp.full(pad, -1, jnp.int32)]), shape=(m, n),
                                ring_length=length)
        got = jax.jit(lambda r, e: ej.csr_delay_deliver_layout(r, e, lay, t, backend='pallas'))(ring, events)
    else:
        data, indices, delays = (np.concatenate([a, np.full(pad, v, a.dtype)]) for a, v in
                                 ((data, 0), (indices, 0), (delays, 1)))
        got = jax.jit(lambda r, e: ej.csr_delay_deliver(r, e, data, indices, indptr, delays, t, shape=(m, n),
                                                        weighted=weighted, backend='pallas'))(ring, events)
    _check(got, want, np.float32)


def test_non_finite_weights_in_a_large_ring_reach_only_their_own_targets_on_the_chip():
    m, n, length, t = 300, 5003, 120, 3
    rng = np.random.default_rng(11)
    data, indices, indptr, delays = _csr_problem(rng, m, n, 37, length)
    data[indptr[1] + 4], data[indptr[1] + 200] = np.nan, np.inf
    ring = np.zeros((length, n), np.float32)
    events = np.ones(m, bool)
    got = np.asarray(jax.jit(lambda r: ej.csr_delay_deliver(r, events, data, indices, indptr, delays, t,
                                                            shape=(m, n), backend='pallas'))(ring))
    want = np.asarray(ej.csr_delay_deliver(ring, events, data, indices, indptr, delays, t, shape=(m, n),
                                           backend='jax'))
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
    finite = np.isfinite(want)
    np.testing.assert_allclose(got[finite], want[finite], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize('mm, binary, homogeneous', [(False, True, False), (False, False, True), (True, True, True),
                                                     (True, False, False)])
def test_csr_rows_of_unequal_length_sum_as_running_sums_on_the_chip(mm, binary, homogeneous):
    """W @ s over rows of 0 to 700 entries, 80,000 entries in all: the running sums cross layout rows and blocks
    of 256 of them; one row of 1e30 and one of NaN sit among finite rows, which keep their own sums."""
    m, n = 1500, 3001
    rng = np.random.default_rng(20 + 2 * mm + binary)
    lengths = rng.integers(0, 107, m)
    lengths[[7, 700, 701]] = 700, 0, 300
    indptr, indices, data = _csr_rows(rng, lengths, n, homogeneous)
    x = _events(rng, n, mm, binary)
    if not homogeneous:
        data[indptr[100]:indptr[101]] = 1e30
        data[indptr[300]:indptr[301]] = np.nan
    dense = _csr_dense(indptr, indices, data, n)
    with np.errstate(invalid='ignore'):
        want = _oracle(dense, x, False)
    name = ('binary_' if binary else '') + ('csrmm' if mm else 'csrmv')
    with jax.default_matmul_precision('highest'):
        y = jax.jit(lambda *a: getattr(ej, name)(*a, shape=(m, n), transpose=False, backend='pallas'))(
            jnp.asarray(data), jnp.asarray(indices), jnp.asarray(indptr), jnp.asarray(x))
    y = np.asarray(y, np.float64)
    finite = np.ones(m, bool)
    if not homogeneous:
        finite[[100, 300]] = False
        hit = np.asarray(x)[indices[indptr[300]:indptr[301]]] != 0  # a NaN weight counts only where it meets an event
        np.testing.assert_array_equal(np.isnan(y[300]), hit.any(axis=0))
        np.testing.assert_allclose(y[100], want[100], rtol=1e-4)
    np.testing.assert_allclose(y[finite], want[finite], rtol=1e-4, atol=1e-3 * (1 + np.abs(want[finite]).max()))
