"""The numba bridge runs njit kernels as XLA FFI handlers."""

import os
import subprocess
import sys
import threading

import jax
import jax.extend.core
import jax.numpy as jnp
import numpy as np
import pytest
from jax.interpreters import mlir

numba = pytest.importorskip('numba')

from eventjax.backends.numba import bridge as nb  # noqa: E402
from eventjax.errors import NumbaKernelError  # noqa: E402


@pytest.fixture(autouse=True)
def strict_promotion():
    with jax.numpy_dtype_promotion('strict'):
        yield


# Kernels are module-level so each compiles once for the whole module.

@numba.njit
def identity(x, out):
    out[...] = x


@numba.njit
def split(x, lo, hi):
    for i in range(x.size):
        lo[i] = x[i] - 1
        hi[i] = x[i] + 1


@numba.njit
def gather(idx, x, out, err):
    for i in range(idx.size):
        if idx[i] < 0 or idx[i] >= x.size:
            nb.report_error(err, 'gather: index ' + str(idx[i])
                            + ' out of range [0, ' + str(x.size) + ')')
            return
        out[i] = x[idx[i]]


@numba.njit
def raises(x, out):
    raise ValueError('never seen')


@numba.njit
def rejects_negative(x, out):
    for i in range(x.size):
        if x[i] < 0:
            raise ValueError("negative entry in x")
        out[i] = x[i]


@numba.njit
def raises_with_values(x, out):
    for i in range(x.size):
        if x[i] < 0:
            raise IndexError('bad entry at', i)
        out[i] = x[i]


@numba.njit(parallel=True)
def pdouble(x, out):
    for i in numba.prange(x.shape[0]):
        out[i] = 2 * x[i]


@numba.njit(parallel=True)
def pcheck(x, out, err):
    bad = -1
    for i in numba.prange(x.size):
        if x[i] < 0:
            bad = max(bad, i)
        out[i] = x[i]
    if bad >= 0:
        nb.report_error(err, 'pcheck: x[' + str(bad) + '] is negative')


@numba.njit
def first_row(x, out):
    out[:] = x[0, :]


def fresh_scale_kg(factor, outs):
    # A new closure on every call, as kernel generators usually return.
    @numba.njit
    def scale(x, out):
        for i in range(x.size):
            out[i] = factor * x[i]
    return scale


def call(kernel, arrays, outs, **static):
    outs = outs if isinstance(outs, tuple) else (outs,)
    kg = kernel if callable(kernel) and not isinstance(
        kernel, numba.core.registry.CPUDispatcher) else (lambda outs: kernel)
    return nb.numba_kernel_generator(kg)(outs=outs, **static)(*arrays)


def sds(shape, dtype):
    return jax.ShapeDtypeStruct(shape, dtype)


class TestRoundTrip:
    DTYPES = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8,
              np.uint16, np.uint32, np.uint64, np.float16, np.float32,
              np.float64, np.complex64, np.complex128]

    @pytest.mark.parametrize('dtype', DTYPES, ids=lambda d: np.dtype(d).name)
    def test_identity_returns_every_dtype_unchanged(self, dtype):
        with jax.enable_x64(True):
            x = (np.arange(6) % 3).astype(dtype)
            (y,) = call(identity, [x], sds(x.shape, dtype))
            assert y.dtype == np.dtype(dtype)
            np.testing.assert_array_equal(np.asarray(y), x)

    @pytest.mark.parametrize('shape', [(), (3,), (2, 3), (2, 1, 3),
                                       (1, 2, 3, 2)])
    def test_identity_returns_every_rank_unchanged(self, shape):
        x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
        (y,) = call(identity, [x], sds(shape, np.float32))
        np.testing.assert_array_equal(np.asarray(y), x)

    @pytest.mark.parametrize('shape', [(0,), (2, 0)])
    def test_zero_size_arrays_pass_through(self, shape):
        x = np.zeros(shape, np.float32)
        (y,) = call(identity, [x], sds(shape, np.float32))
        assert y.shape == shape


