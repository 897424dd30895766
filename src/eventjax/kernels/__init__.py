"""The standard event-driven kernels, one folder per family.

Importing the package registers the families' pallas kernels (gpu, and tpu
where there is one; see :mod:`.pallas_registration`). They stay opt-in:
pallas is never a default backend.
"""

from eventjax.kernels.pallas_registration import register_pallas_kernels

register_pallas_kernels()
