"""``csr_sddmm``: a sampled dense-dense product, ``a @ b`` at the stored entries of a CSR matrix only."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from eventjax.kernels.common.checks import check_rank, dtype_of
from eventjax.kernels.common.operator import Declaration
from eventjax.kernels.common.units import attach, split_product
from eventjax.kernels.dt2t.arguments import check_structure
from eventjax.kernels.dt2t.rules import SDDMM_OPERANDS, register_sddmm_rules

__all__ = ['csr_sddmm']


def csr_sddmm(a, b, indices, indptr, *, shape, backend=None, validate=True):
    """``(a @ b)[i, j]`` for each stored entry ``(i, j)`` of a CSR structure (``shape=(m, n)``), in entry order.

    Costs entries x ``k`` multiply-adds, never the ``m x n`` product. An
    entry of no row, or (unvalidated) with a column outside ``[0, n)``,
    gives 0. Differentiable in ``a`` and ``b``; float16 sums in float32;
    units multiply. ``CSR.sddmm`` returns the result as a CSR matrix with
    the same structure (the gradient of a CSR product with respect to its
    weights has this form).

    Args:
        a: ``(m, k)`` float.
        b: ``(k, n)`` float.
        indices, indptr: the CSR structure (as in :func:`eventjax.csrmv`).
        shape: ``(m, n)``.
        backend: per-call backend, or None.
        validate: check concrete structure by value.

    Returns:
        ``(nnz,)`` in the promoted dtype of ``a`` and ``b``.

    Example:
        >>> import jax.numpy as jnp
        >>> import eventjax as ej
        >>> a, b = jnp.array([[1., 2.], [3., 4.]]), jnp.array([[1., 0.], [0., 1.]])
        >>> ej.csr_sddmm(a, b, jnp.array([1, 0]), jnp.array([0, 1, 2]), shape=(2, 2))
        Array([2., 3.], dtype=float32)
    """
    who = 'csr_sddmm()'
    a, b, unit = split_product(a, b)
    indices, indptr, (m, n) = check_structure(who, indices, indptr, shape=shape, validate=validate)
    check_rank(who, 'a', a, (2,))
    check_rank(who, 'b', b, (2,))
    for name, x in (('a', a), ('b', b)):
        if dtype_of(x).name not in ('float16', 'float32', 'float64'):
            raise TypeError(f'{who}: {name} must be a float16, float32 or float64 array, got {dtype_of(x).name}.')
    if a.shape[0] != m or b.shape[1] != n or a.shape[1] != b.shape[0]:
        raise ValueError(f'{who}: a must be ({m}, k) and b (k, {n}) for shape ({m}, {n}), '
                         f'got a {a.shape} and b {b.shape}.')
    dtype = jnp.result_type(a, b)
    # The kernels read b by column: transposed once here, each entry reads one contiguous row.
    out = _bind(jnp.asarray(a, dtype), jnp.asarray(b, dtype).T, indices, indptr, shape=(m, n), backend=backend)
    return attach(out, unit)


def _bind(a, bt, indices, indptr, *, shape, backend=None):
    if indices.shape[0] == 0 or shape[0] == 0 or shape[1] == 0 or a.shape[1] == 0:
        return jnp.zeros(indices.shape, a.dtype)
    return _csr_sddmm.bind(a, bt, indices, indptr, backend=backend, shape=tuple(shape))


def _out(a, bt, indices, indptr, **static):
    return jax.ShapeDtypeStruct(indices.shape, a.dtype)


_csr_sddmm = Declaration('csr_sddmm', __package__, SDDMM_OPERANDS, out=_out,
                         rules=lambda declaration: register_sddmm_rules(declaration.primitive, _bind),
                         kernels=('numba', 'warp', 'pallas'))
