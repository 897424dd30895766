"""brainevent's public names, with brainevent's signatures, running on eventjax.

Code written for brainevent 0.2 (brainstate's event layers, braintools'
connectivity builders) runs on eventjax through this module: its containers
take brainevent's constructor arguments, its operators brainevent's operand
names, and brainunit ``Quantity`` weights and vectors keep their units. A
brainevent name eventjax has no twin for raises an ``AttributeError`` that
names what to use instead.

Code that imports ``brainevent`` by name and cannot be changed (a released
brainstate) gets this module for ``import brainevent`` once the process opts
in, before anything imports brainevent::

    import eventjax.compat.brainevent
    eventjax.compat.brainevent.install()   # replace_installed=True if brainevent is installed
    import brainstate                      # its `import brainevent` is this module now

:func:`install` never shadows a real brainevent silently: when brainevent is
installed it refuses unless ``replace_installed=True``, and when brainevent
is already imported it refuses outright.
"""

from __future__ import annotations

import importlib.util
import sys
import types

import jax
import numpy as np

import eventjax as ej
from eventjax import errors

__all__ = [
    'BinaryArray', 'CSC', 'CSR', 'CompilationError', 'FixedNumConn', 'FixedNumPerPost', 'FixedNumPerPre',
    'JITCMatrix', 'JITCNormalC', 'JITCNormalR', 'JITCScalarC', 'JITCScalarR', 'JITCUniformC', 'JITCUniformR',
    'KernelCompilationError', 'KernelNotAvailableError', 'XLACustomKernel', 'binary_csrmm', 'binary_csrmv',
    'binary_densemm', 'binary_densemv', 'binary_fcnmm', 'binary_fcnmv', 'binary_jitnmm', 'binary_jitnmv',
    'binary_jitsmm', 'binary_jitsmv', 'binary_jitumm', 'binary_jitumv', 'config', 'cscmm_dt2t', 'cscmv_dt2t',
    'csrmm', 'csrmm_dt2t', 'csrmv', 'csrmv_dt2t', 'defjvp', 'fcnmm_dt2t', 'fcnmv_dt2t', 'jitnmv_dt2t',
    'jitsmv_dt2t', 'jitumv_dt2t',
    'fcnmm', 'fcnmv', 'general_batching_rule', 'get_all_primitive_names', 'get_primitives_by_tags',
    'get_registry', 'install', 'jitn', 'jitnmm', 'jitnmv', 'jits', 'jitsmm', 'jitsmv', 'jitu', 'jitumm', 'jitumv',
    'uninstall',
]

# The brainevent release whose public names and signatures this module follows.
BRAINEVENT_API = '0.2.1'
__version__ = f'{BRAINEVENT_API}+eventjax{ej.__version__.replace("-", ".")}'

# -- operators whose eventjax signature already is brainevent's ---------------------------------

BinaryArray = ej.EventArray
binary_csrmv, binary_csrmm, csrmv, csrmm = ej.binary_csrmv, ej.binary_csrmm, ej.csrmv, ej.csrmm
binary_densemv, binary_densemm = ej.binary_densemv, ej.binary_densemm
binary_fcnmv, binary_fcnmm, fcnmv, fcnmm = ej.binary_fcnmv, ej.binary_fcnmm, ej.fcnmv, ej.fcnmm
XLACustomKernel, defjvp, general_batching_rule = ej.XLACustomKernel, ej.defjvp, ej.general_batching_rule
get_registry, get_primitives_by_tags = ej.get_registry, ej.get_primitives_by_tags
get_all_primitive_names = ej.get_all_primitive_names
KernelCompilationError = CompilationError = errors.KernelCompilationError
KernelNotAvailableError = errors.BackendNotFoundError
FixedNumConn, JITCMatrix = ej.FixedNumConn, ej.JITCMatrix
csrmv_dt2t, csrmm_dt2t, cscmv_dt2t, cscmm_dt2t = ej.csrmv_dt2t, ej.csrmm_dt2t, ej.cscmv_dt2t, ej.cscmm_dt2t
fcnmv_dt2t, fcnmm_dt2t = ej.fcnmv_dt2t, ej.fcnmm_dt2t
jitsmv_dt2t, jitumv_dt2t, jitnmv_dt2t = ej.jitsmv_dt2t, ej.jitumv_dt2t, ej.jitnmv_dt2t


# -- containers with brainevent's constructors ---------------------------------------------------

