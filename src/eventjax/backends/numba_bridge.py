"""The numba CPU backend: njit kernels run as typed XLA FFI handlers.

A kernel generator returns an ``@numba.njit`` ``kernel(*inputs, *outputs)``
that fills its outputs in place. :func:`numba_kernel_generator` turns it into
a JAX-traceable function that calls the kernel through ``jax.ffi.ffi_call``.
The handler XLA calls is a ``numba.cfunc`` (see ``numba_codegen``): no
Python and no GIL on the call path.

Targets. One FFI target per (kernel, input/output dtypes and ranks), never
per shape: the handler reads the dims at run time. Generators often return a
fresh closure on every call, so a kernel is keyed by its code object, the
types and values of its closure cells, its defaults, its globals dict and
its numba options; a kernel whose closure holds something unhashable (an
array) is keyed by its identity instead, and is not cached on disk. Targets,
their cfuncs and kernels live for the life of the process in a registry
guarded by one lock (XLA keeps raw pointers to them).

Errors. A kernel may take one extra last argument, ``err``: a byte buffer it
fills with :func:`report_error`; the handler turns it into an XLA FFI error
and JAX raises an exception carrying the message. A kernel that raises
instead gets a generic error (numba cannot carry an exception's message out
of compiled code). Wrong dtypes, ranks or arity fail at trace time.

Threads. XLA calls handlers from several threads at once. Numba's
``workqueue`` threading layer aborts on concurrent parallel launches, so the
bridge asks numba for a thread-safe layer (``omp`` or ``tbb``) unless
``NUMBA_THREADING_LAYER`` is set; if only ``workqueue`` loads, launches of
``parallel=True`` kernels are serialised by a spin lock in compiled code.
:func:`set_num_threads` bounds the threads of every parallel launch, in every
XLA thread.

Disk cache. Handlers are compiled with ``cache=True`` into numba's cache
(``NUMBA_CACHE_DIR`` respected), so a second process skips compilation.
"""

import inspect
import os
import threading

import attrs
import jax
import llvmlite.binding
import numba
import numpy as np
from numba import types

from eventjax.backends import ffi_abi, numba_codegen
from eventjax.backends.numba_codegen import report_error
from eventjax.errors import NumbaKernelError, UnsupportedDtypeError

__all__ = [
    "NumbaKernelError",
    "UnsupportedDtypeError",
    "get_num_threads",
    "numba_kernel_generator",
    "report_error",
    "set_num_threads",
    "sync_num_threads",
    "target_count",
    "threading_layer",
]

MAX_RANK = 4



# --- Thread count and launch guard, shared with compiled code ---------------
# Compiled handlers are cached on disk, so they must not embed this process's
# addresses: they call these helpers by symbol name, and each process binds
# the names to its own cfuncs with llvmlite's add_symbol. The two cells are
# the module's only mutable state: memory that compiled code reads, written
# only by set_num_threads and the launch lock.

_threads_cell = np.full(1, numba.config.NUMBA_NUM_THREADS, np.int64)
_launch_cell = np.zeros(1, np.int64)
_THREADS_ADDR = _threads_cell.ctypes.data
_LAUNCH_ADDR = _launch_cell.ctypes.data


def set_num_threads(n):
    """Set how many threads each ``parallel=True`` kernel launch may use.

    It applies to every thread XLA calls handlers from, from the next call.

    Args:
        n: between 1 and ``numba.config.NUMBA_NUM_THREADS``.

    Example:
        >>> set_num_threads(1)
    """
    top = numba.config.NUMBA_NUM_THREADS
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
        raise TypeError(f"set_num_threads(): n must be an int, got {n!r}.")
    if not 1 <= n <= top:
        raise ValueError(
            f"set_num_threads(): n must be in [1, {top}] "
            f"(NUMBA_NUM_THREADS), got {n}; raise NUMBA_NUM_THREADS before "
            "starting Python to allow more.")
    _threads_cell[0] = n


def sync_num_threads(n):
    """Apply the configured thread count (None: numba's default), capped at numba's maximum.

    Called whenever a numba kernel is lowered; a change of the setting bumps
    the configuration version, so every call site is lowered again and picks
    it up.

    Example:
        >>> sync_num_threads(None)
    """
    top = numba.config.NUMBA_NUM_THREADS
    want = top if n is None else min(int(n), top)
    if want != get_num_threads():
        set_num_threads(want)


def get_num_threads():
    """The thread count of parallel kernel launches.

    Example:
        >>> get_num_threads() >= 1
        True
    """
    return int(_threads_cell[0])


