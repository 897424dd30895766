"""Benchmark of the numba bridge: call overhead, threads, first-call latency.

Run: ``python -m benchmarks.micro numba_bridge``.
"""

import os
import subprocess
import sys
import tempfile
import textwrap
import threading
import time

import jax
import jax.numpy as jnp
import numba
import numpy as np

from eventjax.backends.numba import bridge as numba_bridge

N = 2000
CALLS = 3000


@numba.njit
def total(x, out):
    s = np.float32(0)
    for i in range(x.size):
        s += x[i]
    out[()] = s


def _numba_fn():
    outs = (jax.ShapeDtypeStruct((), np.float32),)
    f = numba_bridge.numba_kernel_generator(lambda outs: total)(outs=outs)
    return jax.jit(lambda x: f(x)[0])


def _callback_fn():
    def host_sum(x):
        return np.asarray(x).sum(dtype=np.float32)
    return jax.jit(lambda x: jax.pure_callback(
        host_sum, jax.ShapeDtypeStruct((), np.float32), x))


def _us_per_call(f, x, calls=CALLS):
    f(x).block_until_ready()
    t = time.perf_counter()
    for _ in range(calls):
        f(x).block_until_ready()
    return (time.perf_counter() - t) / calls * 1e6


def _calls_per_s(f, x, threads, calls=CALLS):
    f(x).block_until_ready()

    def work():
        for _ in range(calls):
            f(x).block_until_ready()

    pool = [threading.Thread(target=work) for _ in range(threads)]
    t = time.perf_counter()
    for p in pool:
        p.start()
    for p in pool:
        p.join()
    return threads * calls / (time.perf_counter() - t)


_FIRST_CALL = textwrap.dedent("""
    import time
    t0 = time.perf_counter()
    import jax, numba, numpy as np
    from eventjax.backends.numba import bridge as numba_bridge
    t1 = time.perf_counter()
    @numba.njit
    def total(x, out):
        s = np.float32(0)
        for i in range(x.size):
            s += x[i]
        out[()] = s
    outs = (jax.ShapeDtypeStruct((), np.float32),)
    f = numba_bridge.numba_kernel_generator(lambda outs: total)(outs=outs)
    f(np.ones(2000, np.float32))[0].block_until_ready()
    t2 = time.perf_counter()
    print(t1 - t0, t2 - t1)
""")


def _first_call(cache_dir, script):
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir,
               PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run([sys.executable, script], env=env, check=True,
                         capture_output=True, text=True).stdout.split()
    return float(out[-2]), float(out[-1])


def main():
    """Print the benchmark table."""
    x = jnp.asarray(np.random.default_rng(0).random(N, np.float32))
    fns = {"numba bridge": _numba_fn(),
           "jnp.sum": jax.jit(jnp.sum),
           "pure_callback": _callback_fn()}
    print(f"layer: {numba_bridge.threading_layer()}, "
          f"cores: {os.cpu_count()}, jax {jax.__version__}, "
          f"numba {numba.__version__}")
    print(f"\n{'jitted sum of 2000 float32':28s} {'us/call':>8s}")
    for name, f in fns.items():
        print(f"{name:28s} {_us_per_call(f, x):8.1f}")
    print(f"\n{'concurrent calls':28s} {'1 thread':>10s} {'2 threads':>10s}"
          f" {'ratio':>6s}")
    for name in fns:
        one = _calls_per_s(fns[name], x, 1)
        two = _calls_per_s(fns[name], x, 2)
        print(f"{name + ' (calls/s)':28s} {one:10.0f} {two:10.0f} "
              f"{two / one:6.2f}")
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "first_call.py")
        with open(script, "w") as f:
            f.write(_FIRST_CALL)
        cache = os.path.join(tmp, "numba_cache")
        cold = _first_call(cache, script)
        warm = _first_call(cache, script)
    print(f"\n{'first call, new process':28s} {'import s':>10s} "
          f"{'1st call s':>10s}")
    print(f"{'cold (empty numba cache)':28s} {cold[0]:10.2f} {cold[1]:10.2f}")
    print(f"{'warm (numba cache filled)':28s} {warm[0]:10.2f} {warm[1]:10.2f}")


if __name__ == "__main__":
    main()
