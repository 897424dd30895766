""":class:`FixedNumPerPre`: brainevent's name for a :class:`~eventjax.FixedNumConn`, rows presynaptic."""

from __future__ import annotations

import jax

from eventjax.containers.fixed_num_conn import FixedNumConn, pair_args

__all__ = ['FixedNumPerPre']


@jax.tree_util.register_pytree_node_class
class FixedNumPerPre(FixedNumConn):
    """``k`` postsynaptic targets per presynaptic neuron: brainevent's name for :class:`~eventjax.FixedNumConn`.

    ``indices`` is ``(num_pre, k)`` and ``shape`` is ``(num_pre, num_post)``;
    ``data`` and ``indices`` may come as one tuple or as two arguments.

    Example:
        >>> import jax.numpy as jnp
        >>> import eventjax as ej
        >>> ej.FixedNumPerPre(jnp.ones((2, 1)), jnp.array([[2], [0]]), shape=(2, 3)).todense()
        Array([[0., 0., 1.],
               [1., 0., 0.]], dtype=float32)
    """

    def __init__(self, *args, shape, transposed: bool = False, validate: bool = True):
        super().__init__(pair_args('FixedNumPerPre()', args), shape=shape, transposed=transposed, validate=validate)
