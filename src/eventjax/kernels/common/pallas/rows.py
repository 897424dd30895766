"""Pallas kernels over stored entries grouped in rows: what the CSR and FCN families share.

A matrix ``A`` (``shape=(m, n)``) stores, for each row ``i``, entries ``k``
in ``[start(i), end(i))`` with column ``indices[k]`` and weight
``data[k]`` (or one shared ``data[0]``). CSR takes the row ranges from
``indptr``; FCN has ``k`` entries per row, ``start(i) = i * k``. An entry
whose column is outside ``[0, n)`` contributes nothing.

Every product runs as a matrix product: a vector operand travels as one
column (Triton needs power-of-2 value shapes, so the columns are padded
to a power of 2 and the padding sliced off).

- ``transpose=False`` gathers: one program per block of rows, a loop over
  each row's entries, one store per row. No atomics: it lowers for gpu
  (Triton) and, in principle, anywhere scalar loads at data-dependent
  addresses are allowed.
- ``transpose=True`` scatters ``x[i] * w`` into ``y[indices[k]]`` with
  ``atomic_add`` (the Triton lowering only). Event products visit only the
  rows that carry an event. The output starts as zeros passed in and aliased,
  since programs of different rows add into the same entries.

Event operands become a 0/1 operand before the kernel; the kernel then
*selects* the weight (never multiplies by 0), so a non-event contributes
nothing whatever its weight. float16 accumulates in float32.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl

from eventjax.kernels.common.events import accumulation_dtype, event_indicator

__all__ = ['add_into_row', 'row_product_call', 'row_product_kernels', 'triton_params']

_ROWS_PER_PROGRAM = 8


def _next_pow2(n: int) -> int:
    return 1 << max(0, (n - 1).bit_length())


def _row_bounds(i, indptr_ref, row_length, nnz):
    if row_length is None:
        # The operator repairs indptr before binding; the clip only guarantees
        # that no indptr, repaired or not, makes the kernel read past the entries.
        return jnp.clip(indptr_ref[i], 0, nnz), jnp.clip(indptr_ref[i + 1], 0, nnz)
    return i * row_length, (i + 1) * row_length


def _contribution(w, xi, events):
    if events:
        return jnp.where(xi > 0, w, jnp.zeros((), w.dtype))
    return w * xi


def _gather_body(m, n, row_length, homogeneous, events, acc):
    def body(*refs):
        if row_length is None:
            data_ref, indices_ref, indptr_ref, x_ref, y_ref = refs
        else:
            (data_ref, indices_ref, x_ref, y_ref), indptr_ref = refs, None
        cols = y_ref.shape[1]
        base = pl.program_id(0) * _ROWS_PER_PROGRAM

        def row(r, carry):
            i = base + r

            @pl.when(i < m)
            def _():
                start, end = _row_bounds(i, indptr_ref, row_length, indices_ref.shape[0])

                def entry(k, total):
                    j = indices_ref[k]
                    ok = (j >= 0) & (j < n)
                    xj = x_ref[jnp.where(ok, j, 0), :]
                    w = data_ref[0 if homogeneous else k].astype(acc)
                    return total + jnp.where(ok, _contribution(w, xj, events), jnp.zeros((), acc))

                total = lax.fori_loop(start, end, entry, jnp.zeros((cols,), acc))
                y_ref[i, :] = total.astype(y_ref.dtype)
            return carry

        lax.fori_loop(0, _ROWS_PER_PROGRAM, row, 0)
    return body


def _scatter_body(m, n, row_length, homogeneous, events, acc):

    def body(*refs):
        if row_length is None:
            data_ref, indices_ref, indptr_ref, x_ref, _zeros_ref, y_ref = refs
        else:
            (data_ref, indices_ref, x_ref, _zeros_ref, y_ref), indptr_ref = refs, None
        base = pl.program_id(0) * _ROWS_PER_PROGRAM

        def row(r, carry):
            i = base + r
            xi = x_ref[jnp.minimum(i, m - 1), :]
            # Event rows only (xi is 0/1 there): a row without events adds nothing.
            # max, not any: Triton lowers no reduce_or.
            visit = (i < m) & (jnp.max(xi) > 0 if events else True)

            @pl.when(visit)
            def _():
                start, end = _row_bounds(i, indptr_ref, row_length, indices_ref.shape[0])

                def entry(k, carry):
                    j = indices_ref[k]
                    w = data_ref[0 if homogeneous else k].astype(acc)

                    # One row per atomic under pl.when, not a masked vector of
                    # targets: interpret mode implements neither masks nor
                    # duplicate targets in one atomic_add.
                    @pl.when((j >= 0) & (j < n))
                    def _():
                        add_into_row(y_ref, j, _contribution(w, xi, events))
                    return carry

                lax.fori_loop(start, end, entry, 0)
            return carry

        lax.fori_loop(0, _ROWS_PER_PROGRAM, row, 0)
    return body


def add_into_row(y_ref, row, value) -> None:
    """``y_ref[row, :] += value`` with Triton's ``atomic_add``, under ``jax_enable_x64`` too.

    The row index takes the dtype of JAX's Python ints (int64 with x64 on):
    the whole-row slice's start is one, and the atomic's interpret-mode rule
    needs every index of one dtype.
    """
    from jax.experimental.pallas import triton as plgpu  # noqa: PLC0415 - Triton only where a kernel runs

    row = lax.convert_element_type(row, jax.dtypes.canonicalize_dtype(jnp.int64))
    plgpu.atomic_add(y_ref, (row, slice(None)), value)


def triton_params():
    """Compile with Triton: JAX picks Mosaic GPU by default, which has no ``atomic_add``."""
    from jax.experimental.pallas import triton as plgpu
    return plgpu.CompilerParams()


def row_product_call(*, shape, transpose, events, out, fixed_rows=False):
    """Build ``call(data, indices, [indptr,] x, *, interpret)`` for a row-stored product.

    Args:
        shape: ``(m, n)`` of the matrix.
        transpose: scatter ``x @ A`` (atomics, gpu) instead of gathering ``A @ x``.
        events: ``x`` holds events (True or > 0), each counting 1.
        out: the ``jax.ShapeDtypeStruct`` of the result (1-D for mv, 2-D for mm).
        fixed_rows: FCN: ``indices`` is ``(m, k)``, row ``i`` owns entries
            ``[i * k, (i + 1) * k)`` and no ``indptr`` is passed. Else CSR.

    Returns:
        The call the pallas bridge expects; ``data`` is per entry or shape ``(1,)``.

    Example:
        >>> import jax, jax.numpy as jnp
        >>> out = jax.ShapeDtypeStruct((2,), jnp.float32)
        >>> call = row_product_call(shape=(2, 2), transpose=False, events=False, out=out)
        >>> call(jnp.array([1., 2., 3.]), jnp.array([0, 1, 1]), jnp.array([0, 2, 3]),
        ...      jnp.array([1., 10.]), interpret=True)
        Array([21., 30.], dtype=float32)
    """
    m, n = shape
    acc = accumulation_dtype(out.dtype)
    matrix = len(out.shape) == 2

    def call(*arrays, interpret):
        data, indices, *rest = arrays
        indptr, x = (None, rest[0]) if fixed_rows else rest
        row_length = indices.shape[1] if fixed_rows else None
        if x.ndim == 1:
            x = x[:, None]
        cols = x.shape[1]
        size = n if transpose else m
        if m == 0 or n == 0 or cols == 0 or indices.size == 0:
            return jnp.zeros(out.shape, out.dtype)
        data, indices = data.reshape(-1), indices.reshape(-1)
        homogeneous = data.shape[0] == 1
        xv = event_indicator(x, acc) if events else x.astype(acc)
        padded = _next_pow2(cols)
        if padded != cols:
            xv = jnp.pad(xv, ((0, 0), (0, padded - cols)))
        grid = (pl.cdiv(m, _ROWS_PER_PROGRAM),)
        structure = (data, indices) if indptr is None else (data, indices, indptr)
        if transpose:
            body = _scatter_body(m, n, row_length, homogeneous, events, acc)
            zeros = jnp.zeros((size, padded), acc)
            y = pl.pallas_call(
                body, out_shape=jax.ShapeDtypeStruct((size, padded), acc), grid=grid,
                input_output_aliases={len(structure) + 1: 0}, interpret=interpret,
                compiler_params=triton_params(),
            )(*structure, xv, zeros)
        else:
            body = _gather_body(m, n, row_length, homogeneous, events, acc)
            y = pl.pallas_call(
                body, out_shape=jax.ShapeDtypeStruct((size, padded), out.dtype), grid=grid,
                interpret=interpret, compiler_params=triton_params(),
            )(*structure, xv)
        y = y[:, :cols].astype(out.dtype)
        return y if matrix else y[:, 0]

    return call


def row_product_kernels(*, fixed_rows: bool):
    """The generators ``(float, binary)`` ``kg(*, shape, transpose, outs)`` of a family's products.

    Each serves mv and mm: the output's rank says which (see :func:`row_product_call`).

    Example:
        >>> fcnmv_kernel, binary_fcnmv_kernel = row_product_kernels(fixed_rows=True)
    """
    def variant(events: bool):
        def kernel(*, shape, transpose, outs):
            return row_product_call(shape=shape, transpose=transpose, events=events, out=outs[0],
                                    fixed_rows=fixed_rows)
        return kernel
    return variant(False), variant(True)
