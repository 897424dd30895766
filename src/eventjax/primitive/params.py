"""The bind parameters a call adds to the caller's own, and how to split them off.

A call binds its primitive with the caller's static parameters plus four
bind-only ones:

- ``outs``: a tuple of ``jax.ShapeDtypeStruct``, one per result;
- ``backend``: the per-call request (or None), kept so rules can forward it;
- ``kernels``: the :class:`~eventjax.primitive.resolution.Resolved` choice;
- ``config_version``: the snapshot's version. No rule reads it: it is there
  so that JAX's eager dispatch cache, keyed by the bind parameters, misses
  when the configuration changes (jit caches miss through the user context).

Rules get all of them in ``**params``; :func:`split_params` gives back the
per-call backend and the caller's static parameters, ready to call again.
"""

from __future__ import annotations

from typing import Any

__all__ = ['BIND_ONLY', 'split_params']

BIND_ONLY = frozenset({'outs', 'backend', 'kernels', 'config_version'})


def split_params(params: dict[str, Any]) -> tuple[str | None, dict[str, Any]]:
    """``(backend, static)``: the per-call backend and the caller's own static parameters.

    Example:
        >>> split_params({'outs': (), 'backend': 'jax', 'kernels': None, 'config_version': 3, 'n': 2})
        ('jax', {'n': 2})
    """
    return params.get('backend'), {k: v for k, v in params.items() if k not in BIND_ONLY}
