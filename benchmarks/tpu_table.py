"""The rows of ``eventjax bench``'s TPU table: each product and update timed in a jitted loop and per call.

A row is one operator, size and backend on one device. It is timed twice:
per jitted call (best of a few; on a TPU a call costs ~125 us of dispatch
whatever it does) and inside one jitted ``lax.fori_loop`` whose steps each
change the events (so nothing is hoisted), which is the kernel's own cost.
Each row runs in a worker thread under a time box: past it the row reads
``timed out`` and the table goes on. Each product is checked against a
float64 NumPy product of the same connections.

Example:
    >>> import jax
    >>> from benchmarks import tpu_table
    >>> rows = tpu_table.product_rows(64, jax.devices('cpu')[0], ['jax'], ops=['binary_csrmv'], compare=False)
    >>> sorted({(r.backend, r.transpose) for r in rows})[:2]
    [('dense', False), ('dense', True)]
"""

from __future__ import annotations

import dataclasses
import threading
import time

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from benchmarks.tpu_delivery import _steps as update_steps

__all__ = ['PRODUCTS', 'UPDATES', 'Row', 'RowTimeout', 'abandoned', 'boxed', 'product_rows', 'update_rows']

# (operator, family, event kinds): every standard operator with a pallas TPU kernel, bool and float events
PRODUCTS = (('binary_densemv', 'dense', ('bool', 'f32')), ('binary_densemm', 'dense', ('bool',)),
            ('binary_csrmv', 'csr', ('bool', 'f32')), ('csrmv', 'csr', ('f32',)),
            ('binary_csrmm', 'csr', ('bool',)), ('csrmm', 'csr', ('f32',)),
            ('binary_fcnmv', 'fcn', ('bool', 'f32')), ('fcnmv', 'fcn', ('f32',)),
            ('binary_fcnmm', 'fcn', ('bool',)), ('fcnmm', 'fcn', ('f32',)))
UPDATES = ('csr_delay_deliver', 'csr_delay_deliver_layout', 'fcn_delay_deliver', 'dense_on_pre', 'fcn_on_pre',
           'csr_on_pre')
K_PRODUCTS, K_UPDATES, RING, COLUMNS = 100, 80, 16, 16
DENSE_LIMIT = 20000  # no dense matrix above this many neurons (1.6 GB of float32 at 20,000)
MISMATCH = 1e-3  # a result further than this from the NumPy product (relative to its largest value) is flagged
_LOOP_TARGET_S, _REPEATS = 0.2, 5
_abandoned: list[threading.Thread] = []


@dataclasses.dataclass
class Row:
    """One measurement: ``loop_us`` in the jitted loop, ``call_us`` per call; ``error`` instead if it failed."""

    section: str  # 'products', 'updates' or 'models'
    op: str
    n: int
    backend: str  # an eventjax backend, 'brainevent', or 'dense' (the jnp float32 product of the same matrix)
    events: str = ''  # 'bool' or 'f32' (float events: 2% nonzero values)
    transpose: bool | None = None
    loop_us: float | None = None
    call_us: float | None = None
    first_s: float | None = None  # the first call: tracing, compiling, one run
    error: str | None = None  # 'timed out after ... s', or the exception's first line
    diff: float | None = None  # max |result - NumPy| / (1 + max |NumPy|)
    extra: dict = dataclasses.field(default_factory=dict)


class RowTimeout(TimeoutError):
    """A row ran past its time box."""


def abandoned() -> bool:
    """Whether a timed-out row's thread still runs (the process should then exit without waiting for it)."""
    return any(t.is_alive() for t in _abandoned)


def boxed(fn, seconds: float, device):
    """``fn(deadline)`` in a worker thread with ``device`` the default; its result, or :class:`RowTimeout`.

    A cooperative ``fn`` stops at ``deadline`` itself; one stuck in a single call (a compile, a kernel) is
    left running in its daemon thread and the row reads timed out.
    """
    result = {}

    def work():
        try:
            with jax.default_device(device):  # jax's default device is per thread
                result['value'] = fn(time.perf_counter() + seconds)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            result['error'] = exc

    thread = threading.Thread(target=work, daemon=True, name='tpu-table-row')
    thread.start()
    thread.join(seconds + 1.0)
    if thread.is_alive():
        _abandoned.append(thread)
        raise RowTimeout(f'timed out after {seconds:g} s')
    if 'error' in result:
        raise result['error']
    return result['value']


