"""The differential check of delayed delivery: drawn problems, every backend, every transformation.

``deliveries()`` draws a problem (sizes 0-9 rows and columns, rings of 1-5
steps, shared or per-synapse weights and delays, float16/32 rings,
bool/float events with NaN, NaN/Inf weights, delays and columns outside
their range, binary or weighted); :func:`check_delivery` runs it on each
backend eager, under ``jit``, ``vmap`` (a batch of two event vectors) and
``grad`` (w.r.t. the weights), and compares with the dense NumPy oracle of
``tests/kernels/delay/oracle.py``. Concrete bad delays or columns must raise
``ValueError`` on every backend; traced ones are dropped as the oracle drops them.
:func:`check_layout_delivery` runs the same problem through
``CSRDelayLayout`` (packed offsets, its own primitive): built from concrete
arrays (bad ones raise ``ValueError``, at the build or by the ring's shape)
and from traced ones inside ``jit`` (bad synapses dropped).
"""

from __future__ import annotations

import functools

import hypothesis.strategies as st
import jax
import jax.numpy as jnp
import numpy as np

import eventjax as ej
from tests.kernels.delay import oracle


@st.composite
def deliveries(draw):
    m, n, length = draw(st.sampled_from((0, 1, 4, 9))), draw(st.sampled_from((0, 1, 6))), draw(st.integers(1, 5))
    counts = draw(st.lists(st.integers(0, 4), min_size=m, max_size=m))
    indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
    nnz = int(indptr[-1])
    broken = draw(st.booleans())
    cols = draw(st.lists(st.integers(-1 if broken else 0, n if broken else max(n - 1, 0)), min_size=nnz,
                         max_size=nnz)) if n or broken else [0] * nnz
    dtype = draw(st.sampled_from((np.float32, np.float16)))
    special = st.sampled_from((np.nan, np.inf, -1.5, 0.0, 2.0))
    shared_w = draw(st.booleans())
    data = np.array(draw(st.lists(special, min_size=1 if shared_w else nnz, max_size=1 if shared_w else nnz)), dtype)
    shared_d = draw(st.booleans())
    lo, hi = (-1, length) if broken else (1, max(length - 1, 1))
    delays = np.array(draw(st.lists(st.integers(lo, hi), min_size=1 if shared_d else nnz,
                                    max_size=1 if shared_d else nnz)), np.int32)
    weighted = draw(st.booleans())
    values = st.sampled_from((0.0, 1.0, -2.0, 0.5, np.nan)) if weighted else st.booleans()
    events = np.array(draw(st.lists(values, min_size=m, max_size=m)), np.float32 if weighted else bool)
    ring = np.array(draw(st.lists(st.sampled_from((0.0, 1.0, -0.5)), min_size=length * n, max_size=length * n)),
                    dtype).reshape(length, n)
    t = draw(st.integers(-7, 7))
    return dict(ring=ring, events=events, data=data, indices=np.array(cols, np.int32), indptr=indptr, delays=delays,
                t=t, shape=(m, n), weighted=weighted)


def _deliver(p, backend, ring=None, events=None, data=None, delays=None):
    return ej.csr_delay_deliver(p['ring'] if ring is None else ring, p['events'] if events is None else events,
                                p['data'] if data is None else data, p['indices'], p['indptr'],
                                p['delays'] if delays is None else delays, p['t'], shape=p['shape'],
                                weighted=p['weighted'], backend=backend)


def _bad(p) -> bool:
    length, n = p['ring'].shape
    d, cols = p['delays'], p['indices'][:int(p['indptr'][-1])]
    return bool(np.any((d < 1) | (d >= length)) or np.any((cols < 0) | (cols >= n)))


def _close(got, want, dtype, what):
    tol = 2e-2 if dtype == np.float16 else 1e-5
    np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=tol, atol=tol, equal_nan=True, err_msg=what)


def _oracle(p, events=None):
    return oracle.deliver(p['ring'], p['events'] if events is None else events, p['data'], p['indices'],
                          p['indptr'], p['delays'], p['t'], weighted=p['weighted'])


def _eager(p, deliver, where) -> int:
    """One eager comparison: bad structure must raise ``ValueError``, good structure match the oracle."""
    if not _bad(p):
        _close(deliver(), _oracle(p), p['ring'].dtype, f'eager {where}')
        return 1
    try:
        deliver()
    except ValueError:
        return 1
    raise AssertionError(f'eager call with bad structure did not raise ValueError: {where}')


