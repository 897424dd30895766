"""Column-oriented containers: :class:`CSC` and the pre/post fixed-number matrices.

Each one stores the transpose of a row-oriented container and shows the
matrix itself, so it reuses every kernel: a ``CSC`` of shape ``(m, n)`` is
the ``.T`` view of a ``CSR`` of shape ``(n, m)`` over the same three
arrays, and ``FixedNumPerPost`` (``k`` presynaptic sources per postsynaptic
neuron) is the ``.T`` view of a ``FixedNumConn`` whose rows are the
postsynaptic neurons. ``.T`` returns the row-oriented container.
"""

from __future__ import annotations

import jax
import numpy as np

from eventjax.containers import CSR, FixedNumConn

__all__ = ['CSC', 'FixedNumPerPost', 'FixedNumPerPre', 'FixedPostNumConn', 'FixedPreNumConn']


def _pair(who: str, args) -> tuple:
    # brainevent spells these both ((data, indices), shape=...) and (data, indices, shape=...).
    if len(args) == 1 and isinstance(args[0], (tuple, list)) and len(args[0]) == 2:
        return tuple(args[0])
    if len(args) == 2:
        return tuple(args)
    raise TypeError(f'{who}: pass (data, indices) as one tuple or as two arguments, then shape=; '
                    f'got {len(args)} positional argument(s).')


@jax.tree_util.register_pytree_node_class
class CSC(CSR):
    """A sparse matrix in compressed sparse column form (a JAX pytree).

    ``indptr`` has ``n + 1`` entries (one per column, plus one) and
    ``indices`` holds row numbers. It multiplies with ``@`` like a
    :class:`~eventjax.CSR`; ``.T`` is the ``CSR`` of the transpose.

    Example:
        >>> import jax.numpy as jnp
        >>> import eventjax as ej
        >>> A = ej.CSC.fromdense(jnp.array([[0., 2.], [3., 0.]]))
        >>> A.indptr, A.indices
        (Array([0, 1, 2], dtype=int32), Array([1, 0], dtype=int32))
        >>> A @ jnp.array([1., 1.])
        Array([2., 3.], dtype=float32)
    """

    def __init__(self, args, *, shape, transposed: bool = False, validate: bool = True):
        m, n = (int(d) for d in shape)
        super().__init__(args, shape=(n, m), transposed=not transposed, validate=validate)

    def __repr__(self) -> str:
        view = ', transposed' if not self.transposed else ''
        return f'CSC(shape={self.shape}, nnz={np.shape(self.indices)[0]}, dtype={self.dtype}{view})'

    def tree_flatten(self):
        n, m = self.stored_shape
        return (self.data, self.indices, self.indptr), ((m, n), not self.transposed)

    @classmethod
    def fromdense(cls, dense, *, index_dtype=np.int32) -> CSC:
        """The CSC form of a concrete dense matrix (its nonzero entries, column by column)."""
        dense = np.asarray(dense)
        if dense.ndim != 2:
            raise ValueError(f'CSC.fromdense(): dense must be a 2-D matrix, got shape {dense.shape}.')
        by_col = CSR.fromdense(dense.T, index_dtype=index_dtype)
        return cls((by_col.data, by_col.indices, by_col.indptr), shape=dense.shape)


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
        super().__init__(_pair('FixedNumPerPre()', args), shape=shape, transposed=transposed, validate=validate)


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
        super().__init__(_pair('FixedNumPerPost()', args), shape=(num_post, num_pre), transposed=not transposed,
                         validate=validate)

    def __repr__(self) -> str:
        view = ', transposed' if not self.transposed else ''
        return f'FixedNumPerPost(shape={self.shape}, k={self.num_conn}, dtype={self.dtype}{view})'

    def tree_flatten(self):
        num_post, num_pre = self.stored_shape
        return (self.weights, self.indices), ((num_pre, num_post), not self.transposed)

    @classmethod
    def tree_unflatten(cls, aux, children):
        shape, transposed = aux
        return cls(tuple(children), shape=shape, transposed=transposed, validate=False)


# brainevent's names before 0.1.
FixedPostNumConn = FixedNumPerPre
FixedPreNumConn = FixedNumPerPost