def _make_launch_hooks(serial):
    """The per-process C functions handlers call around a parallel run."""
    threads_addr, launch_addr = _THREADS_ADDR, _LAUNCH_ADDR

    @numba.cfunc(types.int64())
    def begin():
        if serial:
            while numba_codegen.cas_i64(launch_addr, 0, 1) != 0:
                numba_codegen.spin_pause()
        # Per calling thread in numba: XLA threads each need it set.
        numba.set_num_threads(numba_codegen.load_i64(threads_addr))
        return 0

    @numba.cfunc(types.int64())
    def end():
        if serial:
            numba_codegen.cas_i64(launch_addr, 1, 0)
        return 0

    llvmlite.binding.add_symbol("eventjax_numba_launch_begin", begin.address)
    llvmlite.binding.add_symbol("eventjax_numba_launch_end", end.address)
    return begin, end


class _Launcher:
    """Numba's threading layer, launched once, and the launch hooks."""

    def __init__(self):
        self._lock = threading.Lock()
        self._hooks = None  # kept alive: compiled code calls their addresses

    def layer(self):
        from numba.np.ufunc import parallel

        with self._lock:
            if self._hooks is None:
                if "NUMBA_THREADING_LAYER" not in os.environ:
                    numba.config.THREADING_LAYER = "threadsafe"
                try:
                    parallel._launch_threads()
                except ValueError:
                    # Neither omp nor tbb here: fall back, serialise launches.
                    numba.config.THREADING_LAYER = "default"
                    parallel._launch_threads()
                self._hooks = _make_launch_hooks(
                    numba.threading_layer() == "workqueue")
            return numba.threading_layer()


_LAUNCHER = _Launcher()


def threading_layer():
    """Launch numba's threads once, preferring a thread-safe layer.

    Returns:
        The name numba reports: ``'omp'``, ``'tbb'`` or ``'workqueue'``
        (with ``workqueue``, parallel launches are serialised).

    Example:
        >>> threading_layer() in ('omp', 'tbb', 'workqueue')
        True
    """
    return _LAUNCHER.layer()


# --- Target registry --------------------------------------------------------

@attrs.frozen
class _Target:
    name: str
    handler: object = attrs.field(eq=False)  # the cfunc; XLA holds its address
    kernel: object = attrs.field(eq=False)


class _Registry:
    """FFI targets by key; written under a lock, read without one."""

    def __init__(self):
        self._lock = threading.Lock()
        self._targets = {}

    def __len__(self):
        return len(self._targets)

    def get(self, key):
        return self._targets.get(key)

    def get_or_create(self, key, create):
        target = self._targets.get(key)
        if target is not None:
            return target
        with self._lock:
            target = self._targets.get(key)
            if target is None:
                name = f"eventjax_numba_{len(self._targets)}"
                target = create(name)
                # Replace, never mutate: a lock-free reader sees old or new.
                self._targets = {**self._targets, key: target}
        return target


_REGISTRY = _Registry()


def target_count():
    """How many FFI targets the numba backend has registered so far.

    Example:
        >>> n = target_count()
    """
    return len(_REGISTRY)


def _kernel_key(kernel):
    """(hashable key, disk fingerprint or None) identifying ``kernel``'s code."""
    py = kernel.py_func
    cells = tuple((type(c.cell_contents), c.cell_contents)
                  for c in (py.__closure__ or ()))
    options = tuple(sorted((k, repr(v)) for k, v in kernel.targetoptions.items()))
    key = (py.__code__, cells, py.__defaults__, id(py.__globals__), options)
    try:
        hash(key)
    except TypeError:
        return ("id", id(kernel)), None
    code = py.__code__
    source = inspect.getsourcefile(py) or ""
    try:
        mtime = os.stat(source).st_mtime_ns
    except OSError:
        mtime = None
    fingerprint = (py.__module__, py.__qualname__, code.co_code,
                   repr(code.co_consts), code.co_names, repr(cells),
                   repr(py.__defaults__), options, source, mtime,
                   numba.__version__)
    return key, fingerprint


# --- Trace-time checks ------------------------------------------------------

def _wide_dtype(dtype):
    # numba has no CPU float16 type: kernels see float16 data as float32.
    return np.dtype(np.float32) if dtype == np.float16 else np.dtype(dtype)


def _widen(x):
    return x.astype(np.float32) if x.dtype == np.float16 else x


def _kernel_name(kernel):
    return getattr(getattr(kernel, "py_func", None), "__qualname__",
                   repr(kernel))


def _spec(x, who, what, i):
    """(numpy dtype, rank) of an array or ShapeDtypeStruct, checked."""
    # As JAX will see it: 64-bit types become 32-bit unless x64 is enabled.
    dtype = np.dtype(jax.dtypes.canonicalize_dtype(x.dtype))
    if dtype not in ffi_abi.DATATYPE:
        hint = (" numba has no bfloat16 type; cast to float32 first."
                if dtype.name == "bfloat16" else "")
        raise UnsupportedDtypeError(
            f"{who}: {what} {i} has dtype {dtype.name}, which the numba "
            "backend cannot pass to a kernel; supported: "
            + ", ".join(sorted(d.name for d in ffi_abi.DATATYPE)) + "." + hint)
    rank = len(x.shape)
    if rank > MAX_RANK:
        raise NumbaKernelError(
            f"{who}: {what} {i} has rank {rank}; the numba backend supports "
            f"ranks 0 to {MAX_RANK}. Reshape it before the call.")
    return dtype, rank


