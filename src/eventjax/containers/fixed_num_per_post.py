""":class:`FixedNumPerPost`: ``k`` sources per postsynaptic neuron, a :class:`~eventjax.FixedNumConn`'s ``.T``.

Its rows are the postsynaptic neurons, so it reuses every fixed-number kernel.
"""

from __future__ import annotations

import jax

from eventjax.containers.fixed_num_conn import FixedNumConn, pair_args

__all__ = ['FixedNumPerPost']


@jax.tree_util.register_pytree_node_class
class FixedNumPerPost(FixedNumConn):
    """``k`` presynaptic sources per postsynaptic neuron (a JAX pytree).

    ``indices`` is ``(num_post, k)`` and ``shape`` is ``(num_pre, num_post)``:
    the matrix has ``W[indices[j, c], j] = data[j, c]``. It is the ``.T``
    view of a :class:`~eventjax.FixedNumConn` of shape ``(num_post,
    num_pre)``, so ``events @ W`` gathers ``k`` inputs per target.

    Example:
        >>> import jax.numpy as jnp
        >>> import eventjax as ej
        >>> W = ej.FixedNumPerPost(jnp.ones((3, 1)), jnp.array([[0], [1], [0]]), shape=(2, 3))
        >>> ej.EventArray(jnp.array([True, False])) @ W
        Array([1., 0., 1.], dtype=float32)
    """

    def __init__(self, *args, shape, transposed: bool = False, validate: bool = True):
        num_pre, num_post = (int(d) for d in shape)
        super().__init__(pair_args('FixedNumPerPost()', args), shape=(num_post, num_pre), transposed=not transposed,
                         validate=validate)

    _as_transpose = True

    def _summary(self) -> tuple[str, str]:
        return 'FixedNumPerPost', f'k={self.num_conn}'
