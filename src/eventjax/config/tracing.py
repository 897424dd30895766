"""Whether the calling thread is tracing: the configuration layer's one use of JAX internals.

JAX has no public test for "a bind here is staged, not evaluated"; its
internal ``trace_state_clean`` answers it for every kind of trace (``jit``,
``vmap``, ``grad``, control flow). Kept here, tiny, so a JAX upgrade that
moves it has one place to fix (the primitive layer keeps its own in
:mod:`eventjax.primitive.compat`).
"""

from jax._src.core import trace_state_clean

__all__ = ['top_level']

# top_level() is True when the calling thread is not inside any JAX trace. It
# is called on every eager bind, so it is JAX's function itself, not a wrapper.
top_level = trace_state_clean
