"""A plain NumPy statement of the Semantics page, to test every backend against.

Loops over stored entries, float64, with the drop rule (repaired ``indptr``,
columns outside ``[0, n)`` skipped) and the select rule (a binary product
adds the weight of an event entry and nothing else).
"""

from __future__ import annotations

import numpy as np


def is_event(x):
    x = np.asarray(x)
    return x if x.dtype == bool else x > 0


def repaired(indptr, nnz):
    return np.maximum.accumulate(np.clip(np.asarray(indptr, np.int64), 0, nnz))


def csr_entries(indices, indptr, shape):
    """(row, col, k) of every kept entry."""
    m, n = shape
    indices = np.asarray(indices)
    p = repaired(indptr, indices.shape[0])
    for i in range(m):
        for k in range(p[i], p[i + 1]):
            if 0 <= indices[k] < n:
                yield i, int(indices[k]), k


def fcn_entries(indices, shape):
    m, n = shape
    indices = np.asarray(indices)
    for i in range(indices.shape[0]):
        for j in range(indices.shape[1]):
            if 0 <= indices[i, j] < n:
                yield i, int(indices[i, j]), (i, j)


def product(entries, weight, x, shape, transpose, binary):
    """The product over ``entries`` (row, col, where) with ``weight(where)``."""
    m, n = shape
    x = np.asarray(x)
    out = np.zeros((n if transpose else m,) + x.shape[1:])
    events = is_event(x) if binary else None
    with np.errstate(invalid='ignore', over='ignore'):
        for i, j, where in entries:
            w = np.float64(weight(where))
            src, dst = (i, j) if transpose else (j, i)
            if binary:
                out[dst] += np.where(events[src], w, 0.0)
            else:
                out[dst] += w * x[src].astype(np.float64)
    return out


def csr_product(data, indices, indptr, x, shape, transpose, binary):
    data = np.asarray(data).reshape(-1)
    weight = (lambda k: data[0]) if data.size == 1 and np.shape(indices)[0] != 1 else (lambda k: data[k])
    return product(csr_entries(indices, indptr, shape), weight, x, shape, transpose, binary)


def fcn_product(weights, indices, x, shape, transpose, binary):
    weights = np.asarray(weights)
    weight = (lambda ij: weights.reshape(-1)[0]) if weights.size == 1 else (lambda ij: weights[ij])
    return product(fcn_entries(indices, shape), weight, x, shape, transpose, binary)
