"""Index-list events: spikes as the list of neurons that fired, and the CSR products that read it.

``compaction.py`` turns a spike vector into ``(ids, count)`` with a static
capacity, ``packing.py`` packs it 32 neurons per word;
``binary_csrmv_indexed.py`` is the product over an index list (with
brainevent's fused weight permutation), ``binary_csrmm_indexed.py`` the
same for an event matrix, ``binary_csrmv_packed.py`` and
``binary_fcnmv_packed.py`` the CSR and FCN products that read packed words
(one primitive; ``packed_reference.py`` their oracle),
``csr_slice_rows.py`` chosen rows as a dense block; ``arguments.py`` the checks;
``reference.py`` the readable oracle; ``jax_impl.py``, ``numba_impl.py``,
``warp_impl.py`` and ``pallas_impl.py`` the backends.
"""

from eventjax.kernels.indexed.binary_csrmm_indexed import binary_csrmm_indexed
from eventjax.kernels.indexed.binary_csrmv_indexed import binary_csrmv_indexed
from eventjax.kernels.indexed.binary_csrmv_packed import binary_csrmv_packed
from eventjax.kernels.indexed.binary_fcnmv_packed import binary_fcnmv_packed
from eventjax.kernels.indexed.compaction import compact_events, expand_events
from eventjax.kernels.indexed.csr_slice_rows import csr_slice_rows
from eventjax.kernels.indexed.packing import bitpack, bitunpack

__all__ = ['binary_csrmm_indexed', 'binary_csrmv_indexed', 'binary_csrmv_packed', 'binary_fcnmv_packed', 'bitpack',
           'bitunpack', 'compact_events', 'csr_slice_rows', 'expand_events']