def _options(who: str, backend, buffers, **defaults) -> None:
    """brainevent's per-container options: accepted at their defaults, refused otherwise with the fix."""
    if backend is not None:
        raise ValueError(f'{who}: eventjax containers carry no backend; drop backend={backend!r} and choose it '
                         f"with eventjax.set_backend('cpu', {backend!r}) or eventjax.config.override(cpu={backend!r}).")
    if buffers is not None:
        raise ValueError(f'{who}: eventjax containers hold no buffers; drop buffers=.')
    for name, (value, default) in defaults.items():
        if value != default:
            raise ValueError(f'{who}: {name}={value!r} has no eventjax counterpart; leave it at {default!r}.')


def _parts(who: str, data, rest: tuple, count: int) -> tuple:
    # brainevent takes both Container((data, indices, ...), shape=...) and Container(data, indices, ..., shape=...).
    if all(r is None for r in rest) and isinstance(data, (tuple, list)) and len(data) == count:
        return tuple(data)
    if any(r is None for r in rest):
        raise TypeError(f'{who}: pass the {count} arrays as one tuple or as {count} arguments, then shape=.')
    return (data, *rest)


@jax.tree_util.register_pytree_node_class
class CSR(ej.CSR):
    """:class:`eventjax.CSR` built with brainevent's arguments: ``CSR((data, indices, indptr), shape=...)``."""

    def __init__(self, data, indices=None, indptr=None, *, shape, backend=None, buffers=None, indptr_dtype='auto',
                 check_structure: bool = True, transposed: bool = False, validate: bool | None = None):
        _options(type(self).__name__ + '()', backend, buffers, indptr_dtype=(indptr_dtype, 'auto'))
        super().__init__(_parts(type(self).__name__ + '()', data, (indices, indptr), 3), shape=shape,
                         transposed=transposed, validate=check_structure if validate is None else validate)


@jax.tree_util.register_pytree_node_class
class CSC(ej.CSC):
    """:class:`eventjax.CSC` built with brainevent's arguments: ``CSC((data, indices, indptr), shape=...)``."""

    def __init__(self, data, indices=None, indptr=None, *, shape, backend=None, buffers=None, indptr_dtype='auto',
                 check_structure: bool = True, transposed: bool = False, validate: bool | None = None):
        _options('CSC()', backend, buffers, indptr_dtype=(indptr_dtype, 'auto'))
        super().__init__(_parts('CSC()', data, (indices, indptr), 3), shape=shape, transposed=transposed,
                         validate=check_structure if validate is None else validate)


def _fixed(base):
    @jax.tree_util.register_pytree_node_class
    class Fixed(base):
        __doc__ = (f':class:`eventjax.{base.__name__}` built with brainevent\'s arguments: '
                   f'``{base.__name__}((data, indices), shape=...)``.')

        def __init__(self, data, indices=None, *, shape, backend=None, precompute_weight_indices: bool = False,
                     buffers=None, transposed: bool = False, validate: bool = True):
            who = f'{base.__name__}()'
            _options(who, backend, buffers, precompute_weight_indices=(precompute_weight_indices, False))
            super().__init__(*_parts(who, data, (indices,), 2), shape=shape, transposed=transposed,
                             validate=validate)

    Fixed.__name__ = Fixed.__qualname__ = base.__name__
    return Fixed


FixedNumPerPre = _fixed(ej.FixedNumPerPre)
FixedNumPerPost = _fixed(ej.FixedNumPerPost)
# brainevent's names before 0.1, which brainstate 0.5 still uses.
FixedPostNumConn, FixedPreNumConn, EventArray = FixedNumPerPre, FixedNumPerPost, BinaryArray


# -- just-in-time connectivity ---------------------------------------------------------------------

def _seed(seed):
    # brainevent draws a seed when none is given.
    return int(np.random.randint(0, 2**31 - 1)) if seed is None else seed


