"""Plasticity: weights updated in place on pre- or postsynaptic events (dense, CSR, FCN)."""

from eventjax.kernels.plasticity.apply import (
    csr_apply_on_post,
    csr_apply_on_pre,
    dense_apply_on_post,
    dense_apply_on_pre,
    fcn_apply_on_pre,
)
from eventjax.kernels.plasticity.column_view import csr_column_view
from eventjax.kernels.plasticity.csr2csc_on_post import csr2csc_on_post
from eventjax.kernels.plasticity.csr_on_pre import csr_on_pre
from eventjax.kernels.plasticity.dense_on_post import dense_on_post
from eventjax.kernels.plasticity.dense_on_pre import dense_on_pre
from eventjax.kernels.plasticity.fcn_on_pre import fcn_on_pre

__all__ = ['csr2csc_on_post', 'csr_apply_on_post', 'csr_apply_on_pre', 'csr_column_view', 'csr_on_pre',
           'dense_apply_on_post', 'dense_apply_on_pre', 'dense_on_post', 'dense_on_pre', 'fcn_apply_on_pre',
           'fcn_on_pre']