def check_delivery(p, backends) -> int:
    """Check problem ``p`` on each of ``backends``; returns the number of comparisons made (raises on a mismatch)."""
    comparisons = 0
    dtype = p['ring'].dtype
    for backend in backends:
        where = f'{backend} on {p}'
        comparisons += _eager(p, lambda b=backend: _deliver(p, b), where)
        # Traced structure: the bad entries are dropped as the oracle drops them.
        jitted = jax.jit(lambda d, dl, b=backend: _deliver(p, b, data=d, delays=dl))(p['data'], p['delays'])
        _close(jitted, _oracle(p), dtype, f'jit {where}')
        batch = np.stack([p['events'], p['events'][::-1]])
        vm = jax.jit(jax.vmap(lambda e, dl, b=backend: _deliver(p, b, events=e, delays=dl), in_axes=(0, None)))(
            batch, p['delays'])
        for k in range(2):
            _close(vm[k], _oracle(p, batch[k]), dtype, f'vmap {where}')
        comparisons += 3
        if dtype == np.float32 and np.isfinite(p['data']).all() and np.isfinite(p['ring']).all() \
                and (p['weighted'] is False or np.isfinite(p['events']).all()):
            cot = np.linspace(-1, 1, p['ring'].size, dtype=np.float32).reshape(p['ring'].shape)
            grad = jax.jit(jax.grad(lambda d, dl, b=backend, c=cot: jnp.sum(_deliver(p, b, data=d, delays=dl) * c)))(
                p['data'], p['delays'])
            _close(grad, _weight_grad(p, cot), np.float32, f'jit(grad) {where}')
            comparisons += 1
    return comparisons


def _weight_grad(p, cot):
    """The oracle's derivative w.r.t. the weights: ``value * cot[slot, column]`` per kept synapse."""
    length, n = cot.shape
    nnz = p['indices'].shape[0]
    out = np.zeros(nnz)
    for i in range(p['shape'][0]):
        x = p['events'][i]
        value = (float(x) if x != 0 else None) if p['weighted'] else (1.0 if x else None)
        if value is None:
            continue
        for k in range(p['indptr'][i], p['indptr'][i + 1]):
            d = int(p['delays'][0] if p['delays'].size == 1 else p['delays'][k])
            j = int(p['indices'][k])
            if 1 <= d < length and 0 <= j < n:
                out[k] += value * cot[(p['t'] + d) % length, j]
    return np.array([out.sum()]) if p['data'].size == 1 and nnz != 1 else out


def _layout_deliver(p, backend, data, delays, events=None):
    lay = ej.CSRDelayLayout.build(data, p['indices'], p['indptr'], delays, shape=p['shape'])
    return ej.csr_delay_deliver_layout(p['ring'], p['events'] if events is None else events, lay, p['t'],
                                       weighted=p['weighted'], backend=backend)


def check_layout_delivery(p, backends) -> int:
    """Check problem ``p`` through a :class:`~eventjax.CSRDelayLayout` on each of ``backends``; returns the count."""
    comparisons = 0
    dtype = p['ring'].dtype
    for backend in backends:
        where = f'layout {backend} on {p}'
        comparisons += _eager(p, lambda b=backend: _layout_deliver(p, b, p['data'], p['delays']), where)
        # Built from traced arrays: no ring length known, bad synapses dropped at the call.
        jitted = jax.jit(lambda d, dl, b=backend: _layout_deliver(p, b, d, dl))(p['data'], p['delays'])
        _close(jitted, _oracle(p), dtype, f'jit {where}')
        batch = np.stack([p['events'], p['events'][::-1]])
        vm = jax.jit(jax.vmap(lambda e, dl, b=backend: _layout_deliver(p, b, p['data'], dl, events=e),
                              in_axes=(0, None)))(batch, p['delays'])
        for k in range(2):
            _close(vm[k], _oracle(p, batch[k]), dtype, f'vmap {where}')
        comparisons += 2
    return comparisons


@functools.cache
def layout_backends() -> tuple[str, ...]:
    """The layout delivery's backends on JAX's default platform, ``jax`` first."""
    from eventjax.kernels.delay.layout import _csr_delay_deliver_layout
    return _backends_of(_csr_delay_deliver_layout)


@functools.cache
def delivery_backends() -> tuple[str, ...]:
    """The delivery operator's backends on JAX's default platform, ``jax`` first."""
    from eventjax.kernels.delay.csr_delay_deliver import _csr_delay_deliver
    return _backends_of(_csr_delay_deliver)


def _backends_of(delivery) -> tuple[str, ...]:
    platform = 'gpu' if jax.default_backend() in ('gpu', 'cuda', 'rocm') else jax.default_backend()
    names = delivery.primitive.available_backends(platform)
    return tuple(sorted(names, key=lambda b: b != 'jax'))