def _check(deadline):
    if time.perf_counter() > deadline:
        raise RowTimeout('timed out')


def _best(fn, args, deadline):
    """Best seconds of up to ``_REPEATS`` calls (at least one), stopping at ``deadline``."""
    best = float('inf')
    for _ in range(_REPEATS):
        t0 = time.perf_counter()
        jax.block_until_ready(fn(*args))
        best = min(best, time.perf_counter() - t0)
        if time.perf_counter() > deadline:
            break
    return best


def _loops(call_s):
    """Steps of the loop: about ``_LOOP_TARGET_S`` of work, 5 to 200."""
    return int(min(200, max(5, _LOOP_TARGET_S / max(call_s, 1e-6))))


def _product_loop(product, loops):
    """``loops`` products in one program; step ``i`` flips the events of row ``i % len(x)``."""
    def run(operands, x):
        def step(i, acc):
            j = i % x.shape[0]
            row = lax.dynamic_index_in_dim(x, j, keepdims=True)
            xi = lax.dynamic_update_index_in_dim(x, jnp.logical_not(row.astype(bool)).astype(x.dtype), j, 0)
            return acc + jnp.sum(product(operands, xi))
        return lax.fori_loop(0, loops, step, jnp.zeros((), jnp.float32))
    return jax.jit(run)


def time_product(product, operands, x, deadline):
    """``(loop_us, call_us, first_s, result)`` of ``product(operands, x)``."""
    call = jax.jit(product)
    t0 = time.perf_counter()
    out = jax.block_until_ready(call(operands, x))
    first = time.perf_counter() - t0
    _check(deadline)
    call_s = _best(call, (operands, x), deadline)
    _check(deadline)
    loops = _loops(call_s)
    loop_s = _best(_product_loop(product, loops), (operands, x), deadline) / loops
    return loop_s * 1e6, call_s * 1e6, first, np.asarray(out, np.float64)


def _matrix(rng, n, k):
    """``k`` random targets per row with normal float32 weights, duplicates allowed (summed)."""
    return rng.integers(0, n, (n, k)).astype(np.int32), rng.normal(size=(n, k)).astype(np.float32)


def _events(rng, n, kind, columns, rate):
    hit = rng.random((n, columns) if columns else n) < rate
    if kind == 'bool':
        return hit
    return np.where(hit, rng.uniform(0.5, 1.5, hit.shape), 0).astype(np.float32)


def reference(idx, w, x, transpose, binary):
    """The product of the connections ``(idx, w)`` (row ``i`` -> columns ``idx[i]``) with ``x``, in float64."""
    xv = (np.asarray(x) > 0 if binary else np.asarray(x)).astype(np.float64)
    w = w.astype(np.float64)
    if not transpose:  # W @ x: each row gathers its targets
        return np.einsum('ik,ik...->i...', w, xv[idx])
    out = np.zeros((idx.shape[0],) + xv.shape[1:])
    np.add.at(out, idx.ravel(), (w[..., None] * xv[:, None] if xv.ndim > 1 else w * xv[:, None]).reshape(
        (-1,) + xv.shape[1:]))
    return out


def _eventjax_product(op, family, backend, transpose, n):
    import eventjax as ej

    fn = getattr(ej, op)
    if family == 'dense':
        return lambda o, x: fn(o[0], x, transpose=transpose, backend=backend)
    return lambda o, x: fn(*o, x, shape=(n, n), transpose=transpose, backend=backend, validate=False)


def _brainevent_product(op, family, transpose, n, operands, x):
    """``(product, operands)``: brainevent's own function on its default backend for the device."""
    import brainevent

    from benchmarks.anchors import BraineventCall, brainevent_fn

    kwargs = {'transpose': transpose} if family == 'dense' else {'shape': (n, n), 'transpose': transpose}
    call = BraineventCall(op, (*operands, x), kwargs, workspace=family == 'csr' and op.startswith('binary'))
    fn, args = brainevent_fn(call, '', brainevent)
    pos = len(operands)  # x's place; the CSR workspace follows it
    return (lambda o, x: fn(*o[:pos], x, *o[pos:])), args[:pos] + args[pos + 1:]


