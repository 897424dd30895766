"""brainevent's spellings that eventjax's top level still answers to, until the next release.

Each one works with a ``DeprecationWarning`` that names eventjax's own way
to write it; :mod:`eventjax.compat.brainevent` serves all of them without a
warning, with brainevent's signatures. This module imports nothing, so
``import eventjax`` can consult it for free.
"""

from __future__ import annotations

__all__ = ['RENAMED', 'REPLACED', 'message']

# brainevent's name -> eventjax's name for the same object.
RENAMED = {
    'BinaryArray': 'EventArray',
    'WeightedArray': 'GradedEvents',
    'BitPackedBinary': 'BitPackedEvents',
    'CompactBinary': 'CompactEvents',
    'FixedPostNumConn': 'FixedNumPerPre',
    'FixedPreNumConn': 'FixedNumPerPost',
    'update_csr_on_binary_pre': 'csr_on_pre',
    'update_csr_on_binary_post': 'csr2csc_on_post',
    'update_dense_on_binary_pre': 'dense_on_pre',
    'update_dense_on_binary_post': 'dense_on_post',
    'update_fixed_post_conn_on_binary_pre': 'fcn_on_pre',
}

# brainevent's functions with no eventjax function of their signature (served from
# eventjax.compat.legacy) -> how eventjax writes the same.
REPLACED = {
    'jitsmv_dt2t': 'eventjax.JITCMatrix(weight, prob=prob, seed=seed, shape=shape).dt2t(y)',
    'jitumv_dt2t': "eventjax.JITCMatrix((w_low, w_high), prob=prob, seed=seed, shape=shape, law='uniform').dt2t(y)",
    'jitnmv_dt2t': "eventjax.JITCMatrix((w_loc, w_scale), prob=prob, seed=seed, shape=shape, law='normal').dt2t(y)",
    'update_fixed_pre_conn_on_binary_post': 'eventjax.fcn_on_pre(weight, indices, post_spike, pre_trace, w_min, '
                                            'w_max, shape=(n_post, n_pre)), the roles swapped',
}


def message(name: str) -> str:
    """The deprecation warning for the top-level ``eventjax.<name>``, one of :data:`RENAMED` or :data:`REPLACED`.

    Example:
        >>> print(message('FixedPostNumConn').split('; ')[1].split(' (')[0])
        use eventjax.FixedNumPerPre
    """
    new = f'eventjax.{RENAMED[name]}' if name in RENAMED else REPLACED[name]
    return (f"eventjax.{name} is brainevent's spelling and leaves the top level in the next release; use {new} "
            f"(or eventjax.compat.brainevent.{name}, with brainevent's signature and rules).")
