"""Whether the calling thread is tracing, through JAX's public ``jax.extend`` API.

A bind is staged rather than evaluated exactly when the current trace is not
JAX's evaluation trace, a process-wide singleton; ``find_top_trace`` returns
the current trace for every kind of transformation (``jit``, ``vmap``,
``grad``, control flow). The check runs on every eager bind, so it is one
call and one identity test.
"""

from __future__ import annotations

import threading

from jax.extend.core import find_top_trace

__all__ = ['top_level']


def _eval_trace():
    # A thread that has just started traces nothing, whatever the importing thread does.
    found = []
    thread = threading.Thread(target=lambda: found.append(find_top_trace(())))
    thread.start()
    thread.join()
    return found[0]


_EVAL_TRACE = _eval_trace()


def top_level() -> bool:
    """True when the calling thread is not inside any JAX trace.

    Example:
        >>> import jax
        >>> top_level(), jax.jit(lambda x: x & top_level())(True)
        (True, Array(False, dtype=bool))
    """
    return find_top_trace(()) is _EVAL_TRACE