def _check_njit(kernel):
    if not isinstance(kernel, numba.core.registry.CPUDispatcher):
        raise NumbaKernelError(
            "numba backend: the kernel generator must return an @numba.njit "
            f"function, got {type(kernel).__name__} {kernel!r}. Decorate the "
            "kernel with @numba.njit.")


def _takes_err(kernel, n_in, n_out, who):
    """Whether ``kernel`` declares the trailing ``err`` argument."""
    params = inspect.signature(kernel.py_func).parameters.values()
    if any(p.kind == p.VAR_POSITIONAL for p in params):
        return False
    n = len(params)
    if n == n_in + n_out:
        return False
    if n == n_in + n_out + 1:
        return True
    raise NumbaKernelError(
        f"{who}: the kernel takes {n} arguments; expected {n_in} inputs + "
        f"{n_out} outputs = {n_in + n_out}, or one more for the error buffer "
        "`err`. Fix the kernel's signature or the call's outs=.")


def _create_target(name, kernel, fingerprint, in_specs, out_specs, who):
    takes_err = _takes_err(kernel, len(in_specs), len(out_specs), who)
    parallel = bool(kernel.targetoptions.get("parallel"))
    if parallel:
        threading_layer()  # binds the launch hooks the handler calls
    source = numba_codegen.handler_source(
        _kernel_name(kernel), in_specs, out_specs, takes_err, parallel)
    try:
        handler = numba_codegen.compile_handler(
            kernel, fingerprint, source)
    except numba.core.errors.NumbaError as e:
        sig = ", ".join(f"{d.name}[rank {r}]" for d, r in in_specs + out_specs)
        raise NumbaKernelError(
            f"{who}: numba could not compile the kernel for ({sig}) (inputs, "
            "then outputs; outputs are writable arrays). Check that the "
            "kernel's array ranks and dtypes match the call.\n"
            f"numba said: {e}") from e
    jax.ffi.register_ffi_target(
        name, jax.ffi.pycapsule(handler.address), platform="cpu")
    return _Target(name, handler, kernel)


def _target_for(kernel, arrays, outs):
    who = f"numba kernel {_kernel_name(kernel)}"
    in_specs = tuple(_spec(a, who, "input", i) for i, a in enumerate(arrays))
    out_specs = tuple(_spec(o, who, "output", i) for i, o in enumerate(outs))
    kkey, fingerprint = _kernel_key(kernel)
    key = (kkey, in_specs, out_specs)
    return _REGISTRY.get_or_create(key, lambda name: _create_target(
        name, kernel, fingerprint, list(in_specs), list(out_specs), who))


# --- Public entry point -----------------------------------------------------

def numba_kernel_generator(kg):
    """Wrap a numba kernel generator into a JAX kernel generator.

    Args:
        kg: called as ``kg(**static_params, outs=outs)``, returns an
            ``@numba.njit`` ``kernel(*inputs, *outputs[, err])`` that fills
            its outputs in place; ``outs`` is a tuple of
            ``jax.ShapeDtypeStruct``, one per output.

    Returns:
        ``kg2(**static_params, outs=outs)`` returning a JAX-traceable
        ``f(*arrays) -> tuple`` (one array per entry of ``outs``).

    Example:
        >>> @numba.njit
        ... def double(x, out):
        ...     for i in range(x.size):
        ...         out[i] = 2 * x[i]
        >>> kg2 = numba_kernel_generator(lambda outs: double)
        >>> outs = (jax.ShapeDtypeStruct((3,), np.float32),)
        >>> kg2(outs=outs)(np.ones(3, np.float32))[0].tolist()
        [2.0, 2.0, 2.0]
    """

    def kg2(*, outs, **static_params):
        outs = tuple(outs) if isinstance(outs, (tuple, list)) else (outs,)
        # XLA sees canonical dtypes (no 64-bit types unless x64 is enabled).
        outs = tuple(jax.ShapeDtypeStruct(
            o.shape, jax.dtypes.canonicalize_dtype(o.dtype)) for o in outs)
        kernel = kg(**static_params, outs=outs)
        _check_njit(kernel)

        def call(*arrays):
            arrays = tuple(_widen(jax.numpy.asarray(a)) for a in arrays)
            wide = tuple(jax.ShapeDtypeStruct(o.shape, _wide_dtype(o.dtype))
                         for o in outs)
            target = _target_for(kernel, arrays, wide)
            result = jax.ffi.ffi_call(
                target.name, wide, vmap_method="sequential")(*arrays)
            return tuple(r.astype(o.dtype) for r, o in zip(result, outs))

        return call

    return kg2
