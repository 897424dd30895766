"""Delayed delivery: the synapses of each event land ``delay`` steps later in a ring buffer."""

from eventjax.kernels.delay.csr_delay_deliver import csr_delay_deliver

__all__ = ['csr_delay_deliver']