class TestOutputs:
    def test_a_kernel_fills_several_outputs(self):
        x = np.arange(4, dtype=np.float32)
        lo, hi = call(split, [x], (sds((4,), np.float32),
                                   sds((4,), np.float32)))
        np.testing.assert_array_equal(lo, x - 1)
        np.testing.assert_array_equal(hi, x + 1)

    def test_several_inputs_reach_the_kernel(self):
        idx = np.array([2, 0], np.int32)
        x = np.array([5.0, 6.0, 7.0], np.float32)
        (y,) = call(gather, [idx, x], sds((2,), np.float32))
        np.testing.assert_array_equal(y, [7.0, 5.0])


class TestStaticParams:
    def test_static_params_reach_the_kernel_generator(self):
        x = np.arange(3, dtype=np.float32)
        (y,) = call(fresh_scale_kg, [x], sds((3,), np.float32), factor=3.0)
        np.testing.assert_array_equal(y, 3 * x)


class TestJit:
    def test_the_traced_function_runs_under_jit(self):
        f = jax.jit(nb.numba_kernel_generator(lambda outs: pdouble)(
            outs=(sds((5,), np.float32),)))
        x = np.arange(5, dtype=np.float32)
        np.testing.assert_array_equal(f(x)[0], 2 * x)

    def test_the_traced_function_lowers_inside_a_primitive(self):
        prim = jax.extend.core.Primitive('eventjax_test_numba_identity')
        prim.multiple_results = True
        prim.def_abstract_eval(lambda x: [x])
        prim.def_impl(lambda x: jax.jit(prim.bind)(x))
        kg2 = nb.numba_kernel_generator(lambda outs: identity)

        def lowering(ctx, x):
            (aval,) = ctx.avals_out
            f = kg2(outs=(sds(aval.shape, aval.dtype),))
            return mlir.lower_fun(f, multiple_results=True)(ctx, x)

        mlir.register_lowering(prim, lowering, platform='cpu')
        x = jnp.arange(4.0, dtype=jnp.float32)
        assert 'eventjax_numba_' in jax.jit(prim.bind).lower(x).as_text()
        np.testing.assert_array_equal(jax.jit(prim.bind)(x)[0], x)


class TestTargetCache:
    # Each shape costs an XLA compile of the call around the handler (a tenth of a second):
    # the default run tries a dozen, the long run a hundred.
    @pytest.mark.parametrize('shapes', [12, pytest.param(100, marks=pytest.mark.long)])
    def test_one_target_serves_every_shape(self, shapes):
        # a closure value of this row's own: with both rows in one process, the second must
        # not find the first's target
        factor = 1000.0 + shapes
        before = nb.target_count()
        for n in range(1, shapes + 1):
            x = np.ones(n, np.float32)
            (y,) = call(fresh_scale_kg, [x], sds((n,), np.float32), factor=factor)
            assert float(y[-1]) == factor
        assert nb.target_count() - before == 1

    def test_different_closure_values_get_different_targets(self):
        x = np.ones(2, np.float32)
        (a,) = call(fresh_scale_kg, [x], sds((2,), np.float32), factor=5.0)
        (b,) = call(fresh_scale_kg, [x], sds((2,), np.float32), factor=7.0)
        assert (float(a[0]), float(b[0])) == (5.0, 7.0)

    def test_a_new_dtype_gets_a_new_target(self):
        offset = 11  # a closure value no other test uses: no target of this kernel exists yet

        def kg(outs):
            @numba.njit
            def add(x, out):
                for i in range(x.size):
                    out[i] = x[i] + offset

            return add

        before = nb.target_count()
        call(kg, [np.ones(2, np.int16)], sds((2,), np.int16))
        call(kg, [np.ones(3, np.int16)], sds((3,), np.int16))  # another shape: the same target
        assert nb.target_count() - before == 1
        (y,) = call(kg, [np.ones(2, np.uint16)], sds((2,), np.uint16))
        assert nb.target_count() - before == 2
        assert y.dtype == np.uint16 and y.tolist() == [12, 12]


