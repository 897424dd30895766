"""brainevent's public names, with brainevent's signatures, running on eventjax.

Code written for brainevent 0.3 (brainpy 2.9, brainstate 0.6, braintools
0.4; the 0.2 spellings 0.3 still accepts too) runs on eventjax through this
module: its containers take brainevent's constructor arguments, its
operators brainevent's keyword names and event rule (an entry is an event
when ``!= 0``), its exceptions are brainevent's classes (each a subclass of
the eventjax class raised for the same thing), and brainunit ``Quantity``
weights and vectors keep their units. A brainevent name eventjax does not
serve raises an error naming what to use instead, also through
``from brainevent import name``. ``docs/brainevent.rst`` lists every name.

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

import dis
import importlib.util
import sys
import types

import eventjax as ej
from eventjax.compat.brainevent import config
from eventjax.compat.brainevent._containers import (
    CSC,
    CSR,
    TCSR,
    DataRepresentation,
    Dense,
    FixedNumConn,
    FixedNumPerPost,
    FixedNumPerPre,
    FixedPostNumConn,
    FixedPreNumConn,
    JITCHomoC,
    JITCHomoR,
    JITCMatrix,
    JITCNormalC,
    JITCNormalR,
    JITCScalarC,
    JITCScalarMatrix,
    JITCScalarR,
    JITCUniformC,
    JITCUniformR,
)
from eventjax.compat.brainevent._errors import (
    BenchmarkDataFnNotProvidedError,
    BrainEventError,
    CompilationError,
    CUDANotInstalledError,
    GpuArchDetectionError,
    HeaderNotFoundError,
    HostCompilerIncompatibleError,
    HostCompilerNotFoundError,
    KernelCompilationError,
    KernelError,
    KernelExecutionError,
    KernelFallbackExhaustedError,
    KernelLoadError,
    KernelNotAvailableError,
    KernelRegistrationError,
    KernelToolchainError,
    MathError,
    NvccNotFoundError,
    UnsupportedArchError,
    UnsupportedOperationError,
)
from eventjax.compat.brainevent._events import BinaryArray, CompactBinary, EventRepresentation, bitpack
from eventjax.compat.brainevent._kernels import (
    clear_cache,
    get_cache_dir,
    jaxinfo_to_warpinfo,
    jaxtype_to_warptype,
    load_cpp_file,
    load_cpp_inline,
    load_cuda_dir,
    load_cuda_file,
    load_cuda_inline,
    numba_cuda_kernel,
    numba_kernel,
    print_diagnostics,
)
from eventjax.compat.brainevent._names import NOT_SERVED
from eventjax.compat.brainevent._operators import (
    binary_csrmm,
    binary_csrmm_indexed,
    binary_csrmv,
    binary_csrmv_indexed,
    binary_densemm,
    binary_densemv,
    binary_fcnmm,
    binary_fcnmv,
    binary_jitnmm,
    binary_jitnmv,
    binary_jitsmm,
    binary_jitsmv,
    binary_jitumm,
    binary_jitumv,
    coo2csr,
    coo_to_csc_index,
    csc_to_csr_index,
    cscmm_dt2t,
    cscmv_dt2t,
    csr_apply_on_post,
    csr_apply_on_pre,
    csr_delay_deliver,
    csr_delay_deliver_layout,
    csr_slice_rows,
    csr_to_coo_index,
    csr_to_csc_index,
    csrmm,
    csrmm_dt2t,
    csrmv,
    csrmv_dt2t,
    fcnmm,
    fcnmm_dt2t,
    fcnmv,
    fcnmv_dt2t,
    jitn,
    jitnmm,
    jitnmv,
    jitnmv_dt2t,
    jits,
    jitsmm,
    jitsmv,
    jitsmv_dt2t,
    jitu,
    jitumm,
    jitumv,
    jitumv_dt2t,
)
from eventjax.compat.brainevent._plasticity import (
    update_csc_on_binary_post,
    update_csc_on_binary_pre,
    update_csr_on_binary_post,
    update_csr_on_binary_pre,
    update_dense_on_binary_post,
    update_dense_on_binary_pre,
    update_fixed_post_conn_on_binary_pre,
    update_fixed_pre_conn_on_binary_post,
)
from eventjax.compat.brainevent._primitives import PRIMITIVES, primitive

# The brainevent release whose public names and signatures this module follows.
BRAINEVENT_API = '0.3.0'
__version__ = f'{BRAINEVENT_API}+eventjax{ej.__version__.replace("-", ".")}'

XLACustomKernel, defjvp, general_batching_rule = ej.XLACustomKernel, ej.defjvp, ej.general_batching_rule
get_registry, get_primitives_by_tags = ej.get_registry, ej.get_primitives_by_tags
get_all_primitive_names = ej.get_all_primitive_names
CSRDelayLayout = ej.CSRDelayLayout
WeightedArray = ej.GradedEvents
# brainevent's name before 0.3: the events, unpacked (the kernels pack them themselves).
EventArray = BitPackedBinary = BinaryArray

__all__ = [  # noqa: RUF022 (brainevent's names, then its primitives)
    'BenchmarkDataFnNotProvidedError', 'BinaryArray', 'BitPackedBinary', 'BrainEventError', 'CSC', 'CSR',
    'CSRDelayLayout', 'CUDANotInstalledError', 'CompactBinary', 'CompilationError', 'DataRepresentation', 'Dense',
    'EventArray', 'EventRepresentation', 'FixedNumConn', 'FixedNumPerPost', 'FixedNumPerPre', 'FixedPostNumConn',
    'FixedPreNumConn', 'GpuArchDetectionError', 'HeaderNotFoundError', 'HostCompilerIncompatibleError',
    'HostCompilerNotFoundError', 'JITCHomoC', 'JITCHomoR', 'JITCMatrix', 'JITCNormalC', 'JITCNormalR',
    'JITCScalarC', 'JITCScalarMatrix', 'JITCScalarR', 'JITCUniformC', 'JITCUniformR', 'KernelCompilationError',
    'KernelError', 'KernelExecutionError', 'KernelFallbackExhaustedError', 'KernelLoadError',
    'KernelNotAvailableError', 'KernelRegistrationError', 'KernelToolchainError', 'MathError', 'NvccNotFoundError',
    'TCSR', 'UnsupportedArchError', 'UnsupportedOperationError', 'WeightedArray', 'XLACustomKernel', 'binary_csrmm',
    'binary_csrmm_indexed', 'binary_csrmv', 'binary_csrmv_indexed', 'binary_densemm', 'binary_densemv',
    'binary_fcnmm', 'binary_fcnmv', 'binary_jitnmm', 'binary_jitnmv', 'binary_jitsmm', 'binary_jitsmv',
    'binary_jitumm', 'binary_jitumv', 'bitpack', 'clear_cache', 'config', 'coo2csr', 'coo_to_csc_index',
    'csc_to_csr_index', 'cscmm_dt2t', 'cscmv_dt2t', 'csr_apply_on_post', 'csr_apply_on_pre', 'csr_delay_deliver',
    'csr_delay_deliver_layout', 'csr_slice_rows', 'csr_to_coo_index', 'csr_to_csc_index', 'csrmm', 'csrmm_dt2t',
    'csrmv', 'csrmv_dt2t', 'defjvp', 'fcnmm', 'fcnmm_dt2t', 'fcnmv', 'fcnmv_dt2t', 'general_batching_rule',
    'get_all_primitive_names', 'get_cache_dir', 'get_primitives_by_tags', 'get_registry', 'install',
    'jaxinfo_to_warpinfo', 'jaxtype_to_warptype', 'jitn', 'jitnmm', 'jitnmv', 'jitnmv_dt2t', 'jits', 'jitsmm',
    'jitsmv', 'jitsmv_dt2t', 'jitu', 'jitumm', 'jitumv', 'jitumv_dt2t', 'load_cpp_file', 'load_cpp_inline',
    'load_cuda_dir', 'load_cuda_file', 'load_cuda_inline', 'numba_cuda_kernel', 'numba_kernel', 'print_diagnostics',
    'uninstall', 'update_csc_on_binary_post', 'update_csc_on_binary_pre', 'update_csr_on_binary_post',
    'update_csr_on_binary_pre', 'update_dense_on_binary_post', 'update_dense_on_binary_pre',
    'update_fixed_post_conn_on_binary_pre', 'update_fixed_pre_conn_on_binary_post',
    # the primitive objects, served by __getattr__
    'binary_csrmm_indexed_p', 'binary_csrmm_p', 'binary_csrmv_indexed_p', 'binary_csrmv_p', 'binary_densemm_p',
    'binary_densemv_p', 'binary_fcnmm_p', 'binary_fcnmv_p', 'binary_jitnmm_p', 'binary_jitnmv_p', 'binary_jitsmm_p',
    'binary_jitsmv_p', 'binary_jitumm_p', 'binary_jitumv_p', 'csr_delay_deliver_layout_p', 'csr_delay_deliver_p',
    'csr_slice_rows_p', 'csrmm_dt2t_p', 'csrmm_p', 'csrmv_dt2t_p', 'csrmv_p', 'fcn_plasticity_row_p', 'jitn_p',
    'jitnmm_p', 'jitnmv_p', 'jits_p', 'jitsmm_p', 'jitsmv_p', 'jitu_p', 'jitumm_p', 'jitumv_p',
    'update_csr_on_binary_post_p', 'update_csr_on_binary_pre_p', 'update_dense_on_binary_post_p',
    'update_dense_on_binary_pre_p',
]


class _NotServed(AttributeError):
    """A brainevent name eventjax does not serve (an AttributeError, so ``hasattr`` is False)."""


def _missing(name: str, text: str) -> Exception:
    # ``from brainevent import X`` turns an AttributeError into a bare ImportError that drops the
    # hint; raised from an IMPORT_FROM, the ImportError carries it.
    frame = sys._getframe(2)
    try:
        importing = frame.f_code.co_code[frame.f_lasti] == dis.opmap['IMPORT_FROM']
    except (IndexError, KeyError):
        importing = False
    return ImportError(text, name=__name__) if importing else _NotServed(text)


def __getattr__(name: str):
    if name in PRIMITIVES:
        return primitive(name)
    if name in NOT_SERVED:
        raise _missing(name, f'brainevent.{name} is not served by eventjax (eventjax.compat.brainevent follows '
                             f'brainevent {BRAINEVENT_API}); use {NOT_SERVED[name]}.')
    raise _missing(name, f'module \'brainevent\' (eventjax.compat.brainevent) has no attribute {name!r}; '
                         'docs/brainevent.rst lists the names eventjax serves.')


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
