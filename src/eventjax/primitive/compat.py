"""The only place eventjax touches JAX internals (``jax._src``).

Kept tiny so that a JAX upgrade that moves one of these has one place to fix.
"""

from jax._src.dispatch import apply_primitive

__all__ = ["apply_primitive", "zero_tangent_like"]


def zero_tangent_like(value):
    """A symbolic zero tangent for ``value`` (JAX has no public constructor)."""
    from jax._src.ad_util import p2tz

    return p2tz(value)
