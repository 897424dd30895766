""":class:`FixedNumConn`: ``k`` connections per row.

``EventArray @ FixedNumConn`` is the event-driven scatter. Its pre/post-named
forms, :class:`~eventjax.FixedNumPerPre` and :class:`~eventjax.FixedNumPerPost`,
subclass it in modules of their names; :func:`pair_args` reads the argument
spellings both accept.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from eventjax.containers.base import SparseMatrix, StoredArrays
from eventjax.containers.csr import CSR
from eventjax.containers.ops import WeightsAsData
from eventjax.containers.per_synapse import PerSynapseOps
from eventjax.kernels.common.checks import is_concrete, validate_fcn_indices
from eventjax.kernels.common.units import attach, mantissa, split
from eventjax.kernels.fcn import binary_fcnmm, binary_fcnmv, fcnmm, fcnmv
from eventjax.kernels.plasticity import csr2csc_on_post, csr_column_view, fcn_on_pre

__all__ = ['FixedNumConn', 'pair_args']


@jax.tree_util.register_pytree_node_class
class FixedNumConn(StoredArrays, WeightsAsData, PerSynapseOps, SparseMatrix):
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

    _stored_names = ('weights', 'indices')

    def __init__(self, args, *, shape, transposed: bool = False, validate: bool = True):
        weights, indices = args
        self.weights, self.indices = weights, indices
        self.stored_shape = tuple(int(d) for d in shape)
        self.transposed = bool(transposed)
        self._column_view = None  # of the stored matrix's CSR form, once built (on-post updates)
        if validate and is_concrete(weights, indices):
            self._check('FixedNumConn()')

    @property
    def dtype(self):
        return jnp.result_type(mantissa(self.weights))

    @property
    def num_conn(self) -> int:
        """``k``, the connections per row."""
        return jnp.shape(self.indices)[1]

    @property
    def T(self) -> FixedNumConn:
        return self._view(FixedNumConn, not self.transposed)

    def _summary(self) -> tuple[str, str]:
        return 'FixedNumConn', f'k={self.num_conn}'

    # -- conversion ---------------------------------------------------------

    def tocsr(self) -> CSR:
        """The same matrix as a :class:`CSR` (traceable; a shared weight stays shared).

        Example:
            >>> import jax.numpy as jnp
            >>> FixedNumConn((1.0, jnp.array([[1], [0]])), shape=(2, 2)).tocsr().indptr
            Array([0, 1, 2], dtype=int32)
        """
        m, k = jnp.shape(self.indices)
        weights, unit = split(self.weights)
        weights = jnp.asarray(weights)
        data = weights.reshape(1) if weights.size == 1 and m * k != 1 else weights.reshape(m * k)
        indptr = jnp.arange(m + 1, dtype=jnp.result_type(self.indices)) * k
        csr = CSR((attach(data, unit), jnp.reshape(self.indices, (m * k,)), indptr), shape=self.stored_shape,
                  validate=False)
        return csr.T if self.transposed else csr

    @classmethod
    def from_edges(cls, pre, post, weights=1.0, *, shape) -> FixedNumConn:
        """The FCN form of an edge list ``pre[e] -> post[e]`` in which every presynaptic neuron has ``k`` edges.

        Edges keep their order within a row. ``weights`` is one per edge or
        one shared weight. Concrete input only.

        Raises:
            ValueError: the rows hold different numbers of edges (keep it as
                ``CSR.fromcoo``), or an edge is outside ``shape``.

        Example:
            >>> import numpy as np
            >>> FixedNumConn.from_edges(np.array([1, 0, 1, 0]), np.array([0, 2, 1, 1]), shape=(2, 3)).indices
            Array([[2, 1],
                   [0, 1]], dtype=int32)
        """
        return cls.from_csr(CSR.fromcoo(weights, np.asarray(pre), np.asarray(post), shape=shape))

    def with_delays(self, delays):
        """This matrix with delays (``(m, k)`` integer steps, or one shared): a :class:`~eventjax.DelayedCSR`."""
        delays = jnp.asarray(delays)
        if delays.size != 1 and delays.shape != jnp.shape(self.indices):
            # Flattened, a (k, m) array has the right length but gives each delay to another synapse.
            raise ValueError(f'FixedNumConn.with_delays(): delays must have the shape of indices, '
                             f'{jnp.shape(self.indices)}, or be one shared delay, got {delays.shape}.')
        return self.tocsr().with_delays(jnp.reshape(delays, -1))

    def tocoo(self):
        """The stored connections as a :class:`~eventjax.COO` of the matrix this object stands for."""
        return self.tocsr().tocoo()

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
        data, unit = split(csr.data)
        data = jnp.asarray(data)
        weights = data.reshape(1) if data.size == 1 and m * k != 1 else data[start:stop].reshape(m, k)
        fcn = cls((attach(weights, unit), jnp.asarray(csr.indices)[start:stop].reshape(m, k)), shape=csr.stored_shape,
                  validate=False)
        return fcn.T if csr.transposed else fcn

    def todense(self):
        """The dense matrix, ``self.shape``; duplicate connections add up."""
        m, n = self.stored_shape
        indices = jnp.asarray(self.indices)
        # One scatter of the m * k weights; out-of-range indices go past the end and drop.
        cols = jnp.where((indices >= 0) & (indices < n), indices, n)
        rows = jnp.broadcast_to(jnp.arange(m)[:, None], indices.shape)
        weights, unit = split(self.weights)
        weights = jnp.asarray(weights, self.dtype)
        weights = jnp.broadcast_to(weights.reshape(-1, 1) if weights.size == 1 else weights, indices.shape)
        dense = jnp.zeros((m, n), self.dtype).at[rows, cols].add(weights, mode='drop')
        return attach(dense.T if self.transposed else dense, unit)

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

    # -- plasticity -----------------------------------------------------------

    def column_view(self):
        """The column view of the stored matrix's CSR form (:func:`eventjax.csr_column_view`), built once.

        Kept on this container when the indices are concrete, and carried by
        the containers made from it (also through ``jit``).
        """
        if self._column_view is None:
            m, k = jnp.shape(self.indices)
            indptr = jnp.arange(m + 1, dtype=jnp.result_type(self.indices)) * k
            view = csr_column_view(jnp.reshape(self.indices, (m * k,)), indptr, shape=self.stored_shape,
                                   validate=False)
            if not is_concrete(self.indices):
                return view
            self._column_view = view
        return self._column_view

    def with_column_view(self) -> FixedNumConn:
        """This matrix with its column view built (what on-post updates walk)."""
        self.column_view()
        return self

    def update_on_pre(self, pre_spike, post_trace, w_min=None, w_max=None, *, backend=None) -> FixedNumConn:
        """The same connections with ``W[i, c] += post_trace[indices[i, c]]`` for the rows with an event.

        Rows are presynaptic; see :func:`eventjax.fcn_on_pre`.

        Example:
            >>> import jax.numpy as jnp
            >>> A = FixedNumConn((jnp.zeros((2, 1)), jnp.array([[1], [0]])), shape=(2, 2))
            >>> A.update_on_pre(jnp.array([True, False]), jnp.array([.1, .2])).weights
            Array([[0.2],
                   [0. ]], dtype=float32)
        """
        if self.transposed:
            return self._stored_on_post(post_trace, pre_spike, w_min, w_max, backend)
        return self._stored_on_pre(pre_spike, post_trace, w_min, w_max, backend)

    def update_on_post(self, pre_trace, post_spike, w_min=None, w_max=None, *, backend=None) -> FixedNumConn:
        """The same connections with ``W[i, j] += pre_trace[i]`` on every stored entry of a column with an event.

        Walks the cached :meth:`column_view`: the cost is events x column length.

        Example:
            >>> import jax.numpy as jnp
            >>> A = FixedNumConn((jnp.zeros((2, 1)), jnp.array([[1], [0]])), shape=(2, 2))
            >>> A.update_on_post(jnp.array([.1, .2]), jnp.array([True, False])).weights
            Array([[0. ],
                   [0.2]], dtype=float32)
        """
        if self.transposed:
            return self._stored_on_pre(post_spike, pre_trace, w_min, w_max, backend)
        return self._stored_on_post(pre_trace, post_spike, w_min, w_max, backend)

    def _stored_on_pre(self, spikes, trace, w_min, w_max, backend):
        weights = fcn_on_pre(self.weights, self.indices, spikes, trace, w_min, w_max, shape=self.stored_shape,
                             backend=backend, validate=False)
        return self.with_data(weights)

    def _stored_on_post(self, trace, spikes, w_min, w_max, backend):
        rows, col_ptr, pos = self.column_view()
        weights = jnp.asarray(self.weights)
        flat = weights.reshape(-1) if weights.ndim == 2 else weights  # a shared weight raises below
        flat = csr2csc_on_post(flat, rows, col_ptr, pos, trace, spikes, w_min, w_max, shape=self.stored_shape,
                               backend=backend, validate=False)
        return self.with_data(flat.reshape(weights.shape))

    def _operands(self):
        return self.weights, self.indices

    def _stored_csr(self):
        stored = self.tocsr()
        return stored.data, stored.indices, stored.indptr


def pair_args(who: str, args) -> tuple:
    """``(data, indices)`` from either of brainevent's spellings: one tuple, or two arguments before ``shape=``."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)) and len(args[0]) == 2:
        return tuple(args[0])
    if len(args) == 2:
        return tuple(args)
    raise TypeError(f'{who}: pass (data, indices) as one tuple or as two arguments, then shape=; '
                    f'got {len(args)} positional argument(s).')
