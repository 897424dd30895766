"""Warp kernels (cpu and gpu) of the index-list product: one thread per slot of the list.

A thread whose slot is past ``count`` (or lists an index outside the rows)
returns at once; the others add their row's weights into the output with
``atomic_add``, so the work is the events times their row lengths. Row
bounds are clipped to the stored entries; columns outside ``[0, n)`` and
permutation entries outside ``data`` are dropped. An overflowed list
(``count`` past its length) gives NaN everywhere.
"""

# No `from __future__ import annotations`: warp evaluates kernel annotations
# against the factory's local variables, which string annotations cannot see.

import functools

from eventjax.backends.warp import WarpKernelSpec, import_warp
from eventjax.kernels.common.warp.columns import column_access, operand_array
from eventjax.kernels.common.warp.typing import accumulator_type, event_test, index_reader, warp_types

__all__ = ['binary_csrmm_indexed_kernel', 'binary_csrmv_indexed_kernel', 'binary_csrmv_packed_kernel',
           'csr_slice_rows_kernel']


@functools.cache
def _row_span(it):
    """A ``wp.func``: the entries ``[start, end)`` of row ``i``, its pointers clipped to ``[0, nnz]``."""
    wp = import_warp()

    @wp.func
    def row_span(indptr: wp.array(dtype=it), i: int, nnz: int):
        start = wp.min(wp.max(int(indptr[i]), 0), nnz)
        return start, wp.min(wp.max(int(indptr[i + 1]), start), nnz)

    return row_span


@functools.cache
def _entry():
    """A ``wp.func``: the position in ``data`` (of length ``nd``) of entry ``k``'s weight, 0 for one shared weight."""
    wp = import_warp()

    @wp.func
    def entry(k: int, nd: int) -> int:
        return wp.where(nd == 1, 0, k)

    return entry


@functools.cache
def _listed(it, permuted):
    """``wp.func`` s of the index-list kernels: the row of list slot ``s``, and the weight of entry ``k``.

    ``listed_row`` is -1 for a slot past ``count`` or a row outside
    ``[0, m)``; ``weight_at`` is entry 0 for one shared weight, else ``k``
    (``perm[k]`` when ``permuted``), -1 when that is outside ``data``.
    """
    wp = import_warp()
    as_index = index_reader(it)

    @wp.func
    def listed_row(ids: wp.array(dtype=wp.int32), count: wp.array(dtype=wp.int32), s: int, m: int) -> int:
        if s >= count[0]:
            return -1
        i = int(ids[s])
        if i < 0 or i >= m:
            return -1
        return i

    @wp.func
    def weight_at(perm: wp.array(dtype=it), k: int, nd: int) -> int:
        p = k
        if nd == 1:
            p = 0
        elif wp.static(permuted):
            p = as_index(perm[k])
        if p >= nd:
            return -1
        return p

    return listed_row, weight_at


@functools.cache
def _scatter_parts(wt, it, permuted, matrix):
    """``wp.func`` s shared by the mv and mm kernels, on ``out`` 1-d (mv) or 2-d (mm, column ``c``).

    ``fill_nan(out)`` writes NaN everywhere (an overflowed list);
    ``add_row(data, indices, indptr, perm, i, c, out)`` adds row ``i``'s kept
    weights into column ``c`` of ``out`` (ignored for a vector).
    """
    wp = import_warp()
    as_index = index_reader(it)
    at = accumulator_type(wt)
    row_span = _row_span(it)
    _, weight_at = _listed(it, permuted)
    out_t = operand_array(wt, matrix)
    _, store, add = column_access(wt, matrix)

    @wp.func
    def fill_nan(out: out_t):
        if wp.static(matrix):
            width = out.shape[1]
        else:
            width = 1
        for j in range(out.shape[0]):
            for q in range(width):
                store(out, j, q, wt(wp.nan))

    @wp.func
    def add_row(data: wp.array(dtype=wt), indices: wp.array(dtype=it), indptr: wp.array(dtype=it),
                perm: wp.array(dtype=it), i: int, c: int, out: out_t):
        n = out.shape[0]
        se = row_span(indptr, i, indices.shape[0])
        for k in range(se[0], se[1]):
            j = as_index(indices[k])
            p = weight_at(perm, k, data.shape[0])
            if j >= 0 and j < n and p >= 0:
                add(out, j, c, wt(at(data[p])))

    return fill_nan, add_row


@functools.cache
def _scatter(wt, it, permuted):
    wp = import_warp()
    listed_row = _listed(it, permuted)[0]
    fill_nan, add_row = _scatter_parts(wt, it, permuted, False)

    @wp.kernel(module='unique', enable_backward=False)
    def scatter(data: wp.array(dtype=wt), indices: wp.array(dtype=it), indptr: wp.array(dtype=it),
                perm: wp.array(dtype=it), ids: wp.array(dtype=wp.int32), count: wp.array(dtype=wp.int32),
                out: wp.array(dtype=wt)):
        s = wp.tid()
        if count[0] > ids.shape[0]:
            # An overflowed list: NaN everywhere (one thread writes them; overflow is the error case).
            if s == 0:
                fill_nan(out)
            return
        i = listed_row(ids, count, s, indptr.shape[0] - 1)
        if i >= 0:
            add_row(data, indices, indptr, perm, i, 0, out)

    return scatter


def binary_csrmv_indexed_kernel(dtypes, *, shape, permuted, outs):
    """The warp spec for ``binary_csrmv_indexed`` with inputs of ``dtypes``: a thread per slot of ``ids``."""
    wt, it = warp_types(dtypes)[:2]
    return WarpKernelSpec(_scatter(wt, it, permuted), dim=lambda *shapes: shapes[4], zero_outputs=True)


