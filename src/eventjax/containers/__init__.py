"""The containers users multiply with ``@``, each in a module of its name, and what they share.

- events: :class:`EventArray` (``@`` with a dense weight matrix), :class:`GradedEvents`
  (events with values; products in :mod:`~eventjax.containers.graded`), and :class:`IndexedEvents`,
  :class:`BitPackedEvents` and :class:`CompactEvents`, the same events as an index list, packed bits
  or both; :mod:`~eventjax.containers.operands` tells the operands of ``@`` apart;
- matrices: :class:`CSR`, :class:`CSC`, :class:`COO` (a list of entries), :class:`FixedNumConn`
  (with :class:`FixedNumPerPre` and :class:`FixedNumPerPost`), :class:`DelayedCSR` (synaptic
  delays) and :class:`JITCMatrix` (generated just in time);
- :mod:`~eventjax.containers.base`, :mod:`~eventjax.containers.ops` and
  :mod:`~eventjax.containers.per_synapse`: the ``@`` routing and the weight operations every
  sparse container shares; :mod:`~eventjax.containers.indices`: index conversions;
- :mod:`~eventjax.containers.connectivity`: random builders.

A module inside this package imports its siblings by their module path, never
through this file, so the package has no import cycle.
"""

from eventjax.containers.bit_packed_events import BitPackedEvents
from eventjax.containers.compact_events import CompactEvents
from eventjax.containers.connectivity import random_csr, random_fixed_num_conn
from eventjax.containers.coo import COO
from eventjax.containers.csc import CSC
from eventjax.containers.csr import CSR
from eventjax.containers.delayed_csr import DelayedCSR
from eventjax.containers.event_array import EventArray
from eventjax.containers.fixed_num_conn import FixedNumConn
from eventjax.containers.fixed_num_per_post import FixedNumPerPost
from eventjax.containers.fixed_num_per_pre import FixedNumPerPre
from eventjax.containers.graded_events import GradedEvents
from eventjax.containers.indexed_events import IndexedEvents
from eventjax.containers.indices import coo2csr, coo_to_csc_index, csc_to_csr_index, csr_to_coo_index, csr_to_csc_index
from eventjax.containers.jitc_matrix import JITCMatrix

__all__ = ['BitPackedEvents', 'COO', 'CompactEvents', 'CSC', 'CSR', 'DelayedCSR', 'EventArray', 'FixedNumConn',
           'FixedNumPerPost', 'FixedNumPerPre', 'GradedEvents', 'IndexedEvents',
           'JITCMatrix', 'coo2csr', 'coo_to_csc_index', 'csc_to_csr_index', 'csr_to_coo_index', 'csr_to_csc_index',
           'random_csr', 'random_fixed_num_conn']