class TestKernelErrors:
    def test_a_reported_error_arrives_as_an_exception_with_its_message(self):
        f = jax.jit(nb.numba_kernel_generator(lambda outs: gather)(
            outs=(sds((2,), np.float32),)))
        x = np.arange(3, dtype=np.float32)
        with pytest.raises(Exception, match=r"index 9 out of range \[0, 3\)"):
            jax.block_until_ready(f(np.array([0, 9], np.int32), x))
        np.testing.assert_array_equal(f(np.array([2, 1], np.int32), x)[0],
                                      [2.0, 1.0])

    def test_a_raising_kernel_becomes_an_exception_that_names_it(self):
        with pytest.raises(Exception, match='numba kernel raises'):
            jax.block_until_ready(call(raises, [np.ones(2, np.float32)],
                                       sds((2,), np.float32)))
        (y,) = call(identity, [np.ones(2, np.float32)], sds((2,), np.float32))
        assert float(y[0]) == 1.0

    def test_a_prange_kernel_reports_after_its_loop(self):
        f = jax.jit(nb.numba_kernel_generator(lambda outs: pcheck)(
            outs=(sds((64,), np.float32),)))
        x = np.ones(64, np.float32)
        x[17] = -1
        with pytest.raises(Exception, match=r"x\[17\] is negative"):
            jax.block_until_ready(f(x))
        np.testing.assert_array_equal(f(np.ones(64, np.float32))[0], 1.0)


class TestRaisedMessages:
    def test_a_raised_exception_reaches_the_caller_as_class_and_message_eager_and_jitted(self):
        import eventjax as ej

        p = ej.XLACustomKernel('numba_rejects_negative')
        p.def_numba_kernel(lambda outs: rejects_negative)

        def f(x):
            return p(x, outs=jax.ShapeDtypeStruct(x.shape, x.dtype))

        x = jnp.arange(3.0, dtype=jnp.float32)
        for g in (f, jax.jit(f)):
            with pytest.raises(Exception, match='ValueError: negative entry in x') as info:
                jax.block_until_ready(g(x - 1))
            assert 'rejects_negative' in str(info.value)
            np.testing.assert_array_equal(g(x), [0.0, 1.0, 2.0])  # later calls still work

    def test_a_raise_with_runtime_values_carries_them(self):
        with pytest.raises(Exception, match=r"IndexError: \('bad entry at', 1\)"):
            jax.block_until_ready(call(raises_with_values, [np.array([1, -1], np.float32)], sds((2,), np.float32)))


class TestTraceTimeErrors:
    def test_bfloat16_is_a_type_error_naming_the_dtype(self):
        x = jnp.ones(2, jnp.bfloat16)
        with pytest.raises(TypeError, match='bfloat16'):
            call(identity, [x], sds((2,), jnp.bfloat16))

    def test_rank_above_four_is_refused(self):
        x = np.ones((1,) * 5, np.float32)
        with pytest.raises(NumbaKernelError, match='rank 5'):
            call(identity, [x], sds(x.shape, np.float32))

    def test_a_kernel_of_another_rank_is_a_compile_error(self):
        with pytest.raises(NumbaKernelError, match='could not compile'):
            call(first_row, [np.ones(3, np.float32)], sds((3,), np.float32))

    def test_a_wrong_number_of_outputs_is_a_signature_error(self):
        with pytest.raises(NumbaKernelError, match='expected 1 inputs'):
            call(identity, [np.ones(2, np.float32)],
                 (sds((2,), np.float32), sds((2,), np.float32)))

    def test_a_non_njit_kernel_is_refused(self):
        with pytest.raises(NumbaKernelError, match='@numba.njit'):
            call(lambda outs: (lambda x, out: None),
                 [np.ones(2, np.float32)], sds((2,), np.float32))


