""":class:`DelayedCSR`: a CSR matrix with one delay per synapse, delivering into a ring buffer.

``W = CSR(...).with_delays(delays)`` (or ``FixedNumConn.with_delays``);
then a model reads ``ring = W.deliver(ring, spikes, t)``. The container holds
the structure sorted by delay within each row, with each synapse's delay and
column packed into one offset (:class:`~eventjax.CSRDelayLayout`), checked
once when built.
"""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp

from eventjax.kernels.common.narrowing import narrow_step
from eventjax.kernels.common.units import attach, mantissa, split
from eventjax.kernels.delay import CSRDelayLayout, csr_delay_deliver_layout

__all__ = ['DelayedCSR']


# A pytree of one leaf, its layout (itself a pytree): declared, so jax flattens and rebuilds it.
@functools.partial(jax.tree_util.register_dataclass, data_fields=['layout'], meta_fields=[])
@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class DelayedCSR:
    """A sparse matrix with integer delays (in steps), rows presynaptic (a JAX pytree).

    Each step: ``current = W.read(ring, t)`` is this step's input; then
    ``ring = W.deliver(ring, spikes, t)`` adds every synapse of the spiking
    rows ``delay`` steps ahead (never into the row just read: delays are at
    least 1); then clear the row read (``ring = ring.at[t % L].set(0)``).
    In that order the read comes before the delivery that updates the ring
    in place, so under ``jit`` with donation or in a ``lax.scan`` carry the
    ring is never copied. Size the ring with :meth:`init_ring` (``max delay
    + 1`` steps, or more).

    Example:
        >>> import jax.numpy as jnp
        >>> import numpy as np
        >>> import eventjax as ej
        >>> W = ej.CSR.fromdense(np.array([[0., 2.], [3., 0.]], np.float32)).with_delays(np.array([1, 2]))
        >>> ring = W.deliver(W.init_ring(), jnp.array([True, True]), 0)
        >>> ring
        Array([[0., 0.],
               [0., 2.],
               [3., 0.]], dtype=float32)
        >>> float(W.read(ring, 1)[1])
        2.0
    """

    layout: CSRDelayLayout

    @classmethod
    def from_csr_arrays(cls, data, indices, indptr, delays, *, shape) -> DelayedCSR:
        """Build from CSR arrays and one delay per stored entry (or one shared delay)."""
        return cls(CSRDelayLayout.build(data, indices, indptr, delays, shape=shape))

    shape = property(lambda self: self.layout.shape)
    data = property(lambda self: self.layout.data)
    indices = property(lambda self: self.layout.indices)
    indptr = property(lambda self: self.layout.indptr)
    delays = property(lambda self: self.layout.delays)
    dtype = property(lambda self: jnp.result_type(mantissa(self.layout.data)))

    @property
    def ring_length(self) -> int | None:
        """``max(delays) + 1``: the fewest steps a ring must hold (None when built from traced delays)."""
        return self.layout.ring_length

    def __repr__(self) -> str:
        return f'DelayedCSR(shape={self.shape}, ring_length={self.ring_length}, dtype={self.dtype})'

    def init_ring(self, length: int | None = None, dtype=None):
        """A zero ring of ``length`` steps (default :attr:`ring_length`) by the columns, in the weights' unit."""
        length = self.ring_length if length is None else int(length)
        if length is None:
            raise ValueError('DelayedCSR.init_ring(): the delays were traced; pass the ring length.')
        return attach(jnp.zeros((length, self.shape[1]), self.dtype if dtype is None else dtype),
                      split(self.layout.data)[1])

    @staticmethod
    def read(ring, t):
        """The input due at step ``t``: ``ring[t % L]``."""
        length = ring.shape[0]
        step = narrow_step(t, length)  # a step past 2**31 (a Python int, an int64) keeps its slot, as in deliver
        if step is None or step.size != 1:
            raise TypeError(f'DelayedCSR.read(): t must be one integer (the current step), got {t!r}.')
        return ring[jnp.mod(step.reshape(()), length)]

    def deliver(self, ring, events, t, *, weighted=None, backend=None):
        """Add the synapses of the rows with events into ``ring``, ``delay`` steps after ``t``.

        See :func:`~eventjax.csr_delay_deliver` for the semantics of
        ``events``, ``weighted`` and ``backend``.
        """
        return csr_delay_deliver_layout(ring, events, self.layout, t, weighted=weighted, backend=backend)
