"""What each public name of brainevent is here: served, served with a difference, or not served and why.

This table is the one source of the name table in ``docs/brainevent.rst``
(``tools/brainevent_names.py`` writes it; a test fails when the two differ)
and of the hints that the module's ``__getattr__`` raises.
"""

from __future__ import annotations

__all__ = ['DIFFERS', 'NOT_SERVED', 'status']

_JITC = ("the connections are eventjax's generator's, not brainevent's, for the same seed (every eventjax backend "
         'generates the same matrix)')
_PRIM = ("eventjax's primitive for that operator (available_backends, def_kernel, set_default work); its operands "
         'and parameters are eventjax\'s')
_LAW_PRIM = "eventjax's one primitive for the three weight laws (the law is a parameter); " + _PRIM
_TOOLCHAIN = 'a class to catch; eventjax raises it only where it translates an eventjax error'
_BENCH = 'the eventjax bench command (python -m eventjax bench) times and compares kernels'
_CUDA_BUILD = ('eventjax.load_cuda_inline / load_cpp_inline (content-keyed build cache); eventjax does not expose '
               'its compiler drivers')
_LFSR = ("eventjax.JITCMatrix: eventjax's generated connectivity comes from one counter-based generator every "
         'backend evaluates alike, not from an LFSR')
_HYBRID = 'nothing: eventjax picks its CSR kernels per backend, with no tuning step (eventjax.set_backend)'

# Served, with what differs from brainevent.
DIFFERS = {
    'binary_csrmv': '``workspace=`` accepted and ignored',
    'binary_csrmm': '``workspace=`` accepted and ignored',
    'binary_csrmv_indexed': '``workspace=`` accepted and ignored',
    'binary_csrmm_indexed': '``workspace=`` accepted and ignored',
    **dict.fromkeys(('JITCScalarR', 'JITCScalarC', 'JITCUniformR', 'JITCUniformC', 'JITCNormalR', 'JITCNormalC',
                     'JITCScalarMatrix', 'JITCMatrix', 'jits', 'jitu', 'jitn', 'jitsmv', 'jitsmm', 'jitumv', 'jitumm',
                     'jitnmv', 'jitnmm', 'binary_jitsmv', 'binary_jitsmm', 'binary_jitumv', 'binary_jitumm',
                     'binary_jitnmv', 'binary_jitnmm', 'jitsmv_dt2t', 'jitumv_dt2t', 'jitnmv_dt2t'), _JITC),
    'TCSR': 'a CSR built from the source CSR: eventjax tiles nothing; ``backward_algorithm`` only ``"bptt"``',
    'CSR': 'containers carry no backend: ``backend=`` other than None raises, choose it with '
           '``eventjax.set_backend``; ``buffers=`` is refused',
    'CSC': 'containers carry no backend (``backend=`` raises); ``buffers=`` is refused',
    'FixedNumPerPre': 'containers carry no backend (``backend=`` raises); ``buffers=`` is refused',
    'FixedNumPerPost': 'containers carry no backend (``backend=`` raises); ``buffers=`` is refused',
    'FixedNumConn': "eventjax's base class of the two",
    'DataRepresentation': 'a marker base class of the containers here (no brainunit ``SparseMatrix`` methods)',
    'Dense': '``@`` with event arrays, ``todense``, ``with_data``, ``.T``; no plasticity methods',
    'WeightedArray': "eventjax.GradedEvents: the same rule (zeros are not events), eventjax's methods",
    'BitPackedBinary': 'holds the events unpacked (eventjax\'s kernels pack them themselves); ``@`` as '
                       'BinaryArray',
    'CompactBinary': "eventjax.CompactEvents with brainevent's rule in ``from_array(spikes, capacity)`` (eventjax's "
                     'arguments: no ``bit_width``)',
    'CSRDelayLayout': "eventjax's layout class and its ``build``",
    'update_csc_on_binary_pre': 'one pass over every stored entry (not event-driven)',
    'update_csc_on_binary_post': 'one pass over every stored entry (not event-driven)',
    'fcn_plasticity_row_p': "eventjax's ``fcn_on_pre`` primitive; " + _PRIM,
    'csr_to_csc_index': '``method=`` and ``column_block_size=`` accepted and ignored',
    'XLACustomKernel': "eventjax's primitive class: ``def_numba_kernel``, ``def_warp_kernel``, "
                       '``def_pallas_kernel``, ``def_jax_kernel``; see the backends page',
    'get_cache_dir': "eventjax's folder of compiled C++/CUDA kernels (set by ``EVENTJAX_CACHE_DIR``)",
    'clear_cache': "clears eventjax's kernel caches (numba handlers, C++/CUDA libraries); with ``name``, the "
                   'C++/CUDA libraries whose file name holds it',
    'numba_kernel': '``vmap_method=`` accepted and ignored (eventjax batches by looping)',
    'numba_cuda_kernel': "eventjax's numba_cuda_kernel (needs a GPU and numba-cuda)",
    'load_cuda_inline': "eventjax's build cache; returns eventjax's module object",
    'load_cuda_file': "eventjax's build cache; returns eventjax's module object",
    'load_cuda_dir': "the directory's ``*.cu`` sources through eventjax.load_cuda_inline",
    'load_cpp_inline': "eventjax's build cache; returns eventjax's module object",
    'load_cpp_file': 'the file\'s source through eventjax.load_cpp_inline',
    'print_diagnostics': "prints eventjax.backends_available()",
    'config': '``set_lfsr_algorithm`` and ``set_compute_capability`` are checked and recorded but change no '
              'connection and no build',
    'config.set_compute_capability': "checked and recorded (brainevent's spellings); eventjax builds CUDA sources for "
                                     '``EVENTJAX_CUDA_ARCH``, else the GPU it runs on',
    'config.prefer_system_nvcc': 'eventjax always takes ``$NVCC``, else the nvcc on the PATH; with ``False``, set '
                                 '``NVCC`` to the pip nvcc',
    'config.set_lfsr_algorithm': 'recorded and returned by get_lfsr_algorithm; changes no generated connection',
    'config.get_lfsr_algorithm': 'the name last set (``"lfsr88"`` at first)',
    'config.set_numba_parallel': 'sets the numba thread count (``False``: one thread)',
    'MathError': 'also a ValueError; operands that do not fit (shapes, lengths) raise its subclass that is also '
                 "an AssertionError, brainevent's class for them",
    'UnsupportedOperationError': 'also a TypeError',
    'KernelNotAvailableError': 'also eventjax.errors.BackendNotFoundError',
    'KernelCompilationError': 'also eventjax.errors.KernelCompilationError',
    'CompilationError': 'also eventjax.errors.KernelCompilationError',
    'CUDANotInstalledError': 'also eventjax.errors.BackendUnavailableError; ' + _TOOLCHAIN,
    'KernelToolchainError': 'also eventjax.errors.BackendUnavailableError; ' + _TOOLCHAIN,
    'KernelFallbackExhaustedError': _TOOLCHAIN, 'KernelExecutionError': _TOOLCHAIN,
    'KernelRegistrationError': _TOOLCHAIN, 'BenchmarkDataFnNotProvidedError': _TOOLCHAIN,
    'NvccNotFoundError': _TOOLCHAIN, 'HostCompilerNotFoundError': _TOOLCHAIN, 'HeaderNotFoundError': _TOOLCHAIN,
    'GpuArchDetectionError': _TOOLCHAIN, 'HostCompilerIncompatibleError': _TOOLCHAIN,
    'UnsupportedArchError': _TOOLCHAIN, 'KernelLoadError': _TOOLCHAIN,
}
for _law in 'snu':
    for _kind in ('mv', 'mm'):
        DIFFERS[f'binary_jit{_law}{_kind}_p'] = _LAW_PRIM
        DIFFERS[f'jit{_law}{_kind}_p'] = _LAW_PRIM
    DIFFERS[f'jit{_law}_p'] = "eventjax's jitcmm primitive (the dense form is the product with the identity); " + _PRIM
