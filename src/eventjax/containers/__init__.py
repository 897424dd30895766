"""The containers users multiply with ``@``, one module each, and what they share.

- :mod:`~eventjax.containers.events`: :class:`EventArray` (and ``@`` with a dense weight matrix),
  :class:`GradedEvents` (events with values; products in :mod:`~eventjax.containers.graded`), and
  :class:`IndexedEvents`, :class:`BitPackedEvents` and :class:`CompactEvents`, the same events as an index list,
  packed bits or both;
- :mod:`~eventjax.containers.csr`, :mod:`~eventjax.containers.csc`: :class:`CSR` (and :class:`COO`,
  its list of entries), :class:`CSC`; :mod:`~eventjax.containers.indices`: index conversions;
- :mod:`~eventjax.containers.fixed_conn`: :class:`FixedNumConn` and its pre/post-named forms;
- :mod:`~eventjax.containers.delayed`: :class:`DelayedCSR`, a matrix with synaptic delays;
- :mod:`~eventjax.containers.jitc`: :class:`JITCMatrix`, generated just in time;
- :mod:`~eventjax.containers.base` and :mod:`~eventjax.containers.ops`: the ``@`` routing and
  the weight operations every sparse container shares;
- :mod:`~eventjax.containers.connectivity`: random builders.

A module inside this package imports its siblings by their module path, never
through this file, so the package has no import cycle.
"""

from eventjax.containers.connectivity import random_csr, random_fixed_num_conn
from eventjax.containers.csc import CSC
from eventjax.containers.csr import COO, CSR
from eventjax.containers.delayed import DelayedCSR
from eventjax.containers.events import BitPackedEvents, CompactEvents, EventArray, IndexedEvents
from eventjax.containers.fixed_conn import (
           FixedNumConn,
           FixedNumPerPost,
           FixedNumPerPre,
)
from eventjax.containers.graded_events import GradedEvents
from eventjax.containers.indices import coo2csr, coo_to_csc_index, csc_to_csr_index, csr_to_coo_index, csr_to_csc_index
from eventjax.containers.jitc import JITCMatrix

__all__ = ['BitPackedEvents', 'COO', 'CompactEvents', 'CSC', 'CSR', 'DelayedCSR', 'EventArray', 'FixedNumConn',
           'FixedNumPerPost', 'FixedNumPerPre', 'GradedEvents', 'IndexedEvents',
           'JITCMatrix', 'coo2csr', 'coo_to_csc_index', 'csc_to_csr_index', 'csr_to_coo_index', 'csr_to_csc_index',
           'random_csr', 'random_fixed_num_conn']
