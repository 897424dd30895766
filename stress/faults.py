"""Scenario 4: one worker feeds bad input while healthy workers keep calling.

The faulty worker cycles through: out-of-range indices into the CSR and FCN
operators (eager calls check concrete structure and raise), operands of the wrong
shape, a kernel generator that raises, a numba kernel that raises in compiled
code, and a dtype numba cannot take. Each must raise, with the expected type
or message. Healthy workers (scenario 1's calls, numba-heavy, on the same
shapes) must see neither an exception nor a wrong result. Afterwards every
operator and the faulty primitive's good path are called once more: they
must still work.
"""

from __future__ import annotations

import functools
import threading
import time

import jax
import jax.numpy as jnp
import numpy as np

import eventjax as ej
from eventjax.errors import KernelCompilationError
from stress import mixed
from stress import operators as ops
from stress.harness import Report, run_threads, watched

SHAPE = (16, 16)


@functools.cache
def faulty_primitive() -> ej.XLACustomKernel:
    """Backends: ``good`` (x + 1), ``boom`` (its generator raises), ``numba`` (raises on x[0] < 0)."""
    prim = ej.XLACustomKernel('stress_faulty')
    prim.def_kernel('good', 'cpu', lambda outs: lambda x: (x + 1,), asdefault=True)

    def boom(outs):
        raise RuntimeError('this kernel generator always fails')

    prim.def_kernel('boom', 'cpu', boom)
    if 'numba' in ops.usable_cpu_backends():
        prim.def_numba_kernel(_raising_numba)
    return prim


def primitives() -> tuple:
    """The primitives this scenario defines, for ``python -m stress`` to define before any scenario runs."""
    return (faulty_primitive(),)


def _raising_numba(outs):
    import numba  # noqa: PLC0415

    @numba.njit
    def kernel(x, y):
        if x[0] < 0:
            raise ValueError('negative input')
        for i in range(x.size):
            y[i] = x[i] + 1

    return kernel


def _call_faulty(x, backend, jit):
    return (_jitted_faulty(backend) if jit else functools.partial(_faulty, backend=backend))(x)


def _faulty(x, backend):
    return faulty_primitive()(x, outs=jax.ShapeDtypeStruct(x.shape, x.dtype), backend=backend)


@functools.cache
def _jitted_faulty(backend):
    # One jitted function per backend, built once: the long run repeats every fault, and a
    # fresh jax.jit per call would compile (and keep) a new executable each time.
    return jax.jit(functools.partial(_faulty, backend=backend))


def _bad_index_case(rng, name):
    case = ops.random_case(rng, name, shape=SHAPE, transpose=False)
    args = list(case.args)
    index_pos = 1  # csr: (data, indices, indptr, v); fcn: (weights, indices, v)
    indices = np.array(args[index_pos])
    if indices.size == 0:
        return None
    flat = indices.reshape(-1)
    flat[int(rng.integers(flat.size))] = SHAPE[1] + 7
    args[index_pos] = flat.reshape(indices.shape)
    return case, tuple(args)


def faults(rng) -> list[tuple[str, callable, type, str]]:
    """``(what, thunk, expected exception type, text the message must contain)``."""
    out = []
    names = ops.operators()
    for name in ('csrmv', 'binary_csrmm', 'fcnmv', 'binary_fcnmm'):
        if name in names and 'numba' in ops.backends(name):
            made = _bad_index_case(rng, name)
            if made is not None:
                case, args = made
                # Concrete structure is checked before any kernel; traced bad
                # entries are dropped instead (see the Semantics page).
                fn = getattr(ej, name)
                out.append((f'{name} index out of range (numba, eager)',
                            lambda fn=fn, args=args, case=case: fn(*args, **case.statics, backend='numba'),
                            ValueError, 'is outside'))
    for name in names:
        case = ops.random_case(rng, name, shape=SHAPE)
        short = np.asarray(case.operand)[:-1]
        op = getattr(ej, name)
        out.append((f'{name} operand one too short', lambda op=op, case=case, short=short: op(
            *case.structure, short, **case.statics), ValueError, ''))
        break
    x = np.ones(4, np.float32)
    out.append(('kernel generator raises', lambda: _call_faulty(x, 'boom', False), KernelCompilationError,
                'always fails'))
    out.append(('kernel generator raises under jit', lambda: _call_faulty(x, 'boom', True),
                KernelCompilationError, 'always fails'))
    if 'numba' in faulty_primitive().available_backends('cpu'):
        neg = -np.ones(4, np.float32)
        out.append(('numba kernel raises', lambda: _call_faulty(neg, 'numba', bool(rng.integers(2))),
                    Exception, ''))
        out.append(('bfloat16 into numba', lambda: _call_faulty(jnp.ones(4, jnp.bfloat16), 'numba', False),
                    TypeError, 'bfloat16'))
    return out


def run_fault(report: Report, what, thunk, kind, text) -> None:
    try:
        with watched(f'fault: {what}'):
            result = thunk()
            jax.block_until_ready(result)
    except kind as exc:
        ok = text in str(exc)
        report.add(1, 1, failure=None if ok else f'fault {what!r}: message lacks {text!r}: {exc}')
        return
    except Exception as exc:
        report.add(1, 1, failure=f'fault {what!r}: raised {type(exc).__name__}, expected {kind.__name__}: {exc}')
        return
    report.add(1, 1, failure=f'fault {what!r}: returned instead of raising')


def after_check(report: Report, rng) -> None:
    """The numba kernels that reported errors, and the faulty primitive's good paths, still work."""
    for name in ('csrmv', 'binary_csrmm', 'fcnmv', 'binary_fcnmm'):
        if name not in ops.operators():
            continue
        case = ops.random_case(rng, name, shape=SHAPE, transpose=False)
        backend = 'numba' if 'numba' in ops.backends(name) else None
        mixed.call_and_check(report, case, backend, False, 'after faults')
    x = np.arange(4, dtype=np.float32)
    for backend in faulty_primitive().available_backends('cpu'):
        if backend == 'boom':
            continue
        got = np.asarray(_call_faulty(x, backend, False))
        bad = not np.array_equal(got, x + 1)
        report.add(1, 1, wrong=bad, failure=bad and f'after faults: stress_faulty[{backend}] gave {got}')


def run(seconds: float, threads: int = 6, long: bool = False) -> Report:
    report = Report('faults')
    seed = int(time.time()) % 100_000 + 11
    rng = np.random.default_rng(seed)
    names = ops.operators()
    pool = (list(mixed.long_pool(mixed.LONG_SEED)) if long
            else [ops.random_case(rng, names[i % len(names)], shape=SHAPE) for i in range(len(names))])
    start = time.monotonic()
    deadline = start + max(seconds - 5.0, 2.0)
    stop = threading.Event()
    faulted = [0]

    def faulty():
        local = np.random.default_rng(seed + 99)
        # Each fault compiles afresh, so short mode makes one round.
        while time.monotonic() < deadline and faulted[0] < (100_000 if long else 1):
            for what, thunk, kind, text in faults(local):
                run_fault(report, what, thunk, kind, text)
                faulted[0] += 1

    def worker(i):
        if i == 0:
            faulty()
            stop.set()
        else:
            mixed.hammer(report, pool, seed + i, deadline + 1.0, 100_000, stop=stop, who=f'healthy {i}')

    report.failures.extend(run_threads(threads, worker, seconds + 300))
    after_check(report, rng)
    report.seconds = time.monotonic() - start
    report.extra['faults'] = faulted[0]
    return report