class TestThreads:
    def test_four_threads_calling_a_prange_kernel_get_right_results(self):
        f = jax.jit(nb.numba_kernel_generator(lambda outs: pdouble)(
            outs=(sds((256,), np.float32),)))
        base = np.arange(256, dtype=np.float32)
        f(base)
        wrong = []

        def work(k):
            for j in range(500):
                x = base + (k * 1000 + j)
                if not np.array_equal(np.asarray(f(x)[0]), 2 * x):
                    wrong.append((k, j))

        threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
        assert not any(t.is_alive() for t in threads)
        assert wrong == []

    def test_num_threads_round_trips_and_rejects_zero(self):
        old = nb.get_num_threads()
        nb.set_num_threads(1)
        assert nb.get_num_threads() == 1
        nb.set_num_threads(old)
        with pytest.raises(ValueError, match='must be in'):
            nb.set_num_threads(0)
        nb.set_num_threads(None)

    def test_the_threading_layer_is_thread_safe_or_serialised(self):
        from eventjax.backends.numba import threads as numba_threads

        layer = nb.threading_layer()
        assert layer == numba.threading_layer()  # the layer numba actually launched
        # The launch hooks serialise parallel runs exactly when the layer is not thread-safe.
        begin = numba_threads._LAUNCHER._hooks[0]._pyfunc
        serial = dict(zip(begin.__code__.co_freevars, (c.cell_contents for c in begin.__closure__)))['serial']
        assert serial == (layer == 'workqueue')

    @pytest.mark.skipif(sys.platform != 'linux', reason='the library name checked is the Linux one')
    def test_the_environments_tbb_is_preferred_to_openmp(self):
        # Under load OpenMP waits milliseconds for a descheduled thread; TBB's caller does the work.
        env = {k: v for k, v in os.environ.items() if k != 'NUMBA_THREADING_LAYER'}
        code = 'from eventjax.backends.numba.threads import threading_layer; print(threading_layer())'
        layer = subprocess.run([sys.executable, '-c', code], env=env, capture_output=True, text=True,
                               timeout=120, check=True).stdout.strip()
        installed = os.path.exists(os.path.join(sys.prefix, 'lib', 'libtbb.so.12'))
        assert layer == 'tbb' if installed else layer in ('omp', 'workqueue')

    def test_the_config_names_set_and_read_the_bridge_setting(self):
        import eventjax as ej
        try:
            ej.backends.numba.set_num_threads(1)
            assert (ej.backends.numba.requested_num_threads(), nb.get_num_threads()) == (1, 1)
            ej.backends.numba.set_num_threads(None)
            assert ej.backends.numba.requested_num_threads() is None
            assert nb.get_num_threads() == numba.config.NUMBA_NUM_THREADS
        finally:
            ej.backends.numba.set_num_threads(None)

    def test_a_count_above_numbas_maximum_is_capped(self):
        top = numba.config.NUMBA_NUM_THREADS
        try:
            nb.set_num_threads(top + 5)
            assert nb.get_num_threads() == top
        finally:
            nb.set_num_threads(None)

    def test_a_new_count_reaches_compiled_code_without_recompiling(self):
        import eventjax as ej
        f = jax.jit(nb.numba_kernel_generator(lambda outs: pdouble)(
            outs=(sds((64,), np.float32),)))
        x = np.arange(64, dtype=np.float32)
        f(x)
        version, targets = ej.config.snapshot().version, nb.target_count()
        try:
            nb.set_num_threads(1)
            np.testing.assert_array_equal(f(x)[0], 2 * x)
        finally:
            nb.set_num_threads(None)
        assert (ej.config.snapshot().version, nb.target_count()) == (version, targets)


class TestPrefetch:
    """``prefetch`` is a cache hint a kernel may issue anywhere, even past an array's end."""

    def test_hints_change_nothing_and_never_fault(self):
        from eventjax.backends.numba.intrinsics import prefetch

        @numba.njit
        def total(x, w):
            prefetch(x, 0)
            prefetch(x, np.uint64(1 << 40))  # far out of bounds: a hint, not a read
            prefetch(w, (np.int32(2), -7))
            return x.sum() + w.sum()

        assert total(np.arange(4.0), np.ones((3, 3), np.float32)) == 15.0

    @pytest.mark.parametrize('index', [(1, 2), 1.5])
    def test_an_index_that_does_not_fit_the_array_is_a_typing_error(self, index):
        from eventjax.backends.numba.intrinsics import prefetch

        @numba.njit
        def hint(x, i):
            prefetch(x, i)

        with pytest.raises(numba.core.errors.TypingError):
            hint(np.zeros(3), index)