def _jitc_class(name: str, law: str, column: bool):
    def make(first, second=None, prob=None, seed=None, *, shape, corder: bool = False, backend=None,
             buffers=None):
        _options(f'{name}()', None, buffers)
        if law == 'homo':
            # (weight, prob, seed) as one tuple, or weight, prob, seed.
            parts = tuple(first) if isinstance(first, (tuple, list)) and second is None else (first, second, prob)
            weights, prob, seed = parts
        else:
            parts = tuple(first) if isinstance(first, (tuple, list)) and second is None else (first, second, prob,
                                                                                              seed)
            (low, high, prob, seed) = parts
            weights = (low, high)
        m, n = (int(d) for d in shape)
        if column:
            # A column-generated matrix: the transposed view of its transpose, generated row by row.
            return ej.JITCMatrix(weights, prob=prob, seed=_seed(seed), shape=(n, m), law=law, backend=backend).T
        return ej.JITCMatrix(weights, prob=prob, seed=_seed(seed), shape=(m, n), law=law, backend=backend)

    make.__name__ = make.__qualname__ = name
    make.__doc__ = (f'brainevent\'s ``{name}``: an :class:`eventjax.JITCMatrix` with ``law={law!r}``. The '
                    'connections are eventjax\'s generator\'s, not brainevent\'s, for the same seed.')
    return make


JITCScalarR, JITCScalarC = _jitc_class('JITCScalarR', 'homo', False), _jitc_class('JITCScalarC', 'homo', True)
JITCUniformR, JITCUniformC = _jitc_class('JITCUniformR', 'uniform', False), _jitc_class('JITCUniformC', 'uniform', True)
JITCNormalR, JITCNormalC = _jitc_class('JITCNormalR', 'normal', False), _jitc_class('JITCNormalC', 'normal', True)
JITCHomoR, JITCHomoC = JITCScalarR, JITCScalarC


def _jitc_op(name: str, law: str, fn):
    pair = law != 'homo'

    def op(*args, seed=None, shape, transpose: bool = False, corder: bool = True, backend=None):
        # brainevent: (weight, prob, x[, seed]) or (w1, w2, prob, x[, seed]).
        k = 3 if pair else 2
        if len(args) not in (k + 1, k + 2):
            raise TypeError(f'{name}(): takes {"(w1, w2, prob, x[, seed])" if pair else "(weight, prob, x[, seed])"}'
                            f', got {len(args)} positional argument(s).')
        weights = tuple(args[:2]) if pair else args[0]
        prob, x = args[k - 1], args[k]
        seed = args[k + 1] if len(args) == k + 2 else seed
        return fn(weights, x, seed=_seed(seed), prob=prob, shape=shape, law=law, transpose=transpose,
                  backend=backend)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f'brainevent\'s ``{name}`` on :func:`eventjax.{fn.__name__}` with ``law={law!r}``.'
    return op


def _jitc_dense(name: str, law: str):
    def dense(*args, shape, transpose: bool = False, corder: bool = True, backend=None):
        pair = law != 'homo'
        if len(args) != (4 if pair else 3):
            raise TypeError(f'{name}(): takes {"(w1, w2, prob, seed)" if pair else "(weight, prob, seed)"}, '
                            f'got {len(args)} positional argument(s).')
        weights = tuple(args[:2]) if pair else args[0]
        A = ej.JITCMatrix(weights, prob=args[-2], seed=_seed(args[-1]), shape=shape, law=law, backend=backend)
        return A.T.todense() if transpose else A.todense()

    dense.__name__ = dense.__qualname__ = name
    dense.__doc__ = f'brainevent\'s ``{name}``: the dense form of an :class:`eventjax.JITCMatrix` (law {law!r}).'
    return dense


jitsmv, jitsmm = _jitc_op('jitsmv', 'homo', ej.jitcmv), _jitc_op('jitsmm', 'homo', ej.jitcmm)
jitumv, jitumm = _jitc_op('jitumv', 'uniform', ej.jitcmv), _jitc_op('jitumm', 'uniform', ej.jitcmm)
jitnmv, jitnmm = _jitc_op('jitnmv', 'normal', ej.jitcmv), _jitc_op('jitnmm', 'normal', ej.jitcmm)
binary_jitsmv = _jitc_op('binary_jitsmv', 'homo', ej.binary_jitcmv)
binary_jitsmm = _jitc_op('binary_jitsmm', 'homo', ej.binary_jitcmm)
binary_jitumv = _jitc_op('binary_jitumv', 'uniform', ej.binary_jitcmv)
binary_jitumm = _jitc_op('binary_jitumm', 'uniform', ej.binary_jitcmm)
binary_jitnmv = _jitc_op('binary_jitnmv', 'normal', ej.binary_jitcmv)
binary_jitnmm = _jitc_op('binary_jitnmm', 'normal', ej.binary_jitcmm)
jits, jitu, jitn = _jitc_dense('jits', 'homo'), _jitc_dense('jitu', 'uniform'), _jitc_dense('jitn', 'normal')


