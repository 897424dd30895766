"""eventjax: custom JAX primitives with per-platform backends, and event-driven kernels.

``import eventjax`` loads the configuration (``set_backend`` & co), the
errors and the backend list; the operators, containers and the rest load
on first use (``_LAZY`` names each one's module; the ``TYPE_CHECKING`` block
imports each for readers and tools), so a process that only configures pays
for none of them, and numba, warp and the C++ toolchain load
only when a kernel of theirs is first lowered.
"""

import importlib
import threading
import warnings
from typing import TYPE_CHECKING

# The backend list (each bridge hands the configuration the names it answers to) loads with the configuration.
from eventjax import backends as backends
from eventjax import config, errors
from eventjax._version import __version__ as __version__
from eventjax.config import clear_backends, get_backend, set_backend

_CONTAINERS = ('COO', 'CSC', 'CSR', 'BitPackedEvents', 'CompactEvents', 'DelayedCSR', 'EventArray', 'FixedNumConn',
               'FixedNumPerPost', 'FixedNumPerPre', 'GradedEvents', 'IndexedEvents', 'JITCMatrix', 'coo2csr',
               'coo_to_csc_index', 'csc_to_csr_index', 'csr_to_coo_index', 'csr_to_csc_index', 'random_csr',
               'random_fixed_num_conn')
_INDEXED = ('binary_csrmm_indexed', 'binary_csrmv_indexed', 'binary_csrmv_packed', 'binary_fcnmv_packed', 'bitpack',
            'bitunpack', 'compact_events', 'csr_slice_rows', 'expand_events')
_PLASTICITY = ('csr2csc_on_post', 'csr_apply_on_post', 'csr_apply_on_pre', 'csr_column_view', 'csr_on_pre',
               'dense_apply_on_post', 'dense_apply_on_pre', 'dense_on_post', 'dense_on_pre', 'fcn_apply_on_pre',
               'fcn_on_pre')
_DT2T = ('cscmm_dt2t', 'cscmv_dt2t', 'csr_sddmm', 'csrmm_dt2t', 'csrmv_dt2t', 'fcnmm_dt2t', 'fcnmv_dt2t')

# Every public name loaded on first use, and the module it comes from.
_LAZY = {
    **dict.fromkeys(_CONTAINERS, 'eventjax.containers'),
    **dict.fromkeys(_INDEXED, 'eventjax.kernels.indexed'),
    **dict.fromkeys(_PLASTICITY, 'eventjax.kernels.plasticity'),
    **dict.fromkeys(_DT2T, 'eventjax.kernels.dt2t'),
    **dict.fromkeys(('XLACustomKernel', 'backends_available'), 'eventjax.backends'),
    **dict.fromkeys(('NativeKernel', 'load_cpp_inline', 'load_cuda_file', 'load_cuda_inline'),
                    'eventjax.backends.native'),
    **dict.fromkeys(('NumbaCudaKernel', 'numba_cuda_kernel'), 'eventjax.backends.numba_cuda'),
    **dict.fromkeys(('binary_csrmm', 'binary_csrmv', 'csrmm', 'csrmv'), 'eventjax.kernels.csr'),
    **dict.fromkeys(('CSRDelayLayout', 'csr_delay_deliver', 'csr_delay_deliver_layout', 'fcn_delay_deliver'),
                    'eventjax.kernels.delay'),
    **dict.fromkeys(('binary_densemm', 'binary_densemv'), 'eventjax.kernels.dense'),
    **dict.fromkeys(('binary_fcnmm', 'binary_fcnmv', 'fcnmm', 'fcnmv'), 'eventjax.kernels.fcn'),
    **dict.fromkeys(('binary_jitcmm', 'binary_jitcmv', 'jitcmm', 'jitcmv'), 'eventjax.kernels.jitc'),
    **dict.fromkeys(('defjvp', 'general_batching_rule', 'primitives'), 'eventjax.primitive'),
    **dict.fromkeys(('get_all_primitive_names', 'get_primitives_by_tags', 'get_registry'), 'eventjax.primitive.tags'),
    'warm': 'eventjax.serving.disk_cache',
}
# These list the primitives alive in the process: every standard operator is loaded before they answer.
_LISTS_PRIMITIVES = frozenset({'get_all_primitive_names', 'get_primitives_by_tags', 'get_registry', 'primitives'})

__all__ = [
    'COO',
    'BitPackedEvents',
    'CompactEvents',
    'CSC',
    'CSR',
    'CSRDelayLayout',
    'DelayedCSR',
    'EventArray',
    'FixedNumConn',
    'FixedNumPerPost',
    'FixedNumPerPre',
    'GradedEvents',
    'IndexedEvents',
    'JITCMatrix',
    'NativeKernel',
    'NumbaCudaKernel',
    'XLACustomKernel',
    'backends_available',
    'binary_csrmm',
    'binary_csrmv',
    'binary_csrmm_indexed',
    'binary_csrmv_indexed',
    'binary_csrmv_packed',
    'binary_densemm',
    'binary_densemv',
    'binary_fcnmm',
    'binary_fcnmv',
    'binary_fcnmv_packed',
    'binary_jitcmm',
    'binary_jitcmv',
    'bitpack',
    'bitunpack',
    'clear_backends',
    'compact_events',
    'config',
    'coo2csr',
    'coo_to_csc_index',
    'csc_to_csr_index',
    'csr2csc_on_post',
    'csr_apply_on_post',
    'csr_apply_on_pre',
    'csr_column_view',
    'csr_delay_deliver',
    'csr_delay_deliver_layout',
    'csr_on_pre',
    'csr_to_coo_index',
    'csr_to_csc_index',
    'csrmm',
    'csr_slice_rows',
    'csrmv',
    'defjvp',
    'dense_apply_on_post',
    'dense_apply_on_pre',
    'dense_on_post',
    'dense_on_pre',
    'errors',
    'expand_events',
    'fcn_apply_on_pre',
    'fcn_delay_deliver',
    'fcn_on_pre',
    'fcnmm',
    'fcnmv',
    'general_batching_rule',
    'get_all_primitive_names',
    'get_backend',
    'get_primitives_by_tags',
    'get_registry',
    'jitcmm',
    'jitcmv',
    'load_cpp_inline',
    'load_cuda_file',
    'load_cuda_inline',
    'numba_cuda_kernel',
    'primitives',
    'random_csr',
    'random_fixed_num_conn',
    'set_backend',
    'cscmm_dt2t',
    'cscmv_dt2t',
    'csr_sddmm',
    'csrmm_dt2t',
    'csrmv_dt2t',
    'fcnmm_dt2t',
    'fcnmv_dt2t',
    'warm',
]