class TestHandOffs:
    """``atomic_add``, ``load_acquire`` and ``wait_at_least``: threads of one parallel run handing work over."""

    def test_two_threads_claim_every_piece_once_and_see_each_other_s_writes(self):
        from eventjax.backends.numba.handoffs import atomic_add, load_acquire, wait_at_least

        @numba.njit(parallel=True)
        def relay(pieces, out):
            # piece p writes out[p] from out[p - 1]: each waits for the one before, whoever claimed it
            done = np.zeros(16, np.int64)
            for _ in numba.prange(2):
                while True:
                    p = atomic_add(done, 0, 1)
                    if p >= pieces:
                        break
                    wait_at_least(done, 8, p)
                    out[p] = (out[p - 1] if p else 0) + 1
                    atomic_add(done, 8, 1)
            # read atomically: to the code around the parallel loop a plain read of an array made here and
            # written only by atomics inside it may look like the zeros it was made with
            return load_acquire(done, 8)

        out = np.zeros(20_000, np.int64)
        assert relay(out.size, out) == out.size
        np.testing.assert_array_equal(out, np.arange(1, out.size + 1))

    def test_a_long_wait_yields_and_still_ends(self):
        from eventjax.backends.numba.handoffs import SPINS_BEFORE_YIELD, atomic_add, load_acquire, wait_at_least

        @numba.njit(parallel=True)
        def late(spins):
            # piece 0 is slow (past the spins before yielding), piece 1 waits for it; claimed in order, so one
            # thread doing both never waits for itself
            sync = np.zeros(16, np.int64)
            for _ in numba.prange(2):
                piece = atomic_add(sync, 0, 1)
                if piece == 0:
                    for _k in range(spins):
                        load_acquire(sync, 8)
                    atomic_add(sync, 8, 1)
                elif piece == 1:
                    wait_at_least(sync, 8, 1)
                    atomic_add(sync, 8, 1)
            return load_acquire(sync, 8)

        assert late(1000 * SPINS_BEFORE_YIELD) == 2

    def test_an_array_other_than_int64_is_a_typing_error(self):
        from eventjax.backends.numba.handoffs import atomic_add

        @numba.njit
        def bump(x):
            return atomic_add(x, 0, 1)

        with pytest.raises(numba.core.errors.TypingError):
            bump(np.zeros(2, np.int32))


class TestStackBytes:
    """``stack_bytes``: zeroed scratch in the caller's frame, for the handler's error buffers."""

    def test_the_bytes_are_zeroed_writable_and_as_many_as_asked(self):
        from eventjax.backends.numba.intrinsics import as_voidptr, stack_bytes

        @numba.njit
        def fill_and_sum():
            b = numba.carray(as_voidptr(stack_bytes(64)), 64, np.uint8)
            before = b.sum()
            b[:] = 3
            return before, b.sum()

        assert fill_and_sum() == (0, 192)

    def test_a_size_known_only_at_run_time_is_a_typing_error(self):
        from eventjax.backends.numba.intrinsics import stack_bytes

        @numba.njit
        def scratch(n):
            return stack_bytes(n)

        with pytest.raises(numba.core.errors.TypingError, match='compile-time constant'):
            scratch(8)


class TestArrayAt:
    """``array_at``: the handler's view of a buffer, as ``numba.carray`` gives it."""

    @pytest.mark.parametrize('shape', [(), (5,), (2, 3), (2, 1, 3)])
    @pytest.mark.parametrize('dtype', [np.float32, np.int64, np.bool_, np.uint8])
    def test_the_view_is_carrays_over_the_same_memory(self, shape, dtype):
        from eventjax.backends.numba.intrinsics import array_at, as_voidptr

        src = (np.arange(int(np.prod(shape))) % 3).astype(dtype).reshape(shape)

        @numba.njit
        def views(addr):
            return array_at(addr, shape, dtype), numba.carray(as_voidptr(addr), shape, dtype)

        ours, theirs = views(src.ctypes.data)
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape and ours.strides == theirs.strides
        np.testing.assert_array_equal(ours, src)
        assert ours.ctypes.data == src.ctypes.data

    def test_an_integer_shape_is_one_dimension(self):
        from eventjax.backends.numba.intrinsics import array_at

        @numba.njit
        def view(addr, n):
            return array_at(addr, n, np.int32)

        src = np.arange(4, dtype=np.int32)
        np.testing.assert_array_equal(view(src.ctypes.data, 4), src)

    def test_a_pointer_that_is_not_an_int64_address_is_a_typing_error(self):
        from eventjax.backends.numba.intrinsics import array_at

        @numba.njit
        def view(addr):
            return array_at(addr, 3, np.int32)

        with pytest.raises(numba.core.errors.TypingError, match=r'array_at\(addr, shape, dtype\)'):
            view(1.5)


