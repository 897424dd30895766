"""Delayed delivery: the synapses of each event land ``delay`` steps later in a ring buffer.

- :func:`csr_delay_deliver`: the operator (CSR structure, one delay per synapse or one shared);
- :func:`fcn_delay_deliver`: the same over ``k`` connections per row;
- :class:`CSRDelayLayout`, :func:`csr_delay_deliver_layout`: a structure checked once and sorted by delay.
"""

from eventjax.kernels.delay.csr_delay_deliver import csr_delay_deliver
from eventjax.kernels.delay.fcn_delay_deliver import fcn_delay_deliver
from eventjax.kernels.delay.layout import CSRDelayLayout, csr_delay_deliver_layout

__all__ = ['CSRDelayLayout', 'csr_delay_deliver', 'csr_delay_deliver_layout', 'fcn_delay_deliver']
