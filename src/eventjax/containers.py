"""Containers users multiply with ``@``: :class:`CSR`, :class:`FixedNumConn` and :class:`EventArray`.

``@`` routes to the standard operators:

- ``CSR @ EventArray`` / ``EventArray @ CSR``: ``binary_csrmv`` (``transpose``
  False / True), ``binary_csrmm`` for 2-D events;
- ``CSR @ array`` / ``array @ CSR``: ``csrmv`` / ``csrmm``;
- ``FixedNumConn`` the same with the ``fcn`` operators (``EventArray @
  FixedNumConn`` is the event-driven scatter ``binary_fcnmv(transpose=True)``);
- ``EventArray @ weights`` / ``weights @ EventArray`` with a dense weight
  matrix: ``binary_densemv`` / ``binary_densemm``.

Concrete structure is checked once, when a container is built (``CSR(...,
validate=False)`` skips it for trusted structure); its products then skip the
per-call check. Containers carry no backend: ``set_backend`` and ``config.override`` apply to
``@``; call the functions for a per-call ``backend=``. A sparse container
handles events in its own ``__matmul__``/``__rmatmul__``: ``EventArray``
defers to any operand that is not a plain array, so a new container type
(such as a fixed-connection matrix) plugs in without touching this class.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from eventjax.container_ops import WeightOps, WeightsAsData
from eventjax.kernels.common.checks import is_concrete, validate_csr_structure, validate_fcn_indices
from eventjax.kernels.csr import binary_csrmm, binary_csrmv, csrmm, csrmv
from eventjax.kernels.csr.reference import entry_rows
from eventjax.kernels.dense import binary_densemm, binary_densemv
from eventjax.kernels.fixed_conn import binary_fcnmm, binary_fcnmv, fcnmm, fcnmv

__all__ = ['CSR', 'EventArray', 'FixedNumConn']


def _is_array(x) -> bool:
    return isinstance(x, (jax.Array, np.ndarray)) or (hasattr(x, 'shape') and hasattr(x, 'dtype')
                                                       and not isinstance(x, (EventArray, _SparseMatrix)))


@jax.tree_util.register_pytree_node_class
class EventArray:
    """A bool or numeric array marked as events (``True`` or ``> 0``).

    Example:
        >>> import jax.numpy as jnp
        >>> import eventjax as ej
        >>> s = ej.EventArray(jnp.array([True, False]))
        >>> s @ jnp.array([[1., 2.], [3., 4.]])
        Array([1., 2.], dtype=float32)
    """

    def __init__(self, value):
        self.value = value if isinstance(value, jax.Array) else jnp.asarray(value)

    shape = property(lambda self: self.value.shape)
    dtype = property(lambda self: self.value.dtype)
    ndim = property(lambda self: self.value.ndim)

    def __repr__(self) -> str:
        return f'EventArray({self.value!r})'

    def tree_flatten(self):
        return (self.value,), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        obj = object.__new__(cls)
        obj.value = children[0]
        return obj

    def __matmul__(self, other):
        if not _is_array(other):
            return NotImplemented
        # s @ W == W.T @ s; for 2-D events (k, m) @ W (m, n) == (W.T @ S.T).T.
        if self.ndim == 1:
            return binary_densemv(other, self.value, transpose=True)
        return binary_densemm(other, self.value.T, transpose=True).T

    def __rmatmul__(self, other):
        if not _is_array(other):
            return NotImplemented
        if self.ndim == 1:
            return binary_densemv(other, self.value, transpose=False)
        return binary_densemm(other, self.value, transpose=False)


class _SparseMatrix(WeightOps):
    """What every sparse container shares: a lazy ``.T`` and the ``@`` routing.

    A subclass sets ``_ops = (mv, mm, binary_mv, binary_mm)`` and
    ``_operands()`` (the arrays before ``x``); ``stored_shape`` and
    ``transposed`` describe the stored matrix and the view.
    """

    _ops: tuple = ()
    # NumPy arrays then defer ``ndarray @ container`` to ``__rmatmul__``.
    __array_ufunc__ = None

    @property
    def shape(self) -> tuple[int, int]:
        """The shape of the matrix this object stands for (after ``.T``)."""
        m, n = self.stored_shape
        return (n, m) if self.transposed else (m, n)

    def _product(self, x, transpose: bool):
        events = isinstance(x, EventArray)
        value = x.value if events else x
        mv, mm, binary_mv, binary_mm = self._ops
        if jnp.ndim(value) == 1:
            fn = binary_mv if events else mv
        else:
            fn = binary_mm if events else mm
        # The structure was checked when the container was built (or comes
        # traced or trusted); unchecked structure is dropped alike everywhere.
        return fn(*self._operands(), value, shape=self.stored_shape, transpose=transpose, validate=False)

    def __matmul__(self, other):
        if not (isinstance(other, EventArray) or _is_array(other)):
            return NotImplemented
        return self._product(other, self.transposed)

    def __rmatmul__(self, other):
        if not (isinstance(other, EventArray) or _is_array(other)):
            return NotImplemented
        # x @ A == A.T @ x for vectors; X @ A == (A.T @ X.T).T for matrices.
        if jnp.ndim(other.value if isinstance(other, EventArray) else other) == 1:
            return self._product(other, not self.transposed)
        flipped = EventArray(other.value.T) if isinstance(other, EventArray) else jnp.asarray(other).T
        return self._product(flipped, not self.transposed).T


@jax.tree_util.register_pytree_node_class
class CSR(_SparseMatrix):
    """A sparse matrix in compressed sparse row form (a JAX pytree).

    ``data`` holds one weight per stored entry, or one shared weight (a
    scalar or shape ``(1,)``). ``.T`` is a lazy view: it flips which operator
    ``@`` calls and copies nothing. Concrete structure is checked when built
    (``ValueError`` naming the first bad entry); ``validate=False`` skips the
    check for trusted structure. See :doc:`/semantics`.

    Example:
        >>> import jax.numpy as jnp
        >>> import eventjax as ej
        >>> A = ej.CSR.fromdense(jnp.array([[0., 2.], [3., 0.]]))
        >>> A @ ej.EventArray(jnp.array([True, True]))
        Array([2., 3.], dtype=float32)
        >>> A.T.todense()
        Array([[0., 3.],
               [2., 0.]], dtype=float32)
    """

    def __init__(self, args, *, shape, transposed: bool = False, validate: bool = True):
        data, indices, indptr = args
        self.data, self.indices, self.indptr = data, indices, indptr
        self.stored_shape = tuple(int(d) for d in shape)
        self.transposed = bool(transposed)
        if validate and is_concrete(indices, indptr):
            self._check('CSR()')

    @property
    def dtype(self):
        return jnp.result_type(self.data)

    @property
    def T(self) -> CSR:
        return CSR((self.data, self.indices, self.indptr), shape=self.stored_shape,
                   transposed=not self.transposed, validate=False)

    def __repr__(self) -> str:
        view = ', transposed' if self.transposed else ''
        return f'CSR(shape={self.shape}, nnz={jnp.shape(self.indices)[0]}, dtype={self.dtype}{view})'

    def tree_flatten(self):
        return (self.data, self.indices, self.indptr), (self.stored_shape, self.transposed)

    @classmethod
    def tree_unflatten(cls, aux, children):
        shape, transposed = aux
        return cls(tuple(children), shape=shape, transposed=transposed, validate=False)

    # -- conversion ---------------------------------------------------------

    @classmethod
    def fromdense(cls, dense, *, index_dtype=jnp.int32) -> CSR:
        """The CSR form of a concrete dense matrix (its nonzero entries).

        Example:
            >>> import numpy as np
            >>> CSR.fromdense(np.eye(3, dtype=np.float32)).indptr
            Array([0, 1, 2, 3], dtype=int32)
        """
        dense = np.asarray(dense)
        if dense.ndim != 2:
            raise ValueError(f'CSR.fromdense(): dense must be a 2-D matrix, got shape {dense.shape}.')
        rows, cols = np.nonzero(dense)
        indptr = np.zeros(dense.shape[0] + 1, np.int64)
        np.cumsum(np.bincount(rows, minlength=dense.shape[0]), out=indptr[1:])
        return cls((jnp.asarray(dense[rows, cols]), jnp.asarray(cols, index_dtype),
                    jnp.asarray(indptr, index_dtype)), shape=dense.shape, validate=False)

    @classmethod
    def from_fixed_num_conn(cls, fcn) -> CSR:
        """The CSR form of a :class:`FixedNumConn` (traceable; same as ``fcn.tocsr()``)."""
        return fcn.tocsr()

    def todense(self):
        """The dense matrix, ``self.shape``; duplicate entries add up (differentiable in ``data``)."""
        m, n = self.stored_shape
        data = jnp.asarray(self.data)
        nnz = jnp.shape(self.indices)[0]
        rows = entry_rows(jnp.asarray(self.indptr), nnz)
        # Entries outside the rows' ranges go past the end, where the scatter drops them.
        rows = jnp.where((rows >= 0) & (rows < m), rows, m)
        values = jnp.broadcast_to(data.reshape(-1) if data.size == 1 else data, (nnz,))
        dense = jnp.zeros((m, n), data.dtype).at[rows, self.indices].add(values, mode='drop')
        return dense.T if self.transposed else dense

    def validate(self) -> CSR:
        """Check the structure of concrete arrays; returns ``self``.

        Construction already runs this check unless ``validate=False``.

        Raises:
            ValueError: ``indptr`` has the wrong length, does not start at 0,
                decreases, or ends past ``len(indices)``; a column index of a
                stored entry is outside ``[0, n)``.
        """
        self._check('CSR.validate()')
        return self

    def _check(self, who):
        m, n = self.stored_shape
        indptr = np.asarray(self.indptr)
        if indptr.shape != (m + 1,):
            raise ValueError(f'{who}: indptr must have length {m + 1} (rows + 1), got shape {indptr.shape}.')
        validate_csr_structure(who, np.asarray(self.indices), indptr, n)

    # -- products -----------------------------------------------------------

    _ops = (csrmv, csrmm, binary_csrmv, binary_csrmm)

    def _operands(self):
        return self.data, self.indices, self.indptr


@jax.tree_util.register_pytree_node_class
class FixedNumConn(WeightsAsData, _SparseMatrix):
    """A sparse matrix with exactly ``k`` connections per row (a JAX pytree).

    Row ``i`` holds weight ``weights[i, j]`` at column ``indices[i, j]``
    (``indices`` is ``(m, k)``; duplicates add up); ``weights`` may be one
    shared weight (a scalar or shape ``(1,)``). ``.T`` is a lazy view.
    ``EventArray @ FixedNumConn`` is the event-driven scatter. Concrete
    indices are checked when built; ``validate=False`` skips the check for
    trusted structure. See :doc:`/semantics`.

    Example:
        >>> import jax.numpy as jnp
        >>> import eventjax as ej
        >>> A = ej.FixedNumConn((0.5, jnp.array([[0, 2], [1, 2]])), shape=(2, 3))
        >>> ej.EventArray(jnp.array([True, True])) @ A
        Array([0.5, 0.5, 1. ], dtype=float32)
        >>> A.todense()
        Array([[0.5, 0. , 0.5],
               [0. , 0.5, 0.5]], dtype=float32)
    """

    def __init__(self, args, *, shape, transposed: bool = False, validate: bool = True):
        weights, indices = args
        self.weights, self.indices = weights, indices
        self.stored_shape = tuple(int(d) for d in shape)
        self.transposed = bool(transposed)
        if validate and is_concrete(weights, indices):
            self._check('FixedNumConn()')

    @property
    def dtype(self):
        return jnp.result_type(self.weights)

    @property
    def num_conn(self) -> int:
        """``k``, the connections per row."""
        return jnp.shape(self.indices)[1]

    @property
    def T(self) -> FixedNumConn:
        return FixedNumConn((self.weights, self.indices), shape=self.stored_shape, transposed=not self.transposed,
                            validate=False)

    def __repr__(self) -> str:
        view = ', transposed' if self.transposed else ''
        return f'FixedNumConn(shape={self.shape}, k={self.num_conn}, dtype={self.dtype}{view})'

    def tree_flatten(self):
        return (self.weights, self.indices), (self.stored_shape, self.transposed)

    @classmethod
    def tree_unflatten(cls, aux, children):
        shape, transposed = aux
        return cls(tuple(children), shape=shape, transposed=transposed, validate=False)

    # -- conversion ---------------------------------------------------------

    def tocsr(self) -> CSR:
        """The same matrix as a :class:`CSR` (traceable; a shared weight stays shared).

        Example:
            >>> import jax.numpy as jnp
            >>> FixedNumConn((1.0, jnp.array([[1], [0]])), shape=(2, 2)).tocsr().indptr
            Array([0, 1, 2], dtype=int32)
        """
        m, k = jnp.shape(self.indices)
        weights = jnp.asarray(self.weights)
        data = weights.reshape(1) if weights.size == 1 and m * k != 1 else weights.reshape(m * k)
        indptr = jnp.arange(m + 1, dtype=jnp.result_type(self.indices)) * k
        csr = CSR((data, jnp.reshape(self.indices, (m * k,)), indptr), shape=self.stored_shape, validate=False)
        return csr.T if self.transposed else csr

    @classmethod
    def from_csr(cls, csr: CSR) -> FixedNumConn:
        """The FCN form of a concrete :class:`CSR` whose rows all hold the same number of entries.

        Raises:
            ValueError: the rows hold different numbers of entries.
        """
        m, _ = csr.stored_shape
        indptr = np.asarray(csr.indptr)
        counts = np.diff(indptr)
        if counts.size and np.any(counts != counts[0]):
            raise ValueError(f'FixedNumConn.from_csr(): every row must hold the same number of entries, got '
                             f'counts from {counts.min()} to {counts.max()}; keep it as a CSR.')
        k = int(counts[0]) if counts.size else 0
        start, stop = int(indptr[0]) if indptr.size else 0, int(indptr[0]) + m * k if indptr.size else 0
        data = jnp.asarray(csr.data)
        weights = data.reshape(1) if data.size == 1 and m * k != 1 else data[start:stop].reshape(m, k)
        fcn = cls((weights, jnp.asarray(csr.indices)[start:stop].reshape(m, k)), shape=csr.stored_shape,
                  validate=False)
        return fcn.T if csr.transposed else fcn

    def todense(self):
        """The dense matrix, ``self.shape``; duplicate connections add up."""
        m, n = self.stored_shape
        indices = jnp.asarray(self.indices)
        # One scatter of the m * k weights; out-of-range indices go past the end and drop.
        cols = jnp.where((indices >= 0) & (indices < n), indices, n)
        rows = jnp.broadcast_to(jnp.arange(m)[:, None], indices.shape)
        weights = jnp.broadcast_to(jnp.asarray(self.weights, self.dtype).reshape(-1, 1) if jnp.size(self.weights) == 1
                                   else self.weights, indices.shape)
        dense = jnp.zeros((m, n), self.dtype).at[rows, cols].add(weights, mode='drop')
        return dense.T if self.transposed else dense

    def validate(self) -> FixedNumConn:
        """Check the structure of concrete arrays; returns ``self``.

        Construction already runs this check unless ``validate=False``.

        Raises:
            ValueError: ``indices`` is not ``(m, k)``, ``weights`` is neither
                ``(m, k)`` nor one weight, or an index is outside ``[0, n)``.
        """
        self._check('FixedNumConn.validate()')
        return self

    def _check(self, who):
        m, n = self.stored_shape
        indices, wshape = np.asarray(self.indices), np.shape(self.weights)
        if indices.ndim != 2 or indices.shape[0] != m:
            raise ValueError(f'{who}: indices must have shape ({m}, k), got {indices.shape}.')
        if int(np.prod(wshape)) != 1 and tuple(wshape) != indices.shape:
            raise ValueError(f'{who}: weights must have shape {indices.shape} or be one weight, got {wshape}.')
        validate_fcn_indices(who, indices, n)

    # -- products -----------------------------------------------------------

    _ops = (fcnmv, fcnmm, binary_fcnmv, binary_fcnmm)

    def _operands(self):
        return self.weights, self.indices
