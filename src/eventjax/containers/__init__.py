"""The containers users multiply with ``@``, one module each, and what they share.

- :mod:`~eventjax.containers.events`: :class:`EventArray` (and ``@`` with a dense weight matrix);
- :mod:`~eventjax.containers.csr`, :mod:`~eventjax.containers.csc`: :class:`CSR`, :class:`CSC`;
- :mod:`~eventjax.containers.fixed_conn`: :class:`FixedNumConn` and its pre/post-named forms;
- :mod:`~eventjax.containers.jitc`: :class:`JITCMatrix`, generated just in time;
- :mod:`~eventjax.containers.base` and :mod:`~eventjax.containers.ops`: the ``@`` routing and
  the weight operations every sparse container shares;
- :mod:`~eventjax.containers.connectivity`: random builders;
  :mod:`~eventjax.containers.keyword_aliases`: operators under brainevent's keyword names.

A module inside this package imports its siblings by their module path, never
through this file, so the package has no import cycle.
"""

from eventjax.containers.connectivity import random_csr, random_fixed_num_conn
from eventjax.containers.csc import CSC
from eventjax.containers.csr import CSR
from eventjax.containers.events import EventArray
from eventjax.containers.fixed_conn import (
           FixedNumConn,
           FixedNumPerPost,
           FixedNumPerPre,
           FixedPostNumConn,
           FixedPreNumConn,
)
from eventjax.containers.jitc import JITCMatrix
from eventjax.containers.ops import COO

__all__ = ['COO', 'CSC', 'CSR', 'EventArray', 'FixedNumConn', 'FixedNumPerPost', 'FixedNumPerPre',
           'FixedPostNumConn', 'FixedPreNumConn', 'JITCMatrix', 'random_csr', 'random_fixed_num_conn']
