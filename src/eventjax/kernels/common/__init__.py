"""Pieces every kernel family shares: argument checks, event semantics, rules.

- :mod:`.compaction`: the event rows gathered into a few static capacities,
  for the event-driven ``jax`` kernels.
- :mod:`.checks`: trace-time validation with errors naming who/what/expected/got.
- :mod:`.events`: the event indicator (``True`` or ``> 0``), homogeneous weights.
- :mod:`.operator`: :class:`Declaration`, the one declaration of a standard
  primitive (its primitive, kernels per backend and rules), and its forms
  :class:`Operator` (``weights x events``) and :class:`~.update.Update`
  (in-place updates); :class:`PreparedKernel`, the primitive a declaration holds.
- :mod:`.rules`: :func:`register_rules` (JVP, transpose and batching keyed
  by operand name), called by :class:`Operator`.
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
from eventjax.kernels.common.operator import Declaration, Operator, PreparedKernel
from eventjax.kernels.common.rules import register_rules

__all__ = [
    'Declaration',
    'Operator',
    'PreparedKernel',
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
]
