"""The memory floor of a benchmark case: the bytes its kernel must move.

What is counted, for float32 weights, int32 indices and bool events (a
matrix of events counts the rows with an event in any column as "event
rows"):

- a contiguous run (a whole array, or the entries of one row) counts its
  bytes;
- an isolated element picked out of a larger array (the weight of one event
  entry in a gather, one column of a dense row) counts the 64-byte cache
  line holding it, once however many picks share the line: memory moves in
  lines, so a floor of 4 bytes per pick would be unreachable;
- the events are read once, in full; the output is written once, in full.

Per operator (``e`` events, ``k`` entries per row, ``n`` rows):

===================  ========================================================
operator             bytes counted
===================  ========================================================
CSR event, T         events + indptr pair of each event row (lines) +
                     indices and data of the event rows + output
CSR event, N         events + all of indptr + all indices + data of the
                     entries whose column is an event (lines) + output
CSR float, N         all of indptr, indices and data + vector + output
FCN                  as CSR, without indptr
dense event, T       events + the event rows of W + output
dense event, N       events + per row of W, the lines holding an event
                     column + output
===================  ========================================================

Dividing by the bandwidth measured by
:func:`~benchmarks.machine.measure_bandwidth` gives the floor in µs; a kernel's time over it is the "x floor"
column.
"""

from __future__ import annotations

import numpy as np

__all__ = ['LINE', 'dense_bytes', 'lines_bytes', 'sparse_bytes']

LINE = 64  # bytes per cache line
FLOAT_BYTES = INDEX_BYTES = 4


def lines_bytes(offsets) -> int:
    """Bytes of the distinct cache lines holding the given byte offsets.

    Example:
        >>> lines_bytes([0, 4, 64, 200])
        192
    """
    offsets = np.asarray(offsets, np.int64)
    return LINE * int(np.unique(offsets // LINE).size)


def _active_rows(events: np.ndarray) -> np.ndarray:
    """Rows with an event (in any column of a matrix of events)."""
    return np.flatnonzero(events.reshape(events.shape[0], -1).any(axis=1))


def sparse_bytes(indices: np.ndarray, x: np.ndarray, *, transpose: bool, event: bool = True, csr: bool = True) -> int:
    """The floor of a CSR (``csr=True``) or FCN product with ``k`` entries per row.

    Args:
        indices: ``(n, k)`` column indices (a CSR with k entries per row, or FCN).
        x: the events, ``(n,)`` or ``(n, batch)`` bool; or the float vector.
        transpose: the scatter product (event rows) rather than the gather.
        event: an event product; False: a float product (every entry is read).
        csr: count ``indptr`` (CSR); False for FCN, which has none.

    Example:
        >>> idx = np.array([[0, 1], [1, 2], [0, 2]])
        >>> sparse_bytes(idx, np.array([True, False, False]), transpose=True)  # 3 + 64 + 16 + 12
        95
    """
    n, k = indices.shape
    out_bytes = n * FLOAT_BYTES * (x.shape[1] if x.ndim == 2 else 1)
    x_bytes = x.size * x.itemsize
    if not event:
        return (n + 1) * INDEX_BYTES * csr + n * k * (INDEX_BYTES + FLOAT_BYTES) + x_bytes + out_bytes
    if transpose:
        rows = _active_rows(x)
        indptr = lines_bytes(np.concatenate([rows, rows + 1]) * INDEX_BYTES) if csr and rows.size else 0
        return x_bytes + indptr + rows.size * k * (INDEX_BYTES + FLOAT_BYTES) + out_bytes
    hit = x.reshape(n, -1).any(axis=1)[indices]  # entries whose column is an event
    data = lines_bytes(np.flatnonzero(hit) * FLOAT_BYTES) if hit.any() else 0
    return x_bytes + (n + 1) * INDEX_BYTES * csr + n * k * INDEX_BYTES + data + out_bytes


def dense_bytes(events: np.ndarray, *, transpose: bool) -> int:
    """The floor of an event product with a dense ``(n, n)`` float32 matrix.

    Example:
        >>> dense_bytes(np.array([True, False, False, False]), transpose=True)  # events, row 0, output
        36
    """
    n = events.shape[0]
    out_bytes = n * FLOAT_BYTES * (events.shape[1] if events.ndim == 2 else 1)
    x_bytes = events.size * events.itemsize
    cols = _active_rows(events)
    if transpose:
        return x_bytes + cols.size * n * FLOAT_BYTES + out_bytes
    per_row = lines_bytes(cols * FLOAT_BYTES) if cols.size else 0
    return x_bytes + n * per_row + out_bytes
