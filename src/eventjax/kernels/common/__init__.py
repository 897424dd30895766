"""Pieces every kernel family shares: argument checks, event semantics, rules.

- :mod:`.checks`: trace-time validation with errors naming who/what/expected/got.
- :mod:`.events`: the event indicator (``True`` or ``> 0``), homogeneous weights.
- :mod:`.rules`: :class:`LinearOp` and :func:`register_rules` (JVP, transpose
  and batching keyed by operand name).
"""

from eventjax.kernels.common.checks import (
    check_events,
    check_float_operand,
    check_index_array,
    check_length,
    check_rank,
    check_shape,
    check_weights,
    dtype_of,
)
from eventjax.kernels.common.events import accumulation_dtype, event_indicator, is_homogeneous
from eventjax.kernels.common.rules import LinearOp, register_rules, split_params

__all__ = [
    'LinearOp',
    'accumulation_dtype',
    'check_events',
    'check_float_operand',
    'check_index_array',
    'check_length',
    'check_rank',
    'check_shape',
    'check_weights',
    'dtype_of',
    'event_indicator',
    'is_homogeneous',
    'register_rules',
    'split_params',
]
