"""Warp kernels defined and first run by several threads at once (found by the stress suite).

Every warp kernel defined in a Python module joins that module's warp
``Module``, whose hash covers all its kernels. Defining one while another
thread's call is building the same module used to leave the build's files
under two different hashes, and the call failed with "Module metadata file
... was not found in the cache".
"""

import os
import threading
import time

import jax
import jax.numpy as jnp
import numpy as np
import pytest

wp = pytest.importorskip('warp')

from eventjax.backends.availability import backend_status  # noqa: E402
from eventjax.backends.warp.bridge import WarpKernelSpec, warp_kernel_generator  # noqa: E402

pytestmark = pytest.mark.skipif(not backend_status('warp', 'cpu'), reason='warp cannot run on the CPU here')

# A value new to each run, baked into the kernels, so warp's disk cache never
# holds the module and every first call really builds it.
_RUN = float(time.time_ns() % 1_000_003 + os.getpid() % 1009)


def _make_kernel(k):
    offset = float(k) + _RUN * 1e-9

    def add_k(x: wp.array(dtype=wp.float32), y: wp.array(dtype=wp.float32)):
        i = wp.tid()
        y[i] = x[i] + wp.float32(offset)

    add_k.__name__ = add_k.__qualname__ = f'add_{k}_{int(_RUN)}'
    return wp.Kernel(add_k, key=add_k.__name__), offset


def _kg(k, made):
    def kg(*, outs):
        kernel, offset = _make_kernel(k)  # defined at trace time, as the standard kernels do
        made[k] = offset
        return WarpKernelSpec(kernel, dim=lambda shape: shape)
    return kg


def _run(k, made):
    f = jax.jit(warp_kernel_generator(_kg(k, made), 'cpu')(outs=(jax.ShapeDtypeStruct((4,), jnp.float32),)))
    return np.asarray(f(jnp.zeros(4, jnp.float32))[0])


class TestConcurrentDefinitionAndBuild:
    def test_a_kernel_defined_while_its_module_builds_leaves_the_build_intact(self, monkeypatch):
        module_cls = wp._src.context.Module
        building, defined = threading.Event(), threading.Event()
        real_compile = module_cls._compile

        def slow_compile(self, *args, **kwargs):
            building.set()
            defined.wait(3.0)  # give the other thread the chance to define a kernel mid-build
            return real_compile(self, *args, **kwargs)

        monkeypatch.setattr(module_cls, '_compile', slow_compile)
        made, results, errors = {}, {}, []

        def call(k):
            try:
                results[k] = _run(k, made)
            except Exception as exc:  # collected: the assertion shows them all
                errors.append(f'kernel {k}: {type(exc).__name__}: {exc}')

        first = threading.Thread(target=call, args=(1,))
        first.start()
        assert building.wait(120)

        def second():
            made_before = len(made)
            call(2)
            if len(made) > made_before:
                defined.set()

        other = threading.Thread(target=second)
        other.start()
        # Without the bridge's lock the second kernel is defined at once, mid-build.
        for t in (first, other):
            t.join(timeout=300)
        assert not errors
        for k in (1, 2):
            np.testing.assert_allclose(results[k], np.full(4, made[k], np.float32))

    def test_threads_defining_kernels_in_one_module_all_get_their_results(self):
        rounds, threads = 2, 4
        made, results, errors = {}, {}, []

        def worker(t):
            for r in range(rounds):
                k = 100 + r * threads + t
                try:
                    results[k] = _run(k, made)
                except Exception as exc:  # collected: the assertion shows them all
                    errors.append(f'kernel {k}: {type(exc).__name__}: {exc}')

        pool = [threading.Thread(target=worker, args=(t,)) for t in range(threads)]
        for t in pool:
            t.start()
        for t in pool:
            t.join(timeout=600)
        assert not errors
        assert len(results) == rounds * threads
        for k, got in results.items():
            np.testing.assert_allclose(got, np.full(4, made[k], np.float32), err_msg=f'kernel {k}')