def _dense_product(transpose, columns):
    if transpose:
        return (lambda o, x: (x.astype(jnp.float32).T @ o[0]).T) if columns else \
            (lambda o, x: x.astype(jnp.float32) @ o[0])
    return lambda o, x: o[0] @ x.astype(jnp.float32)


def _measure(row, seconds, device, fn):
    """Fill ``row`` from ``fn(deadline)``'s ``(loop_us, call_us, first_s, diff)``, or with its error."""
    if abandoned():  # its figures may include the device time of a row that timed out but still runs
        row.extra['beside_timed_out_row'] = True
    try:
        row.loop_us, row.call_us, row.first_s, row.diff = boxed(fn, seconds, device)
    except RowTimeout as exc:
        row.error = f'timed out after {seconds:g} s' if str(exc) == 'timed out' else str(exc)
    except Exception as exc:  # noqa: BLE001 - a failed row is reported and the table goes on
        row.error = f'{type(exc).__name__}: {(str(exc).splitlines() or [""])[0][:300]}'
    return row


def product_rows(n, device, backends, *, ops=None, rate=0.02, compare=True, seconds=120.0, seed=0, report=None):
    """Every product of :data:`PRODUCTS` (or ``ops``) at ``n`` neurons, both directions, on ``device``.

    Rows for each backend, brainevent's function (``compare`` and installed) and, up to
    :data:`DENSE_LIMIT` neurons, the dense ``jnp`` float32 product of the same matrix (backend ``'dense'``,
    once per mv/mm and direction). ``report(row)`` is called as each row is done.
    """
    from benchmarks.anchors import import_optional

    rng = np.random.default_rng(seed)
    k = min(n, K_PRODUCTS)
    idx, w = _matrix(rng, n, k)
    put = lambda *a: tuple(jax.device_put(jnp.asarray(v), device) for v in a)  # noqa: E731
    operands = {'csr': put(w.ravel(), idx.ravel(), np.arange(0, n * k + 1, k, dtype=np.int32)), 'fcn': put(w, idx)}
    if n <= DENSE_LIMIT:
        dense = np.zeros((n, n), np.float32)
        np.add.at(dense, (np.repeat(np.arange(n), k), idx.ravel()), w.ravel())
        operands['dense'] = put(dense)
        del dense
    be = import_optional('brainevent') if compare else None
    rows, done_dense = [], set()

    def add(row, fn):
        rows.append(_measure(row, seconds, device, fn))
        if report:
            report(row)

    for op, family, kinds in PRODUCTS:
        if (ops and op not in ops) or family not in operands:
            continue
        columns = COLUMNS if op.endswith('mm') else 0
        for kind in kinds:
            x_host = _events(rng, n, kind, columns, rate)
            x = put(x_host)[0]
            for transpose in (True, False):
                want = reference(idx, w, x_host, transpose, op.startswith('binary'))

                def timed(product, ops_, check=True, x=x, want=want):
                    def fn(deadline):
                        loop, call, first, out = time_product(product, ops_, x, deadline)
                        diff = float(np.max(np.abs(out - want), initial=0) / (1 + np.max(np.abs(want), initial=0)))
                        return loop, call, first, diff if check else None
                    return fn

                if 'dense' in operands and (columns, transpose) not in done_dense:
                    done_dense.add((columns, transpose))
                    add(Row('products', 'dense mm' if columns else 'dense mv', n, 'dense', kind, transpose),
                        timed(_dense_product(transpose, columns), operands['dense'], check=False))
                for backend in backends:
                    add(Row('products', op, n, backend, kind, transpose),
                        timed(_eventjax_product(op, family, backend, transpose, n), operands[family]))
                if be is not None:
                    row = Row('products', op, n, 'brainevent', kind, transpose)
                    try:
                        product, be_ops = _brainevent_product(op, family, transpose, n, operands[family], x)
                    except Exception as exc:  # noqa: BLE001 - brainevent lacks this form
                        row.error = f'{type(exc).__name__}: {(str(exc).splitlines() or [""])[0][:300]}'
                        rows.append(row)
                        continue
                    add(row, timed(product, be_ops))
    return rows


