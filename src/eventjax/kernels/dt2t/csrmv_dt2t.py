"""``csrmv_dt2t``: one value per stored CSR entry, its value times its row's (column's) ``y``."""

from __future__ import annotations

from eventjax.kernels.dt2t.csr_dt2t import per_entry
from eventjax.kernels.dt2t.csrmm_dt2t import csrmm_dt2t

# csrmm_dt2t and per_entry stay importable from here, where they used to live.
__all__ = ['csrmm_dt2t', 'csrmv_dt2t', 'per_entry']


def csrmv_dt2t(y, w, indices, indptr, *, shape, transpose=False, backend=None, validate=True):
    """One value per stored entry of a CSR matrix ``A`` (``shape=(m, n)``): ``w[e] * y[row(e)]``.

    With ``transpose=True`` each entry reads ``y`` at its column instead,
    ``w[e] * y[indices[e]]``. The result has one value per entry of
    ``indices``, in their order; an entry of no row, or (unvalidated)
    with a column outside ``[0, n)``, gives 0. A bool ``y`` is events: the
    value is ``w[e]`` where there is an event and 0 elsewhere, and with
    ``transpose=False`` the CPU kernels read the weights of the event rows
    only. Units multiply (brainevent keeps only ``w``'s unit here).
    Differentiable in ``w`` and ``y`` (forward and reverse); a vmap over
    ``w`` and ``y`` is one :func:`csrmm_dt2t` call.

    Args:
        y: length ``m`` (``n`` when ``transpose``), float or bool.
        w: one value per stored entry (``(nnz,)``), or one shared scalar.
        indices, indptr, shape, backend, validate: as in :func:`eventjax.csrmv`.
        transpose: read ``y`` at each entry's column instead of its row.

    Returns:
        ``(nnz,)`` in the promoted dtype of ``w`` and ``y`` (``w``'s for events).

    Example:
        >>> import jax.numpy as jnp
        >>> import eventjax as ej
        >>> w, indices, indptr = jnp.array([1., 2., 3.]), jnp.array([0, 1, 1]), jnp.array([0, 2, 3])
        >>> ej.csrmv_dt2t(jnp.array([10., 100.]), w, indices, indptr, shape=(2, 2))
        Array([ 10.,  20., 300.], dtype=float32)
        >>> ej.csrmv_dt2t(jnp.array([False, True]), w, indices, indptr, shape=(2, 2), transpose=True)
        Array([0., 2., 3.], dtype=float32)
    """
    return per_entry('csrmv_dt2t()', y, w, indices, indptr, shape=shape, transpose=transpose, matrix=False,
                     backend=backend, validate=validate)
