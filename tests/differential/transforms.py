"""Calling an operator on one backend under eager, jit, vmap, grad and jit(grad).

The jitted callables are module-level with the operator, backend and
statics as static arguments, so XLA's cache is shared by every draw of the
same shapes and dtypes. Structure passed to the jitted forms is traced (not
validated); the eager forms keep it concrete (validated on every call).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp

import eventjax as ej
from tests.differential.strategies import OPERATORS

STATIC = ('name', 'backend', 'statics')


def platform() -> str:
    """JAX's default platform as eventjax names it (``'cpu'``, ``'gpu'``, ``'tpu'``)."""
    name = jax.default_backend()
    return 'gpu' if name in ('gpu', 'cuda', 'rocm') else name


def backends(name: str) -> tuple[str, ...]:
    """The backends operator ``name`` has on the default platform that can run here.

    Example:
        >>> backends('csrmv')  # on a CPU with numba and warp installed
        ('jax', 'numba', 'warp')
    """
    where = platform()
    have = ej.primitives()[name].get(where, ())
    status = ej.backends_available()
    return tuple(b for b in have if b in status and status[b][where].available)


def call(args, *, name, backend, statics):
    """``ej.<name>(*args, **statics, backend=backend)``; ``statics`` is a tuple of pairs.

    A JITC law with two parameters takes them as a pair; the problem keeps
    them as one array (so they are one leaf to differentiate).
    """
    statics = dict(statics)
    if statics.get('law', 'homo') != 'homo':
        args = ((args[0][0], args[0][1]), *args[1:])
    return getattr(ej, name)(*args, **statics, backend=backend)


def vmapped(structure, xs, *, name, backend, statics):
    """The operator mapped over the leading axis of ``xs`` (structure shared)."""
    return jax.vmap(lambda x: call((*structure, x), name=name, backend=backend, statics=statics))(xs)


def grad(args, ct, *, name, backend, statics, wrt):
    """Gradients of ``sum(op(*args) * ct)`` with respect to ``args[i]`` for ``i`` in ``wrt``."""
    def loss(*diff):
        full = list(args)
        for i, d in zip(wrt, diff, strict=True):
            full[i] = d
        return jnp.sum(call(full, name=name, backend=backend, statics=statics) * ct)

    return jax.grad(loss, argnums=tuple(range(len(wrt))))(*(args[i] for i in wrt))


jit_call = jax.jit(call, static_argnames=STATIC)
jit_vmapped = jax.jit(vmapped, static_argnames=STATIC)
jit_grad = jax.jit(grad, static_argnames=(*STATIC, 'wrt'))


@functools.cache
def standard_operators() -> tuple[str, ...]:
    """The standard operators this eventjax exports and registers."""
    registered = ej.primitives()
    return tuple(n for n in OPERATORS if hasattr(ej, n) and n in registered)