def _update_operands(rng, n, rate):
    """``op -> (state, operands)`` of :data:`UPDATES`, as :mod:`benchmarks.tpu_delivery` times them."""
    from eventjax.kernels.delay.reference import packed_offsets

    k = min(n, K_UPDATES)
    idx, w = _matrix(rng, n, k)
    w = w.ravel()
    delays = rng.integers(1, RING, n * k).astype(np.int32)
    order = np.lexsort((delays, np.repeat(np.arange(n), k)))  # a layout sorts each row by delay
    indptr, flat = jnp.arange(0, n * k + 1, k, dtype=jnp.int32), jnp.asarray(idx.ravel())
    trace = jnp.asarray(rng.random(n), jnp.float32)
    ring = jnp.zeros((RING, n), jnp.float32)
    out = {'csr_delay_deliver': (ring, (jnp.asarray(w), flat, indptr, jnp.asarray(delays))),
           'csr_delay_deliver_layout': (ring, (jnp.asarray(w[order]), indptr,
                                               packed_offsets(flat[order], jnp.asarray(delays[order]), n))),
           'fcn_delay_deliver': (ring, (jnp.asarray(w.reshape(n, k)), jnp.asarray(idx),
                                        jnp.asarray(delays.reshape(n, k)))),
           'fcn_on_pre': (jnp.asarray(w.reshape(n, k)) * 0.01, (jnp.asarray(idx), trace)),
           'csr_on_pre': (jnp.asarray(w) * 0.01, (flat, indptr, trace))}
    if n <= DENSE_LIMIT:
        out['dense_on_pre'] = (jnp.asarray(rng.normal(size=(n, n)), jnp.float32) * 0.01, (trace,))
    return out, jnp.asarray(rng.random(n) < rate)


def _fcn_deliver(n, backend):
    """The step of ``fcn_delay_deliver``, in the form of :mod:`benchmarks.tpu_delivery`'s steps."""
    import eventjax as ej

    return lambda ring, s, i, o: ej.fcn_delay_deliver(ring, s, *o, i, shape=(n, n), backend=backend, validate=False)


def time_update(step, state, spikes, operands, deadline):
    """``(loop_us, call_us, first_s, result of one update)``; the loop feeds the state back."""
    call = jax.jit(lambda s, x, o: step(s, x, 0, o))
    t0 = time.perf_counter()
    out = jax.block_until_ready(call(state, spikes, operands))
    first = time.perf_counter() - t0
    _check(deadline)
    call_s = _best(call, (state, spikes, operands), deadline)
    _check(deadline)
    loops = _loops(call_s)
    looped = jax.jit(lambda s, x, o: lax.fori_loop(0, loops, lambda i, c: step(c, jnp.roll(x, i), i, o), s))
    jax.block_until_ready(looped(state, spikes, operands))
    _check(deadline)
    loop_s = _best(looped, (state, spikes, operands), deadline) / loops
    return loop_s * 1e6, call_s * 1e6, first, np.asarray(out, np.float64)


def update_rows(n, device, backends, *, ops=None, rate=0.02, seconds=120.0, seed=0, report=None):
    """Delivery and the presynaptic updates of :data:`UPDATES` at ``n`` neurons, each backend on ``device``.

    Each backend's state after one update is compared with the first backend's (``diff``).
    """
    with jax.default_device(device):
        operands, spikes = _update_operands(np.random.default_rng(seed), n, rate)
    rows = []
    for op in UPDATES:
        if (ops and op not in ops) or op not in operands:
            continue
        state, ops_ = operands[op]
        first = {}
        for backend in backends:
            step = _fcn_deliver(n, backend) if op == 'fcn_delay_deliver' else update_steps(n, n, backend)[op]

            def fn(deadline, step=step, state=state, ops_=ops_, first=first):
                loop, call, first_s, out = time_update(step, state, spikes, ops_, deadline)
                ref = first.setdefault('out', out)
                return loop, call, first_s, float(np.max(np.abs(out - ref), initial=0) / (1 + np.max(np.abs(ref))))

            rows.append(_measure(Row('updates', op, n, backend), seconds, device, fn))
            if report:
                report(rows[-1])
    return rows