for _name in ('binary_csrmv_p', 'binary_csrmm_p', 'binary_csrmv_indexed_p', 'binary_csrmm_indexed_p', 'csrmv_p',
              'csrmm_p', 'csr_slice_rows_p', 'csr_delay_deliver_p', 'csr_delay_deliver_layout_p', 'binary_densemv_p',
              'binary_densemm_p', 'binary_fcnmv_p', 'binary_fcnmm_p'):
    DIFFERS[_name] = _PRIM
for _name in ('csrmv_dt2t_p', 'csrmm_dt2t_p'):
    DIFFERS[_name] = "eventjax's one csr_dt2t primitive; " + _PRIM
for _name, _op in (('update_csr_on_binary_pre_p', 'csr_on_pre'), ('update_csr_on_binary_post_p', 'csr2csc_on_post'),
                   ('update_dense_on_binary_pre_p', 'dense_on_pre'),
                   ('update_dense_on_binary_post_p', 'dense_on_post')):
    DIFFERS[_name] = f"eventjax's ``{_op}`` primitive; " + _PRIM

# Not served: why, and what to use.
NOT_SERVED = {
    'BenchmarkConfig': _BENCH, 'BenchmarkRecord': _BENCH, 'BenchmarkResult': _BENCH, 'benchmark_function': _BENCH,
    'HybridConfig': _HYBRID, 'get_hybrid_config': _HYBRID, 'init_csr_config': _HYBRID,
    'numba_cuda_callable': 'eventjax.numba_cuda_kernel, or an XLACustomKernel with a numba_cuda kernel',
    'set_cache_dir': "the EVENTJAX_CACHE_DIR environment variable, set before the process starts (the folder is "
                     'read at every build; a setter would race with builds in other threads)',
    'KernelEntry': 'eventjax.get_registry() maps names to primitives; a kernel is declared with def_kernel',
    'CompiledModule': "the object eventjax.load_cpp_inline returns (its functions are attributes)",
    'register_ffi_target': 'jax.ffi.register_ffi_target',
    'list_registered_targets': 'eventjax.primitives() lists eventjax\'s operators',
    'normalize_tokens': _CUDA_BUILD, 'CompilerBackend': _CUDA_BUILD, 'CUDABackend': _CUDA_BUILD,
    'CPPBackend': _CUDA_BUILD, 'HIPBackend': _CUDA_BUILD,
    'PallasLFSR88RNG': _LFSR, 'PallasLFSR113RNG': _LFSR, 'PallasLFSR128RNG': _LFSR, 'PallasLFSRRNG': _LFSR,
    'get_pallas_lfsr_rng_class': _LFSR,
}


def status(name: str) -> tuple[str, str]:
    """``(kind, note)`` for a brainevent name: kind is ``'same'``, ``'differs'`` or ``'not served'``.

    Example:
        >>> status('binary_csrmv')[0], status('HybridConfig')[0], status('csrmv')
        ('differs', 'not served', ('same', ''))
    """
    if name in NOT_SERVED:
        return 'not served', NOT_SERVED[name]
    if name in DIFFERS:
        return 'differs', DIFFERS[name]
    return 'same', ''
