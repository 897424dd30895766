"""Numba CPU kernels for delayed delivery.

``kernel(ring, events, data, indices, indptr, delays, t, out, err)`` copies
the ring into ``out`` (the bridge hands ``out`` over uninitialised and
does not alias it with ``ring``), then visits only the rows that carry an
event and adds each kept synapse into ``out[slot, column]``. Bad structure
is dropped the same way as on every backend: ``indptr`` goes through
``trusted_indptr`` (the repair the others get in JAX), and a column outside
``[0, n)`` or a delay outside ``[1, L)`` (read unsigned, a negative one is
huge) contributes nothing. ``err`` stays unused.
"""

from __future__ import annotations

import numba
import numpy as np

from eventjax.kernels.common.numba_events import trusted_indptr

__all__ = ['csr_delay_deliver_kernel']

_U = np.uint64


@numba.njit(cache=True, inline='always')
def _deliver_row(out, data, indices, delays, start, end, now, value, n, length):
    homogeneous_w, homogeneous_d = data.shape[0] == 1, delays.shape[0] == 1
    for k in range(start, end):
        j = _U(np.int64(indices[k]))
        d = _U(np.int64(delays[0] if homogeneous_d else delays[k]))
        if j >= n or d == 0 or d >= length:
            continue
        slot = now + d
        if slot >= length:
            slot -= length
        w = data[0] if homogeneous_w else data[k]
        out[slot, j] += w * value


@numba.njit(cache=True)
def _deliver(ring, events, data, indices, indptr, delays, t, out, weighted):
    out[:] = ring
    length, n = _U(out.shape[0]), _U(out.shape[1])
    nnz = indices.shape[0]
    if length == 0 or n == 0:
        return
    indptr = trusted_indptr(indptr, nnz)
    now = _U(np.int64(t[0]) % np.int64(length))  # floor modulo: a negative t counts back from the end
    one = out.dtype.type(1)
    for i in range(events.shape[0]):
        x = events[i]
        if weighted:
            if x == 0:
                continue
            value = out.dtype.type(x)
        else:
            if not x > 0:
                continue
            value = one
        _deliver_row(out, data, indices, delays, _U(np.int64(indptr[i])), _U(np.int64(indptr[i + 1])), now, value,
                     n, length)


@numba.njit(cache=True)
def _binary(ring, events, data, indices, indptr, delays, t, out, err):
    _deliver(ring, events, data, indices, indptr, delays, t, out, False)


@numba.njit(cache=True)
def _weighted(ring, events, data, indices, indptr, delays, t, out, err):
    _deliver(ring, events, data, indices, indptr, delays, t, out, True)


def csr_delay_deliver_kernel(*, weighted):
    """The numba kernel of ``csr_delay_deliver``: one per event mode."""
    return _weighted if weighted else _binary
