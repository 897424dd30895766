"""Fast pure-JAX CSR kernels: the ``jax`` backend (``reference.py`` stays the readable oracle).

The reference finds each stored entry's row with a binary search over
``indptr`` (slow on XLA:CPU: see the docs' Kernel speed page), then touches
every entry.
These kernels instead lay the rows out as a padded ``(rows, width)`` block,
with a static width a little above the mean row length, chosen at run time
(``lax.switch``) among:

- uniform rows (``indptr[i] == i * L``): ``indices`` reshaped, nothing gathered;
- padded rows, when the longest row fits the width: one gather of the entries;
- the general layout otherwise: each entry's row from a prefix maximum.

With events on the rows (``transpose=True``) only the rows that hold an event
are visited (:mod:`~eventjax.kernels.common.compaction`). The semantics are
the reference's: dropped entries (no row, a column outside ``[0, n)``) are
never read or written, binary products select (never multiply by 0/1),
float products are IEEE over the stored entries; ``indptr`` is valid or
repaired before the kernel runs.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from eventjax.kernels.common import accumulation_dtype
from eventjax.kernels.common.compaction import by_event_count, event_mask
from eventjax.kernels.common.events import product_kernels
from eventjax.kernels.csr import reference

__all__ = ['SMALL', 'binary_csrmm_kernel', 'binary_csrmv_kernel', 'csrmm_kernel', 'csrmv_kernel', 'entry_rows',
           'pad_width']


def pad_width(nnz: int, m: int) -> int:
    """The static width of a padded row block: 1.25x the mean row length, rounded up to a multiple of 8.

    Example:
        >>> pad_width(400_000, 4000)
        128
    """
    mean = -(-nnz // m)
    return -(-(5 * mean) // 32) * 8


def entry_rows(indptr, nnz: int):
    """The row of each of the ``nnz`` entries: -1 before ``indptr[0]``, ``m`` from ``indptr[m]`` on.

    The same as the reference's binary search, as a running maximum of the
    row starts (an empty row's start is overwritten by the next row's).

    Example:
        >>> entry_rows(jnp.array([1, 3, 3, 4]), 5)
        Array([-1,  0,  0,  2,  3], dtype=int32)
    """
    m = indptr.shape[0] - 1
    starts = jnp.full((nnz,), -1, indptr.dtype).at[indptr].max(jnp.arange(m + 1, dtype=indptr.dtype), mode='drop')
    return jax.lax.associative_scan(jnp.maximum, starts)


class _Problem:
    """One product's operands and static facts, and the row blocks its branches work on."""

    def __init__(self, data, indices, indptr, x, shape, transpose, out_dtype, binary):
        self.data, self.indices, self.indptr, self.x = data, indices, indptr, x
        self.m, self.n = shape
        self.nnz = indices.shape[0]
        self.transpose, self.binary = transpose, binary
        self.acc = accumulation_dtype(out_dtype)
        self.width = pad_width(self.nnz, self.m)
        self.events = event_mask(x) if binary else None

    def weights(self, pos):
        """The weight at each entry position (homogeneous data broadcasts)."""
        w = self.data.astype(self.acc)
        return jnp.broadcast_to(w[0], pos.shape) if w.shape[0] != self.nnz else w[pos]

    def uniform_block(self):
        """All rows, each ``nnz // m`` long: ``(cols, weights, ok)`` without a gather."""
        cols = self.indices.reshape(self.m, -1)
        w = self.data.astype(self.acc)
        w = jnp.broadcast_to(w[0], cols.shape) if w.shape[0] != self.nnz else w.reshape(cols.shape)
        return cols, w, (cols >= 0) & (cols < self.n)

    def padded_block(self, rows):
        """Rows ``rows`` (``m`` pads) padded to the static width; no row may be longer."""
        safe = jnp.minimum(rows, self.m - 1)
        start = self.indptr[safe]
        length = jnp.where(rows < self.m, self.indptr[safe + 1] - start, 0)
        slot = jnp.arange(self.width, dtype=start.dtype)
        ok = slot < length[:, None]
        pos = jnp.where(ok, start[:, None] + slot, 0)
        cols = self.indices[pos]
        return cols, self.weights(pos), ok & (cols >= 0) & (cols < self.n)

    def read(self, src):
        """``x`` (its events, for a binary product) at ``src``."""
        return (self.events if self.binary else self.x)[src]

    def contributions(self, w, ok, xs):
        """Each entry's term from its weight and ``xs``, the operand read for it (broadcast like ``w``)."""
        zero = jnp.zeros((), self.acc)
        if self.x.ndim == 2:
            w, ok = w[..., None], ok[..., None]
        if self.binary:
            return jnp.where(ok & xs, w, zero)
        return jnp.where(ok, w * xs.astype(self.acc), zero)

    def gather(self, block):
        """``A @ x`` over a block of all rows in order: each row sums its own entries."""
        cols, w, ok = block
        return self.contributions(w, ok, self.read(jnp.where(ok, cols, 0))).sum(axis=1)

    def scatter(self, rows, block):
        """``x @ A`` over a block of rows ``rows``: each entry adds into its column."""
        cols, w, ok = block
        xs = self.read(jnp.minimum(rows, self.m - 1))[:, None]
        terms = self.contributions(w, ok, xs)
        # A flat scatter: XLA:CPU scatters a (rows, width) index block about 2x slower.
        dst = jnp.where(ok, cols, self.n).reshape(-1)
        return self.zeros(self.n).at[dst].add(terms.reshape((-1,) + terms.shape[2:]), mode='drop')

    def general(self):
        """Any valid ``indptr``: every entry with its row, scattered into the result."""
        rows = entry_rows(self.indptr, self.nnz)
        ok = (rows >= 0) & (rows < self.m) & (self.indices >= 0) & (self.indices < self.n)
        src, dst = (rows, self.indices) if self.transpose else (self.indices, rows)
        terms = self.contributions(self.weights(jnp.arange(self.nnz)), ok, self.read(jnp.where(ok, src, 0)))
        size = self.n if self.transpose else self.m
        return self.zeros(size).at[jnp.where(ok, dst, size)].add(terms, mode='drop')

    def zeros(self, rows):
        return jnp.zeros((rows,) + self.x.shape[1:], self.acc)

    def all_rows(self):
        """The product over every row, in the cheapest layout the structure allows."""
        rows = jnp.arange(self.m, dtype=self.indptr.dtype)
        run = (lambda block: self.scatter(rows, block)) if self.transpose else self.gather
        lengths = self.indptr[1:] - self.indptr[:-1]
        branches = [self.general, lambda: run(self.padded_block(rows))]
        which = (jnp.max(lengths) <= self.width).astype(jnp.int32)
        if self.x.ndim == 2:
            # With a matrix operand XLA:CPU ran the padded branch, and the uniform one beside it,
            # 2-3x slower than the general layout (measured at 4,000 rows, 16 columns).
            branches, which = branches[:1], jnp.int32(0)
        if self.nnz % self.m == 0:
            uniform = (self.indptr[0] == 0) & jnp.all(lengths == self.nnz // self.m)
            branches.append(lambda: run(self.uniform_block()))
            which = jnp.where(uniform, len(branches) - 1, which)
        return jax.lax.switch(which, branches)

    def event_rows(self):
        """``x @ A`` with events: only the rows of the events, when they fit the padded width.

        Each event ``(i, c)`` of a matrix ``x`` (flattened) adds the entries
        of row ``i`` into column ``c`` of the result, so a batch of 16 event
        vectors costs its events, not 16 times the rows any of them touch.
        """
        k = 1 if self.x.ndim == 1 else self.x.shape[1]
        flat = self.events.reshape(-1)
        lengths = self.indptr[1:] - self.indptr[:-1]
        active = self.events if k == 1 else self.events.any(axis=1)
        fits = jnp.max(jnp.where(active, lengths, 0)) <= self.width

        def entries_of(idx):
            rows = jnp.where(idx < self.m * k, idx // k, self.m)
            cols, w, ok = self.padded_block(rows)
            dst = jnp.where(ok, cols * k + (idx % k)[:, None], self.n * k).reshape(-1)
            terms = jnp.where(ok, w, jnp.zeros((), self.acc)).reshape(-1)
            y = jnp.zeros((self.n * k,), self.acc).at[dst].add(terms, mode='drop')
            return y.reshape((self.n,) + self.x.shape[1:])
        # Past m events the padded rows outnumber those of a pass over every row.
        return by_event_count(flat, entries_of, self.all_rows, limit=self.m, fallback=self.general,
                              use_fallback=~fits)

    def run(self):
        k = 1 if self.x.ndim == 1 else self.x.shape[1]
        # The flat (row or column, batch) indices of event_rows are int32.
        if self.transpose and self.binary and max(self.m, self.n) * k < jnp.iinfo(jnp.int32).max:
            return self.event_rows()
        return self.all_rows()


# Below this many entries a product takes microseconds any way it is done, and the
# layouts' branches would only add compile time (3-5x the general path's).
SMALL = 32768


def _product(data, indices, indptr, x, *, shape, transpose, out_dtype, binary):
    m, n = shape
    out_shape = (n if transpose else m,) + x.shape[1:]
    if x.shape[0] == 0 or indices.shape[0] == 0 or m == 0 or n == 0:
        return jnp.zeros(out_shape, out_dtype)
    if indices.shape[0] < SMALL:
        # The oracle's binary search compiles 2-4x faster than the running maximum of general().
        return reference._product(data, indices, indptr, x, shape=shape, transpose=transpose, out_dtype=out_dtype,
                                  binary=binary)
    y = _Problem(data, indices, indptr, x, shape, transpose, out_dtype, binary).run()
    return y.astype(out_dtype)


# ``A @ x`` (or ``x @ A``), float and event ``x``; the mm kernels are the same functions (2-D ``x``).
csrmv_kernel, binary_csrmv_kernel = product_kernels(_product)
csrmm_kernel = csrmv_kernel
binary_csrmm_kernel = binary_csrmv_kernel
