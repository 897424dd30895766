"""Where each standard operator's kernels are: ``grep -A7 "'binary_csrmv'" src/eventjax/kernels/table.py``.

For each operator, per backend, the file (under ``eventjax/kernels/``) whose
``<operator>_kernel`` that backend runs; pallas's tpu kernel, where there is
one, is ``<operator>_tpu_kernel`` in the same file. Registration finds the
kernels by this rule (:mod:`eventjax.kernels.common.operator`);
``tools/kernel_table.py`` writes this table from the registry, and a test
fails when the two differ. Nothing imports this module.
"""

__all__ = ['KERNELS']


KERNELS = {
    'binary_csrmm': {
        'cpp': 'csr/cpp_impl.py',
        'cuda': 'csr/cuda_impl.py',
        'jax': 'csr/jax_impl.py',
        'numba': 'csr/numba_impl.py',
        'pallas': 'csr/pallas_impl.py',
        'warp': 'csr/warp_impl.py',
    },
    'binary_csrmm_indexed': {
        'jax': 'indexed/jax_impl.py',
        'numba': 'indexed/numba_impl.py',
        'pallas': 'indexed/pallas_impl.py',
        'warp': 'indexed/warp_impl.py',
    },
    'binary_csrmv': {
        'cpp': 'csr/cpp_impl.py',
        'cuda': 'csr/cuda_impl.py',
        'jax': 'csr/jax_impl.py',
        'numba': 'csr/numba_impl.py',
        'pallas': 'csr/pallas_impl.py',
        'warp': 'csr/warp_impl.py',
    },
    'binary_csrmv_indexed': {
        'jax': 'indexed/jax_impl.py',
        'numba': 'indexed/numba_impl.py',
        'pallas': 'indexed/pallas_impl.py',
        'warp': 'indexed/warp_impl.py',
    },
    'binary_csrmv_packed': {
        'jax': 'indexed/jax_impl.py',
        'numba': 'indexed/numba_impl.py',
        'pallas': 'indexed/pallas_impl.py',
        'warp': 'indexed/warp_impl.py',
    },
    'binary_densemm': {
        'jax': 'dense/jax_impl.py',
        'numba': 'dense/numba_impl.py',
        'pallas': 'dense/pallas_impl.py',
        'warp': 'dense/warp_impl.py',
    },
    'binary_densemv': {
        'jax': 'dense/jax_impl.py',
        'numba': 'dense/numba_impl.py',
        'pallas': 'dense/pallas_impl.py',
        'warp': 'dense/warp_impl.py',
    },
    'binary_fcnmm': {
        'cpp': 'fixed_conn/cpp_impl.py',
        'cuda': 'fixed_conn/cuda_impl.py',
        'jax': 'fixed_conn/jax_impl.py',
        'numba': 'fixed_conn/numba_impl.py',
        'pallas': 'fixed_conn/pallas_impl.py',
        'warp': 'fixed_conn/warp_impl.py',
    },
    'binary_fcnmv': {
        'cpp': 'fixed_conn/cpp_impl.py',
        'cuda': 'fixed_conn/cuda_impl.py',
        'jax': 'fixed_conn/jax_impl.py',
        'numba': 'fixed_conn/numba_impl.py',
        'pallas': 'fixed_conn/pallas_impl.py',
        'warp': 'fixed_conn/warp_impl.py',
    },
    'binary_jitcmm': {
        'jax': 'jitc/reference.py',
        'numba': 'jitc/numba_impl.py',
        'warp': 'jitc/warp_impl.py',
    },
    'binary_jitcmv': {
        'jax': 'jitc/reference.py',
        'numba': 'jitc/numba_impl.py',
        'warp': 'jitc/warp_impl.py',
    },
    'csr2csc_on_post': {
        'jax': 'plasticity/jax_impl.py',
        'numba': 'plasticity/numba_impl.py',
        'pallas': 'plasticity/pallas_impl.py',
        'warp': 'plasticity/warp_impl.py',
    },
    'csr_delay_deliver': {
        'jax': 'delay/jax_impl.py',
        'numba': 'delay/numba_impl.py',
        'pallas': 'delay/pallas_impl.py',
        'warp': 'delay/warp_impl.py',
    },
    'csr_delay_deliver_layout': {
        'jax': 'delay/jax_impl.py',
        'numba': 'delay/numba_impl.py',
        'pallas': 'delay/pallas_impl.py',
        'warp': 'delay/warp_impl.py',
    },
    'csr_dt2t': {
        'jax': 'dt2t/reference.py',
        'numba': 'dt2t/numba_impl.py',
        'pallas': 'dt2t/pallas_impl.py',
        'warp': 'dt2t/warp_impl.py',
    },
    'csr_on_pre': {
        'jax': 'plasticity/jax_impl.py',
        'numba': 'plasticity/numba_impl.py',
        'pallas': 'plasticity/pallas_impl.py',
        'warp': 'plasticity/warp_impl.py',
    },
    'csr_sddmm': {
        'jax': 'dt2t/reference.py',
        'numba': 'dt2t/numba_impl.py',
        'pallas': 'dt2t/pallas_impl.py',
        'warp': 'dt2t/warp_impl.py',
    },
    'csr_slice_rows': {
        'jax': 'indexed/jax_impl.py',
        'numba': 'indexed/numba_impl.py',
        'pallas': 'indexed/pallas_impl.py',
        'warp': 'indexed/warp_impl.py',
    },
    'csrmm': {
        'cpp': 'csr/cpp_impl.py',
        'cuda': 'csr/cuda_impl.py',
        'jax': 'csr/jax_impl.py',
        'numba': 'csr/numba_impl.py',
        'pallas': 'csr/pallas_impl.py',
        'warp': 'csr/warp_impl.py',
    },
    'csrmv': {
        'cpp': 'csr/cpp_impl.py',
        'cuda': 'csr/cuda_impl.py',
        'jax': 'csr/jax_impl.py',
        'numba': 'csr/numba_impl.py',
        'pallas': 'csr/pallas_impl.py',
        'warp': 'csr/warp_impl.py',
    },
    'dense_on_post': {
        'jax': 'plasticity/jax_impl.py',
        'numba': 'plasticity/numba_impl.py',
        'pallas': 'plasticity/pallas_impl.py',
        'warp': 'plasticity/warp_impl.py',
    },
    'dense_on_pre': {
        'jax': 'plasticity/jax_impl.py',
        'numba': 'plasticity/numba_impl.py',
        'pallas': 'plasticity/pallas_impl.py',
        'warp': 'plasticity/warp_impl.py',
    },
    'fcn_on_pre': {
        'jax': 'plasticity/jax_impl.py',
        'numba': 'plasticity/numba_impl.py',
        'pallas': 'plasticity/pallas_impl.py',
        'warp': 'plasticity/warp_impl.py',
    },
    'fcnmm': {
        'cpp': 'fixed_conn/cpp_impl.py',
        'cuda': 'fixed_conn/cuda_impl.py',
        'jax': 'fixed_conn/jax_impl.py',
        'numba': 'fixed_conn/numba_impl.py',
        'pallas': 'fixed_conn/pallas_impl.py',
        'warp': 'fixed_conn/warp_impl.py',
    },
    'fcnmv': {
        'cpp': 'fixed_conn/cpp_impl.py',
        'cuda': 'fixed_conn/cuda_impl.py',
        'jax': 'fixed_conn/jax_impl.py',
        'numba': 'fixed_conn/numba_impl.py',
        'pallas': 'fixed_conn/pallas_impl.py',
        'warp': 'fixed_conn/warp_impl.py',
    },
    'jitcmm': {
        'jax': 'jitc/reference.py',
        'numba': 'jitc/numba_impl.py',
        'warp': 'jitc/warp_impl.py',
    },
    'jitcmv': {
        'jax': 'jitc/reference.py',
        'numba': 'jitc/numba_impl.py',
        'warp': 'jitc/warp_impl.py',
    },
}