class TestByInputs:
    def test_the_kernel_is_picked_from_the_inputs_and_only_the_picked_one_runs(self):
        @numba.njit
        def copy(x, out):
            out[:] = x

        @numba.njit
        def double(x, out):
            out[:] = 2 * x

        seen = []

        def pick(x):
            seen.append(x.shape)
            return double if x.shape[0] > 2 else copy

        kg = nb.numba_kernel_generator(lambda outs: nb.by_inputs(pick))
        for n, factor in ((2, 1), (3, 2)):
            outs = (jax.ShapeDtypeStruct((n,), np.float32),)
            got = jax.jit(lambda x, outs=outs: kg(outs=outs)(x)[0])(np.ones(n, np.float32))
            np.testing.assert_array_equal(got, np.full(n, factor, np.float32))
        assert seen == [(2,), (3,)]

    def test_a_picked_kernel_gets_bounds_checks_and_a_non_njit_pick_is_a_clear_error(self):
        @numba.njit
        def over(x, out):
            out[x.shape[0]] = 1.0  # one past the end

        outs = (jax.ShapeDtypeStruct((2,), np.float32),)
        checked = nb.numba_kernel_generator(lambda outs: nb.by_inputs(lambda x: over),
                                                      boundscheck=True)
        with pytest.raises(Exception, match='bounds'):
            jax.block_until_ready(checked(outs=outs)(np.ones(2, np.float32)))
        bad = nb.numba_kernel_generator(lambda outs: nb.by_inputs(lambda x: over.py_func))
        with pytest.raises(NumbaKernelError, match='njit'):
            bad(outs=outs)(np.ones(2, np.float32))


class TestCollectorPausedWhileCompiling:
    """numba's compiler makes objects by the hundred thousand: the cyclic collector is off while it runs."""

    def test_a_kernel_compiles_with_the_collector_off_and_it_is_on_again_after(self):
        import gc

        from numba.core import event

        seen = []

        class Listener(event.Listener):
            def on_start(self, e):
                seen.append(gc.isenabled())

            def on_end(self, e):
                pass

        # A constant no other test uses: a new fingerprint, so the handler compiles here.
        bump = float(np.random.default_rng().integers(1 << 30))

        @numba.njit
        def add_bump(x, out):
            out[...] = x + bump

        listener = Listener()
        event.register('numba:compile', listener)
        try:
            out, = call(add_bump, [np.zeros(3, np.float32)], jax.ShapeDtypeStruct((3,), jnp.float32))
        finally:
            event.unregister('numba:compile', listener)
        np.testing.assert_array_equal(np.asarray(out), np.full(3, bump, np.float32))
        assert seen and not any(seen)
        assert gc.isenabled()

    def test_a_collector_the_caller_turned_off_stays_off(self):
        import gc

        from eventjax.backends.numba.codegen import gc_paused

        gc.disable()
        try:
            with gc_paused():
                assert not gc.isenabled()
            assert not gc.isenabled()
        finally:
            gc.enable()

    def test_overlapping_compiles_on_two_threads_share_one_pause(self):
        import gc

        from eventjax.backends.numba.codegen import gc_paused

        first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()
        during = []

        def first():
            with gc_paused():
                first_in.set()
                second_in.wait(10)
            first_out.set()

        def second():
            first_in.wait(10)
            with gc_paused():
                second_in.set()
                first_out.wait(10)
                during.append(gc.isenabled())  # the first has ended; this compile is still under way

        threads = [threading.Thread(target=first), threading.Thread(target=second)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(20)
        assert during == [False]
        assert gc.isenabled()
