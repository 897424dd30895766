"""What every sparse container shares: its shape, ``.T`` and the ``@`` routing to the operators.

``CSR @ EventArray`` / ``EventArray @ CSR`` route to the binary operator of
the container's family (``transpose`` False / True), 2-D events to its
``mm``; ``CSR @ array`` / ``array @ CSR`` to the float ones. Containers carry
no backend: ``set_backend`` and ``config.override`` apply to ``@``; call the
functions for a per-call ``backend=``.
"""

from __future__ import annotations

import jax.numpy as jnp

from eventjax.containers.event_array import EventArray
from eventjax.containers.graded import graded_csr_product
from eventjax.containers.graded_events import GradedEvents
from eventjax.containers.operands import is_plain_array
from eventjax.containers.ops import WeightOps

__all__ = ['SparseMatrix', 'StoredArrays']


class SparseMatrix(WeightOps):
    """What every sparse container shares: a lazy ``.T`` and the ``@`` routing.

    A subclass sets ``_ops = (mv, mm, binary_mv, binary_mm)`` and
    ``_operands()`` (the arrays before ``x``); ``stored_shape`` and
    ``transposed`` describe the stored matrix and the view.
    """

    _ops: tuple = ()
    _eventjax_container = True
    # NumPy arrays then defer ``ndarray @ container`` to ``__rmatmul__``.
    __array_ufunc__ = None

    @property
    def shape(self) -> tuple[int, int]:
        """The shape of the matrix this object stands for (after ``.T``)."""
        m, n = self.stored_shape
        return (n, m) if self.transposed else (m, n)

    def _stored_csr(self):
        """``(data, indices, indptr)`` of the stored matrix, for products with :class:`GradedEvents`."""
        raise NotImplementedError

    def _product(self, x, transpose: bool):
        if isinstance(x, GradedEvents):
            return graded_csr_product(*self._stored_csr(), x.value, shape=self.stored_shape, transpose=transpose)
        events = isinstance(x, EventArray)
        value = x._operand if events else x
        mv, mm, binary_mv, binary_mm = self._ops
        if jnp.ndim(value) == 1:
            fn = binary_mv if events else mv
        else:
            fn = binary_mm if events else mm
        # The structure was checked when the container was built (or comes
        # traced or trusted); unchecked structure is dropped alike everywhere.
        return fn(*self._operands(), value, shape=self.stored_shape, transpose=transpose, validate=False)

    def __matmul__(self, other):
        if not (isinstance(other, EventArray) or is_plain_array(other)):
            return NotImplemented
        return self._product(other, self.transposed)

    def __rmatmul__(self, other):
        if not (isinstance(other, EventArray) or is_plain_array(other)):
            return NotImplemented
        # x @ A == A.T @ x for vectors; X @ A == (A.T @ X.T).T for matrices.
        if jnp.ndim(other.value if isinstance(other, EventArray) else other) == 1:
            return self._product(other, not self.transposed)
        flipped = type(other)(other.value.T) if isinstance(other, EventArray) else jnp.asarray(other).T
        return self._product(flipped, not self.transposed).T


class StoredArrays:
    """Pytree plumbing of a container built as ``cls(stored_arrays, shape=, transposed=, validate=)``.

    A subclass names its stored arrays in ``_stored_names``; a built column
    view (``_column_view``) travels after them, through jit, scan carries and
    ``with_data``, and into ``.T`` views. A class whose constructor takes the
    shape and view of the transpose of what it stores (CSC, FixedNumPerPost)
    sets ``_as_transpose``. ``_summary()`` gives ``repr`` its name and size.
    """

    _stored_names: tuple[str, ...] = ()
    _as_transpose = False

    def _summary(self) -> tuple[str, str]:
        raise NotImplementedError

    def __repr__(self) -> str:
        name, size = self._summary()
        view = ', transposed' if self.transposed != self._as_transpose else ''
        return f'{name}(shape={self.shape}, {size}, dtype={self.dtype}{view})'

    def _stored(self) -> tuple:
        return tuple(getattr(self, name) for name in self._stored_names)

    def _view(self, cls, transposed: bool):
        """The same stored arrays (and column view) as a ``cls``, ``transposed`` or not."""
        view = cls(self._stored(), shape=self.stored_shape, transposed=transposed, validate=False)
        view._column_view = self._column_view
        return view

    def tree_flatten(self):
        shape, transposed = self.stored_shape, self.transposed
        if self._as_transpose:
            shape, transposed = shape[::-1], not transposed
        return (*self._stored(), *(self._column_view or ())), (shape, transposed)

    @classmethod
    def tree_unflatten(cls, aux, children):
        shape, transposed = aux
        k = len(cls._stored_names)
        new = cls(tuple(children[:k]), shape=shape, transposed=transposed, validate=False)
        new._column_view = tuple(children[k:]) or None
        return new
