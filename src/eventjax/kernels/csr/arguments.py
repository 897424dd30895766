"""Argument checks shared by the CSR operators: shapes and dtypes, and concrete structure by value."""

from __future__ import annotations

from eventjax.kernels.common.checks import (
    check_csr_operands,
    check_product_operand,
    check_shape,
    check_transpose,
    is_concrete,
    repair_indptr,
    validate_csr_structure,
)
from eventjax.kernels.common.units import attach, split_product

__all__ = ['check_csr_call', 'checked_call', 'repair_structure']


def check_csr_call(who, data, indices, indptr, x, *, shape, transpose, matrix, events, validate=True):
    """Validate a CSR product's operands; returns ``(data, indices, indptr, x, shape)``.

    ``data`` becomes shape ``(1,)`` when given as a scalar; ``indptr`` takes
    the dtype of ``indices``. A float product casts ``data`` and ``x`` to
    their promoted dtype (JAX's rules); a binary one keeps ``data``'s dtype.
    Concrete structure is checked by value when ``validate``; otherwise (or
    when traced) every backend drops bad structure the same way: ``indptr``
    is repaired (see :func:`~eventjax.kernels.common.checks.repair_indptr`)
    before the kernel, or by the numba and cpp kernels inside.
    """
    m, n = check_shape(who, shape)
    check_transpose(who, transpose)
    given = data
    data, indices, indptr = check_csr_operands(who, data, indices, indptr, (m, n))
    data, x = check_product_operand(who, data, given, x, shape=(m, n), transpose=transpose, matrix=matrix,
                                    events=events)
    if validate and is_concrete(indices, indptr):
        validate_csr_structure(who, indices, indptr, n)
    return data, indices, indptr, x, (m, n)


def repair_structure(data, indices, indptr, x):
    """The operators' ``prepare`` step: ``indptr`` repaired so every kernel drops the same entries.

    The numba and cpp kernels do the same repair inside (see ``numba_impl.trusted_indptr``).
    """
    return data, indices, repair_indptr(indptr, indices.shape[0]), x


def checked_call(op, data, indices, indptr, x, *, shape, transpose, backend, validate):
    """Check a CSR product's operands for the declared operator ``op``, then bind it."""
    data, x, unit = split_product(data, x)
    data, indices, indptr, x, shape = check_csr_call(
        f'{op.name}()', data, indices, indptr, x, shape=shape, transpose=transpose, matrix=op.matrix,
        events=op.events, validate=validate)
    return attach(op.bind(data, indices, indptr, x, shape=shape, transpose=transpose, backend=backend), unit)
