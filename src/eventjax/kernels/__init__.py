"""The standard event-driven kernels, one folder per family.

Each operator module declares its operator with
:class:`~eventjax.kernels.common.operator.Operator`, which registers the
family's ``jax``, ``numba``, ``warp`` and ``pallas`` kernels; pallas stays
opt-in (never a default backend).
"""