# -- brainevent.config ---------------------------------------------------------------------------

config = types.ModuleType('brainevent.config', 'brainevent.config on eventjax: the backend and numba thread settings.')
for _name in ('set_backend', 'get_backend', 'clear_backends', 'set_numba_parallel', 'get_numba_parallel',
              'get_numba_num_threads'):
    setattr(config, _name, getattr(ej.config, _name))


def _config_getattr(name: str):
    raise AttributeError(f'brainevent.config.{name} has no eventjax counterpart (eventjax.compat.brainevent); '
                         'eventjax.config holds the settings eventjax has.')


config.__getattr__ = _config_getattr


# -- what eventjax has no twin for ---------------------------------------------------------------

_PLASTICITY = 'no eventjax operator yet; compute the new weights with jax.numpy and swap them in with A.with_data(w)'
_PACKED = 'eventjax.EventArray (bool or numeric events; the kernels compact them themselves)'
_KERNELS = ('eventjax.XLACustomKernel with def_numba_kernel / def_warp_kernel / def_pallas_kernel / def_kernel; '
            'eventjax builds and caches the kernels itself')
_ERRORS = ('eventjax raises builtin exception classes (ValueError, TypeError, RuntimeError) and the subclasses in '
           'eventjax.errors; catch those')
_INSTEAD = {
    'Dense': 'a plain weight array: eventjax.EventArray(spikes) @ W, or eventjax.binary_densemv(W, spikes)',
    'DataRepresentation': 'the eventjax containers (eventjax.CSR, CSC, FixedNumConn, JITCMatrix), which share no '
                          'public base class',
    'EventRepresentation': _PACKED, 'BitPackedBinary': _PACKED, 'bitpack': _PACKED, 'CompactBinary': _PACKED,
    'JITCScalarMatrix': 'eventjax.JITCMatrix(weight, prob=..., seed=..., shape=...) (JITCScalarR here)',
    'binary_csrmv_indexed': 'eventjax.binary_csrmv with the events as a bool vector',
    'binary_csrmm_indexed': 'eventjax.binary_csrmm with the events as a bool matrix',
    'csr_slice_rows': 'A.todense()[rows] for small matrices, or a CSR built from the rows\' entries (A.tocoo())',
    'HybridConfig': 'nothing: eventjax picks its CSR kernels per backend (eventjax.set_backend)',
    'get_hybrid_config': 'nothing: eventjax picks its CSR kernels per backend (eventjax.set_backend)',
    'init_csr_config': 'nothing: eventjax picks its CSR kernels per backend (eventjax.set_backend)',
    'csr_to_coo_index': 'A.tocoo() of an eventjax.CSR, whose row and col are the COO indices',
    'coo_to_csc_index': 'eventjax.CSC.fromdense, or an eventjax.CSR of the transpose (A.T)',
    'csr_to_csc_index': 'A.T of an eventjax.CSR (a view, nothing is copied)',
    'csc_to_csr_index': 'A.T of an eventjax.CSC, which is an eventjax.CSR',
    'coo2csr': 'eventjax.CSR.fromdense, or sort the COO entries by row and count them into indptr',
    'fcn_plasticity_row_p': _PLASTICITY,
    'KernelEntry': _KERNELS, 'numba_kernel': _KERNELS, 'numba_cuda_kernel': _KERNELS,
    'numba_cuda_callable': _KERNELS, 'jaxtype_to_warptype': _KERNELS, 'jaxinfo_to_warpinfo': _KERNELS,
    'register_ffi_target': 'jax.ffi.register_ffi_target', 'list_registered_targets': 'eventjax.primitives()',
    'BenchmarkConfig': 'the eventjax bench command (python -m eventjax bench)',
    'BenchmarkRecord': 'the eventjax bench command (python -m eventjax bench)',
    'BenchmarkResult': 'the eventjax bench command (python -m eventjax bench)',
    'benchmark_function': 'the eventjax bench command (python -m eventjax bench)',
    'BenchmarkDataFnNotProvidedError': 'the eventjax bench command (python -m eventjax bench)',
    'PallasLFSR88RNG': 'eventjax.JITCMatrix, whose generator every backend evaluates alike',
    'PallasLFSR113RNG': 'eventjax.JITCMatrix, whose generator every backend evaluates alike',
    'PallasLFSR128RNG': 'eventjax.JITCMatrix, whose generator every backend evaluates alike',
    'PallasLFSRRNG': 'eventjax.JITCMatrix, whose generator every backend evaluates alike',
    'get_pallas_lfsr_rng_class': 'eventjax.JITCMatrix, whose generator every backend evaluates alike',
}
for _name in ('update_csr_on_binary_pre', 'update_csr_on_binary_post', 'update_csc_on_binary_pre',
              'update_csc_on_binary_post', 'update_dense_on_binary_pre', 'update_dense_on_binary_post',
              'update_fixed_post_conn_on_binary_pre', 'update_fixed_pre_conn_on_binary_post', 'csr_on_pre',
              'csr2csc_on_post', 'dense_on_pre', 'dense_on_post'):
    _INSTEAD[_name] = _PLASTICITY
