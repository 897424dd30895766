"""Per-synapse products: one value per stored connection.

"dt2t" names the :math:`D^t` term of an online (D-RTRL) eligibility-trace
update, which these products compute: a neuron-level factor ``y`` spread
from the neurons to the synapses of their rows (or columns), one value per
synapse.

``csrmv_dt2t`` / ``csrmm_dt2t`` (and the CSC, FCN and just-in-time forms)
scale each entry's value by the neuron vector at its row or column; they
all run on the one ``csr_dt2t`` primitive (:mod:`.csr_dt2t`, through
its ``per_entry``); each operator has a module of its name.
``csr_sddmm`` samples a dense-dense product at the stored entries. Both
primitives are bilinear; :mod:`.rules` holds their JVP, transpose and
batching rules, ``reference.py`` the ``jax`` kernels and the cotangents.
"""

from eventjax.kernels.dt2t.cscmm_dt2t import cscmm_dt2t
from eventjax.kernels.dt2t.cscmv_dt2t import cscmv_dt2t
from eventjax.kernels.dt2t.csr_sddmm import csr_sddmm
from eventjax.kernels.dt2t.csrmm_dt2t import csrmm_dt2t
from eventjax.kernels.dt2t.csrmv_dt2t import csrmv_dt2t
from eventjax.kernels.dt2t.fcnmm_dt2t import fcnmm_dt2t
from eventjax.kernels.dt2t.fcnmv_dt2t import fcnmv_dt2t

__all__ = ['cscmm_dt2t', 'cscmv_dt2t', 'csr_sddmm', 'csrmm_dt2t', 'csrmv_dt2t', 'fcnmm_dt2t', 'fcnmv_dt2t']