@functools.cache
def _scatter_mm(wt, it, bt, permuted):
    wp = import_warp()
    is_event = event_test(bt)
    listed_row = _listed(it, permuted)[0]
    fill_nan, add_row = _scatter_parts(wt, it, permuted, True)

    @wp.kernel(module='unique', enable_backward=False)
    def scatter_mm(data: wp.array(dtype=wt), indices: wp.array(dtype=it), indptr: wp.array(dtype=it),
                   perm: wp.array(dtype=it), ids: wp.array(dtype=wp.int32), count: wp.array(dtype=wp.int32),
                   B: wp.array2d(dtype=bt), out: wp.array2d(dtype=wt)):
        s, c = wp.tid()  # one thread per (slot, column of B)
        if count[0] > ids.shape[0]:
            if s == 0 and c == 0:  # an overflowed list: NaN everywhere
                fill_nan(out)
            return
        i = listed_row(ids, count, s, indptr.shape[0] - 1)
        if i >= 0 and is_event(B[i, c]):
            add_row(data, indices, indptr, perm, i, c, out)

    return scatter_mm


def binary_csrmm_indexed_kernel(dtypes, *, shape, permuted, outs):
    """The warp spec for ``binary_csrmm_indexed``: a thread per (slot of ``ids``, column of ``B``)."""
    wt, it = warp_types(dtypes)[:2]
    bt = warp_types(dtypes[6:7])[0]
    return WarpKernelSpec(_scatter_mm(wt, it, bt, permuted), dim=lambda *shapes: (shapes[4][0], shapes[6][1]),
                          zero_outputs=True)


@functools.cache
def _slice(wt, it):
    wp = import_warp()
    as_index = index_reader(it)
    at = accumulator_type(wt)

    row_span, entry = _row_span(it), _entry()

    @wp.kernel(module='unique', enable_backward=False)
    def slice_rows(data: wp.array(dtype=wt), indices: wp.array(dtype=it), indptr: wp.array(dtype=it),
                   rows: wp.array(dtype=wp.int32), out: wp.array2d(dtype=wt)):
        s = wp.tid()  # one thread per chosen row: it alone writes out[s]
        i = int(rows[s])
        if i < 0 or i >= indptr.shape[0] - 1:
            return
        n = out.shape[1]
        se = row_span(indptr, i, indices.shape[0])
        for k in range(se[0], se[1]):
            j = as_index(indices[k])
            if j >= 0 and j < n:
                out[s, j] = wt(at(out[s, j]) + at(data[entry(k, data.shape[0])]))

    return slice_rows


def csr_slice_rows_kernel(dtypes, *, shape, outs):
    """The warp spec for ``csr_slice_rows``: a thread per chosen row."""
    wt, it = warp_types(dtypes)[:2]
    return WarpKernelSpec(_slice(wt, it), dim=lambda *shapes: shapes[3], zero_outputs=True)


@functools.cache
def _packed(wt, it, transpose):
    wp = import_warp()
    as_index = index_reader(it)
    at = accumulator_type(wt)

    row_span, entry = _row_span(it), _entry()

    @wp.func
    def bounds(indptr: wp.array(dtype=it), sizes: wp.array(dtype=it), i: int, nnz: int):
        k = int(sizes[2])
        if k > 0:
            return wp.min(i * k, nnz), wp.min(i * k + k, nnz)
        return row_span(indptr, i, nnz)

    @wp.kernel(module='unique', enable_backward=False)
    def scatter(data: wp.array(dtype=wt), indices: wp.array(dtype=it), indptr: wp.array(dtype=it),
                words: wp.array(dtype=wp.uint32), sizes: wp.array(dtype=it), out: wp.array(dtype=wt)):
        q = wp.tid()  # one thread per word: a word without events returns at once
        word = words[q]
        if word == wp.uint32(0):
            return
        m = int(sizes[0])
        n = out.shape[0]
        nnz = indices.shape[0]
        for b in range(32):
            i = q * 32 + b
            if i < m and ((word >> wp.uint32(b)) & wp.uint32(1)) != wp.uint32(0):
                se = bounds(indptr, sizes, i, nnz)
                for e in range(se[0], se[1]):
                    j = as_index(indices[e])
                    if j >= 0 and j < n:
                        wp.atomic_add(out, j, wt(at(data[entry(e, data.shape[0])])))

    @wp.kernel(module='unique', enable_backward=False)
    def gather(data: wp.array(dtype=wt), indices: wp.array(dtype=it), indptr: wp.array(dtype=it),
               words: wp.array(dtype=wp.uint32), sizes: wp.array(dtype=it), out: wp.array(dtype=wt)):
        r = wp.tid()  # one thread per row: it alone writes out[r]
        n = int(sizes[1])
        se = bounds(indptr, sizes, r, indices.shape[0])
        acc = at(0.0)
        for e in range(se[0], se[1]):
            j = as_index(indices[e])
            if j >= 0 and j < n:
                if ((words[j // 32] >> wp.uint32(j % 32)) & wp.uint32(1)) != wp.uint32(0):
                    acc += at(data[entry(e, data.shape[0])])
        out[r] = wt(acc)

    return scatter if transpose else gather


def binary_csrmv_packed_kernel(dtypes, *, shape, fixed, transpose, outs):
    """The warp spec of the bit-packed product: a thread per word (``transpose``) or per row."""
    wt, it = warp_types(dtypes)[:2]
    if transpose:
        return WarpKernelSpec(_packed(wt, it, True), dim=lambda *shapes: shapes[3], zero_outputs=True)
    return WarpKernelSpec(_packed(wt, it, False), dim=shape[0])
