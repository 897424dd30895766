"""brainevent's ``*_p`` primitive objects: the eventjax primitive behind each brainevent operator.

A user reaches them to ask ``available_backends``, to ``def_kernel`` or
``set_default`` a backend, or to bind. eventjax has one primitive where
brainevent has one per weight law (the law is a parameter: ``binary_jitsmv_p``,
``binary_jitumv_p`` and ``binary_jitnmv_p`` are all ``binary_jitcmv``'s), and
their operands and parameters are eventjax's, not brainevent's.
"""

from __future__ import annotations

from eventjax.primitive.tags import get_registry

__all__ = ['PRIMITIVES', 'primitive']

# brainevent's primitive name -> the eventjax operator whose primitive it is.
PRIMITIVES = {
    'binary_csrmv_p': 'binary_csrmv', 'binary_csrmm_p': 'binary_csrmm',
    'binary_csrmv_indexed_p': 'binary_csrmv_indexed', 'binary_csrmm_indexed_p': 'binary_csrmm_indexed',
    'csrmv_p': 'csrmv', 'csrmm_p': 'csrmm', 'csrmv_dt2t_p': 'csr_dt2t', 'csrmm_dt2t_p': 'csr_dt2t',
    'update_csr_on_binary_pre_p': 'csr_on_pre', 'update_csr_on_binary_post_p': 'csr2csc_on_post',
    'csr_slice_rows_p': 'csr_slice_rows', 'csr_delay_deliver_p': 'csr_delay_deliver',
    'csr_delay_deliver_layout_p': 'csr_delay_deliver_layout',
    'binary_densemv_p': 'binary_densemv', 'binary_densemm_p': 'binary_densemm',
    'update_dense_on_binary_pre_p': 'dense_on_pre', 'update_dense_on_binary_post_p': 'dense_on_post',
    'binary_fcnmv_p': 'binary_fcnmv', 'binary_fcnmm_p': 'binary_fcnmm', 'fcn_plasticity_row_p': 'fcn_on_pre',
    # The generated matrices: one primitive per product, the law a parameter; the dense
    # forms (jits, jitu, jitn) are the matrix product with the identity.
    'binary_jitsmv_p': 'binary_jitcmv', 'binary_jitumv_p': 'binary_jitcmv', 'binary_jitnmv_p': 'binary_jitcmv',
    'binary_jitsmm_p': 'binary_jitcmm', 'binary_jitumm_p': 'binary_jitcmm', 'binary_jitnmm_p': 'binary_jitcmm',
    'jitsmv_p': 'jitcmv', 'jitumv_p': 'jitcmv', 'jitnmv_p': 'jitcmv',
    'jitsmm_p': 'jitcmm', 'jitumm_p': 'jitcmm', 'jitnmm_p': 'jitcmm', 'jits_p': 'jitcmm', 'jitu_p': 'jitcmm',
    'jitn_p': 'jitcmm',
}


def primitive(name: str):
    """The eventjax primitive (an :class:`eventjax.XLACustomKernel`) brainevent calls ``name``.

    Example:
        >>> import eventjax  # registers the operators
        >>> 'jax' in primitive('binary_csrmv_p').available_backends('cpu')
        True
    """
    return get_registry()[PRIMITIVES[name]]