for _name in ('load_cuda_inline', 'load_cuda_file', 'load_cuda_dir', 'load_cpp_inline', 'load_cpp_file',
              'set_cache_dir', 'get_cache_dir', 'clear_cache', 'print_diagnostics', 'CompiledModule',
              'normalize_tokens', 'CompilerBackend', 'CUDABackend', 'CPPBackend', 'HIPBackend'):
    _INSTEAD[_name] = ('no eventjax equivalent yet (C++/CUDA source kernels are planned); write the kernel for '
                       'def_numba_kernel or def_warp_kernel')
for _name in ('BrainEventError', 'MathError', 'UnsupportedOperationError', 'KernelError',
              'KernelFallbackExhaustedError', 'KernelExecutionError', 'KernelToolchainError',
              'KernelRegistrationError', 'CUDANotInstalledError', 'NvccNotFoundError', 'HostCompilerNotFoundError',
              'HeaderNotFoundError', 'GpuArchDetectionError', 'HostCompilerIncompatibleError',
              'UnsupportedArchError', 'KernelLoadError'):
    _INSTEAD[_name] = _ERRORS


def __getattr__(name: str):
    if name in _INSTEAD:
        raise AttributeError(f'brainevent.{name} has no eventjax twin (eventjax.compat.brainevent follows brainevent '
                             f'{BRAINEVENT_API}); use {_INSTEAD[name]}.')
    if name.endswith('_p'):
        raise AttributeError(f'brainevent.{name}: eventjax does not export primitive objects; use '
                             f'eventjax.get_registry()[{name[:-2]!r}] where eventjax has that operator, or call the '
                             'function without _p.')
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')


# -- the opt-in ----------------------------------------------------------------------------------

def install(*, replace_installed: bool = False) -> types.ModuleType:
    """Make ``import brainevent`` (and ``brainevent.config``) resolve to this module in this process.

    Call it before anything imports brainevent. It never shadows a real
    brainevent silently: it raises ``RuntimeError`` when brainevent is
    already imported, and when brainevent is installed unless
    ``replace_installed=True``. Calling it again is a no-op;
    :func:`uninstall` undoes it.

    Example:
        >>> import eventjax.compat.brainevent as compat
        >>> compat.install(replace_installed=True)  # doctest: +SKIP
        >>> import brainevent                        # doctest: +SKIP
        >>> brainevent is compat                     # doctest: +SKIP
        True
    """
    me = sys.modules[__name__]
    current = sys.modules.get('brainevent')
    if current is me:
        return me
    if current is not None:
        raise RuntimeError(f'eventjax.compat.brainevent.install(): brainevent is already imported (from '
                           f'{getattr(current, "__file__", current)!r}); call install() first thing in the process, '
                           'before anything imports brainevent (brainstate, braintools, brainpy do).')
    spec = importlib.util.find_spec('brainevent')
    if spec is not None and not replace_installed:
        raise RuntimeError(f'eventjax.compat.brainevent.install(): brainevent is installed ({spec.origin}); eventjax '
                           'never shadows it silently. Pass replace_installed=True to have `import brainevent` '
                           'resolve to eventjax in this process anyway.')
    sys.modules['brainevent'] = me
    sys.modules['brainevent.config'] = config
    return me


def uninstall() -> None:
    """Undo :func:`install`: ``import brainevent`` finds the real package again (if there is one)."""
    if sys.modules.get('brainevent') is sys.modules[__name__]:
        del sys.modules['brainevent']
        sys.modules.pop('brainevent.config', None)
