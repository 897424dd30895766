""":class:`CSR`: a sparse matrix in compressed sparse row form.

Concrete structure is checked once, when a container is built (``CSR(...,
validate=False)`` skips it for trusted structure); its products then skip the
per-call check.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from eventjax.containers.base import SparseMatrix, StoredArrays
from eventjax.containers.coo import COO
from eventjax.containers.delayed_csr import DelayedCSR
from eventjax.containers.indices import coo2csr
from eventjax.containers.ops import WeightOps
from eventjax.containers.per_synapse import PerSynapseOps
from eventjax.kernels.common.checks import is_concrete, validate_csr_structure
from eventjax.kernels.common.units import attach, mantissa, split
from eventjax.kernels.csr import binary_csrmm, binary_csrmv, csrmm, csrmv
from eventjax.kernels.csr.reference import kept_entries
from eventjax.kernels.plasticity import csr2csc_on_post, csr_column_view, csr_on_pre

__all__ = ['CSR']


@jax.tree_util.register_pytree_node_class
class CSR(StoredArrays, PerSynapseOps, SparseMatrix):
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

    _stored_names = ('data', 'indices', 'indptr')

    def __init__(self, args, *, shape, transposed: bool = False, validate: bool = True):
        data, indices, indptr = args
        self.data, self.indices, self.indptr = data, indices, indptr
        self.stored_shape = tuple(int(d) for d in shape)
        self.transposed = bool(transposed)
        # (rows, column pointers, positions in data) of the stored matrix, once built; see column_view().
        self._column_view = None
        if validate and is_concrete(indices, indptr):
            self._check(f'{type(self).__name__}()')

    @property
    def dtype(self):
        return jnp.result_type(mantissa(self.data))

    @property
    def T(self) -> CSR:
        return self._view(CSR, not self.transposed)

    def _summary(self) -> tuple[str, str]:
        return 'CSR', f'nnz={jnp.shape(self.indices)[0]}'

    # -- conversion ---------------------------------------------------------

    @classmethod
    def fromdense(cls, dense, *, index_dtype=jnp.int32) -> CSR:
        """The CSR form of a concrete dense matrix (its nonzero entries; a ``Quantity`` keeps its unit).

        Example:
            >>> import numpy as np
            >>> CSR.fromdense(np.eye(3, dtype=np.float32)).indptr
            Array([0, 1, 2, 3], dtype=int32)
        """
        dense, unit = split(dense)
        dense = np.asarray(dense)
        if dense.ndim != 2:
            raise ValueError(f'CSR.fromdense(): dense must be a 2-D matrix, got shape {dense.shape}.')
        rows, cols = np.nonzero(dense)
        indptr = np.zeros(dense.shape[0] + 1, np.int64)
        np.cumsum(np.bincount(rows, minlength=dense.shape[0]), out=indptr[1:])
        return cls((attach(jnp.asarray(dense[rows, cols]), unit), jnp.asarray(cols, index_dtype),
                    jnp.asarray(indptr, index_dtype)), shape=dense.shape, validate=False)

    @classmethod
    def fromcoo(cls, data, row=None, col=None, *, shape=None) -> CSR:
        """The CSR form of entries given by coordinates (or of a :class:`COO`).

        Entries keep their order within a row; duplicates stay stored (and
        add up in products). ``data`` may be one shared weight. Traceable.

        Example:
            >>> import numpy as np
            >>> A = CSR.fromcoo(np.array([1., 2.], np.float32), np.array([1, 0]), np.array([0, 1]), shape=(2, 2))
            >>> A.todense()
            Array([[0., 2.],
                   [1., 0.]], dtype=float32)
        """
        if isinstance(data, COO):
            data, row, col, shape = data.data, data.row, data.col, data.shape
        if row is None or col is None or shape is None:
            raise TypeError('CSR.fromcoo(): pass a COO, or data, row, col and shape=(m, n).')
        indptr, indices, order = coo2csr(row, col, shape=shape)
        data = jnp.asarray(data)
        nnz = np.shape(order)[0]
        if data.size != 1 and data.shape != (nnz,):
            # A gather by order would clamp a short data and drop the tail of a long one, silently.
            raise ValueError(f'CSR.fromcoo(): data must have length {nnz} (one weight per entry of row and col) or '
                             f'be one shared weight, got shape {data.shape}.')
        data = data.reshape(1) if data.size == 1 and nnz != 1 else data.reshape(-1)[order]
        return cls((data, jnp.asarray(indices), jnp.asarray(indptr)), shape=shape, validate=False)

    @classmethod
    def from_scipy(cls, matrix, *, index_dtype=jnp.int32) -> CSR:
        """The CSR form of any ``scipy.sparse`` matrix or array (its stored entries, explicit zeros included).

        Example:
            >>> import scipy.sparse as sp
            >>> CSR.from_scipy(sp.eye(2, dtype='float32', format='coo')).indices
            Array([0, 1], dtype=int32)
        """
        if not hasattr(matrix, 'tocsr'):
            raise TypeError(f'CSR.from_scipy(): expected a scipy.sparse matrix or array, got {type(matrix).__name__}.')
        m = matrix.tocsr()
        if m.data.dtype == np.bool_ or np.issubdtype(m.data.dtype, np.complexfloating):
            raise TypeError(f'CSR.from_scipy(): the matrix holds {m.data.dtype} entries, but weights are real; '
                            'convert it first, e.g. CSR.from_scipy(matrix.astype(np.float32)).')
        return cls((jnp.asarray(m.data), jnp.asarray(m.indices, index_dtype), jnp.asarray(m.indptr, index_dtype)),
                   shape=m.shape)

    def to_scipy(self):
        """The matrix this object stands for as a ``scipy.sparse.csr_array`` (concrete arrays; needs scipy).

        Example:
            >>> CSR.fromdense(np.eye(2, dtype=np.float32)).T.to_scipy().toarray()
            array([[1., 0.],
                   [0., 1.]], dtype=float32)
        """
        try:
            import scipy.sparse as sp
        except ImportError as err:  # scipy comes with jax, but is not eventjax's own dependency
            raise ImportError('CSR.to_scipy() needs scipy: pip install scipy') from err
        if not is_concrete(mantissa(self.data), self.indices, self.indptr):
            raise TypeError('CSR.to_scipy(): the matrix is traced (inside jit, vmap or grad), but scipy needs '
                            'concrete arrays; call to_scipy() outside the transformed function.')
        m, n = self.stored_shape
        nnz = np.shape(self.indices)[0]
        data = np.broadcast_to(np.asarray(self.data).reshape(-1), (nnz,)) if np.size(self.data) == 1 \
            else np.asarray(self.data)
        out = sp.csr_array((np.array(data), np.asarray(self.indices), np.asarray(self.indptr)), shape=(m, n))
        return out.T.tocsr() if self.transposed else out

    def tocoo(self) -> COO:
        """The stored entries as a :class:`COO` of the matrix this object stands for.

        Example:
            >>> CSR.fromdense(np.array([[0., 2.], [3., 0.]], np.float32)).tocoo().col
            Array([1, 0], dtype=int32)
        """
        entries = WeightOps.tocoo(self)
        return COO((entries.data, entries.row, entries.col), shape=tuple(entries.shape), validate=False)

    def with_delays(self, delays) -> DelayedCSR:
        """This matrix with one delay (integer steps) per stored entry, or one shared: see :class:`DelayedCSR`.

        Rows are presynaptic: a transposed view (or a :class:`CSC`) must be
        converted first (``csc_to_csr_index``), since its events would index columns.
        """
        if self.transposed:
            raise ValueError('CSR.with_delays(): rows must be the presynaptic neurons, but this is a transposed view '
                             '(or a CSC); build the CSR of the matrix itself, e.g. with eventjax.csc_to_csr_index.')
        return DelayedCSR.from_csr_arrays(self.data, self.indices, self.indptr, delays, shape=self.stored_shape)

    @classmethod
    def from_fixed_num_conn(cls, fcn) -> CSR:
        """The CSR form of a :class:`FixedNumConn` (traceable; same as ``fcn.tocsr()``)."""
        return fcn.tocsr()

    def todense(self):
        """The dense matrix, ``self.shape``; duplicate entries add up (differentiable in ``data``).

        Unchecked structure (``validate=False``, or traced) follows the products' rules: ``A.todense() @ v``
        equals ``A @ v``, entries with a column outside ``[0, n)`` or with no row are dropped.
        """
        m, n = self.stored_shape
        data, unit = split(self.data)
        data = jnp.asarray(data)
        indices = jnp.asarray(self.indices)
        nnz = jnp.shape(indices)[0]
        rows, kept = kept_entries(indices, jnp.asarray(self.indptr), (m, n))
        # Dropped entries (as the products drop them) go past the end, where the scatter drops them;
        # a negative column would otherwise wrap to the last one.
        rows = jnp.where(kept, rows, m)
        values = jnp.broadcast_to(data.reshape(-1) if data.size == 1 else data, (nnz,))
        dense = jnp.zeros((m, n), data.dtype).at[rows, indices].add(values, mode='drop')
        return attach(dense.T if self.transposed else dense, unit)

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
            raise ValueError(f'{who}: indptr must have length {m + 1} ({self._indptr_counts} + 1), got shape '
                             f'{indptr.shape}.')
        validate_csr_structure(who, np.asarray(self.indices), indptr, n)

    # -- plasticity -----------------------------------------------------------

    def column_view(self):
        """``(rows, col_indptr, weight_indices)`` of the stored matrix: :func:`eventjax.csr_column_view`.

        Built once and kept on this container when the structure is concrete;
        containers made from it (``with_data``, updates, ``.T``) carry it, also
        through ``jit``. Under ``jit`` build it before the traced code, with
        :meth:`with_column_view`, or every trace sorts the entries again.
        """
        if self._column_view is None:
            view = csr_column_view(self.indices, self.indptr, shape=self.stored_shape, validate=False)
            if not is_concrete(self.indices, self.indptr):
                return view
            self._column_view = view
        return self._column_view

    def with_column_view(self) -> CSR:
        """This matrix with its column view built (what on-post updates walk).

        Example:
            >>> import jax.numpy as jnp
            >>> A = CSR.fromdense(jnp.array([[0., 2.], [3., 4.]])).with_column_view()
            >>> [v.tolist() for v in A.column_view()]
            [[1, 0, 1], [0, 1, 3], [1, 0, 2]]
        """
        self.column_view()
        return self

    def update_on_pre(self, pre_spike, post_trace, w_min=None, w_max=None, *, backend=None) -> CSR:
        """A CSR with ``W[i, j] += post_trace[j]`` on the stored entries of the rows with an event.

        :func:`eventjax.csr_on_pre` on this matrix (rows are presynaptic); the
        weights are updated in place under donation or in a ``lax.scan`` carry.

        Example:
            >>> import jax.numpy as jnp
            >>> A = CSR.fromdense(jnp.array([[1., 0.], [1., 1.]]))
            >>> A.update_on_pre(jnp.array([False, True]), jnp.array([.5, .25])).todense()
            Array([[1.  , 0.  ],
                   [1.5 , 1.25]], dtype=float32)
        """
        if self.transposed:
            return self._stored_on_post(post_trace, pre_spike, w_min, w_max, backend)
        return self._stored_on_pre(pre_spike, post_trace, w_min, w_max, backend)

    def update_on_post(self, pre_trace, post_spike, w_min=None, w_max=None, *, backend=None) -> CSR:
        """A CSR with ``W[i, j] += pre_trace[i]`` on the stored entries of the columns with an event.

        :func:`eventjax.csr2csc_on_post` through this matrix's cached
        :meth:`column_view`: the cost is events x column length.

        Example:
            >>> import jax.numpy as jnp
            >>> A = CSR.fromdense(jnp.array([[1., 0.], [1., 1.]]))
            >>> A.update_on_post(jnp.array([.5, .25]), jnp.array([True, False])).todense()
            Array([[1.5 , 0.  ],
                   [1.25, 1.  ]], dtype=float32)
        """
        if self.transposed:
            return self._stored_on_pre(post_spike, pre_trace, w_min, w_max, backend)
        return self._stored_on_post(pre_trace, post_spike, w_min, w_max, backend)

    def _stored_on_pre(self, spikes, trace, w_min, w_max, backend):
        data = csr_on_pre(self.data, self.indices, self.indptr, spikes, trace, w_min, w_max,
                          shape=self.stored_shape, backend=backend, validate=False)
        return self.with_data(data)

    def _stored_on_post(self, trace, spikes, w_min, w_max, backend):
        rows, col_ptr, pos = self.column_view()
        data = csr2csc_on_post(self.data, rows, col_ptr, pos, trace, spikes, w_min, w_max,
                               shape=self.stored_shape, backend=backend, validate=False)
        return self.with_data(data)

    # -- products -----------------------------------------------------------

    _ops = (csrmv, csrmm, binary_csrmv, binary_csrmm)
    _indptr_counts = 'rows'  # what indptr has one entry per (plus one)

    def _operands(self):
        return self.data, self.indices, self.indptr

    def _stored_csr(self):
        return self.data, self.indices, self.indptr