if TYPE_CHECKING:  # what each name loads, for readers and tools (nothing runs it)
    from eventjax.backends import XLACustomKernel, backends_available
    from eventjax.backends.native import NativeKernel, load_cpp_inline, load_cuda_file, load_cuda_inline
    from eventjax.backends.numba_cuda import NumbaCudaKernel, numba_cuda_kernel
    from eventjax.containers import (
        COO,
        CSC,
        CSR,
        BitPackedEvents,
        CompactEvents,
        DelayedCSR,
        EventArray,
        FixedNumConn,
        FixedNumPerPost,
        FixedNumPerPre,
        GradedEvents,
        IndexedEvents,
        JITCMatrix,
        coo2csr,
        coo_to_csc_index,
        csc_to_csr_index,
        csr_to_coo_index,
        csr_to_csc_index,
        random_csr,
        random_fixed_num_conn,
    )
    from eventjax.kernels.csr import binary_csrmm, binary_csrmv, csrmm, csrmv
    from eventjax.kernels.delay import CSRDelayLayout, csr_delay_deliver, csr_delay_deliver_layout, fcn_delay_deliver
    from eventjax.kernels.dense import binary_densemm, binary_densemv
    from eventjax.kernels.dt2t import cscmm_dt2t, cscmv_dt2t, csr_sddmm, csrmm_dt2t, csrmv_dt2t, fcnmm_dt2t, fcnmv_dt2t
    from eventjax.kernels.fcn import binary_fcnmm, binary_fcnmv, fcnmm, fcnmv
    from eventjax.kernels.indexed import (
        binary_csrmm_indexed,
        binary_csrmv_indexed,
        binary_csrmv_packed,
        binary_fcnmv_packed,
        bitpack,
        bitunpack,
        compact_events,
        csr_slice_rows,
        expand_events,
    )
    from eventjax.kernels.jitc import binary_jitcmm, binary_jitcmv, jitcmm, jitcmv
    from eventjax.kernels.plasticity import (
        csr2csc_on_post,
        csr_apply_on_post,
        csr_apply_on_pre,
        csr_column_view,
        csr_on_pre,
        dense_apply_on_post,
        dense_apply_on_pre,
        dense_on_post,
        dense_on_pre,
        fcn_apply_on_pre,
        fcn_on_pre,
    )
    from eventjax.primitive import defjvp, general_batching_rule, primitives
    from eventjax.primitive.tags import get_all_primitive_names, get_primitives_by_tags, get_registry
    from eventjax.serving.disk_cache import warm

# One thread at a time loads: CPython takes a submodule's import lock before its
# package's, so two threads importing a package and one of its submodules at once
# can each wait on the other (a ``_DeadlockError``, or the import of a name from a
# module another thread has only half run). Under this lock every first lookup
# imports on one thread; the others wait for it and then find the name loaded.
_LOADING = threading.RLock()


def _load(name: str):
    with _LOADING:
        if name in globals():  # another thread loaded it while this one waited
            return globals()[name]
        if name in _LISTS_PRIMITIVES:
            for module in dict.fromkeys(_LAZY.values()):
                importlib.import_module(module)
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value  # later lookups skip __getattr__
        return value


def __getattr__(name: str):
    if name in _LAZY:
        return _load(name)
    # brainevent's spellings: each warns and names eventjax's own until the next release
    # (loaded by name, as every other name here: compat is a layer above this one).
    with _LOADING:
        spellings = importlib.import_module('eventjax.compat.spellings')
    if name in spellings.RENAMED or name in spellings.REPLACED:
        warnings.warn(spellings.message(name), DeprecationWarning, stacklevel=2)
        if name in spellings.RENAMED:
            return _load(spellings.RENAMED[name])
        with _LOADING:
            return getattr(importlib.import_module('eventjax.compat.legacy'), name)
    # brainevent exports each operator's primitive as ``<op>_p``; eventjax keeps
    # primitives private and reaches them through the registry instead.
    if name.endswith('_p') and name[:-2] in _load('get_registry')():
        raise AttributeError(f"module 'eventjax' has no attribute {name!r}: eventjax does not export primitive "
                             f"objects. Use eventjax.get_registry()[{name[:-2]!r}] for the XLACustomKernel "
                             f"(e.g. .available_backends('cpu')), or eventjax.compat.brainevent.{name} for "
                             "brainevent's name.")
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')


def __dir__():
    return sorted({*globals(), *__all__})
