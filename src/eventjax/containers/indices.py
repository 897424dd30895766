"""Index conversions between the coordinate (COO), row (CSR) and column (CSC) forms.

These are how connectivity gets in from ``scipy.sparse``, NetworkX or an
edge list. Each takes and returns index arrays only; a permutation comes
back with them so the caller reorders its weights the same way
(``data[order]``). NumPy input gives NumPy output (nothing is traced, so a
model's set-up does not compile anything); JAX input gives JAX output and
the conversions trace under ``jit`` (sizes depend only on shapes).

Entries keep their relative order within a row (CSR) or column (CSC): the
sorts are stable. A coordinate outside the shape raises ``ValueError`` on
concrete input; traced, its entry is moved past the last row (column),
where every product drops it (see :doc:`/semantics`).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from eventjax.kernels.common.checks import is_concrete, validate_csr_structure, validate_indptr

__all__ = ['coo2csr', 'coo_to_csc_index', 'csc_to_csr_index', 'csr_to_coo_index', 'csr_to_csc_index']


def _module(*arrays):
    return np if all(isinstance(a, np.ndarray) for a in arrays) else jnp


def _index_dtype(xp, size: int):
    """int32 while every offset fits, else int64 (JAX needs ``jax_enable_x64`` for that)."""
    if size < np.iinfo(np.int32).max:
        return np.int32
    if xp is jnp and not jax.config.jax_enable_x64:
        raise ValueError(f'{size} stored entries need int64 offsets; enable them with '
                         "jax.config.update('jax_enable_x64', True), or pass NumPy arrays.")
    return np.int64


def _check_coords(who, name, coords, bound, what):
    if np.ndim(coords) != 1:
        raise ValueError(f'{who}: {name} must be a 1-D array (one coordinate per entry), got shape '
                         f'{np.shape(coords)}.')
    dtype = coords.dtype if hasattr(coords, 'dtype') else np.asarray(coords).dtype  # lists too
    if not np.issubdtype(dtype, np.integer):
        raise TypeError(f'{who}: {name} must hold integers, got dtype {dtype}.')
    if is_concrete(coords):
        c = np.asarray(coords)
        bad = np.flatnonzero((c < 0) | (c >= bound))
        if bad.size:
            raise ValueError(f'{who}: {name}[{bad[0]}] = {c[bad[0]]} is outside [0, {bound}) ({what} of shape); '
                             f'drop that entry or enlarge shape.')


def _group(who, xp, major, minor, n_major: int, names, *, check=True):
    """Sort the entries by ``major`` (stably): ``(indptr, minor in that order, order)``."""
    if check:
        _check_coords(who, names[0], major, n_major, 'rows' if names[0] == 'row_ids' else 'the leading axis')
    major, minor = xp.asarray(major).reshape(-1), xp.asarray(minor).reshape(-1)
    if major.shape != minor.shape:
        raise ValueError(f'{who}: {names[0]} and {names[1]} must have the same length, got {major.shape[0]} '
                         f'and {minor.shape[0]}.')
    for arr, name in zip((major, minor), names):
        if not np.issubdtype(arr.dtype, np.integer):
            raise TypeError(f'{who}: {name} must hold integers, got dtype {arr.dtype}.')
    dtype = _index_dtype(xp, major.shape[0])
    # An out-of-range coordinate (traced input) sorts past the end, owned by no row.
    key = xp.where((major >= 0) & (major < n_major), major, n_major)
    if xp is np:
        order = np.argsort(key, kind='stable').astype(dtype)
        counts = np.bincount(key, minlength=n_major + 1)[:n_major]
    else:
        order = jnp.argsort(key, stable=True).astype(dtype)
        counts = jnp.bincount(key, length=n_major + 1)[:n_major]
    indptr = xp.concatenate([xp.zeros(1, dtype), xp.cumsum(counts).astype(dtype)])
    return indptr, minor[order].astype(np.int32), order


def _entry_rows(who, indptr, indices):
    """``(row of each entry, indices)``; concrete row pointers are checked first."""
    xp = _module(indptr, indices)
    indptr, indices = xp.asarray(indptr), xp.asarray(indices)
    for arr, name in ((indptr, 'indptr'), (indices, 'indices')):
        if not np.issubdtype(arr.dtype, np.integer) or arr.ndim != 1:
            raise TypeError(f'{who}: {name} must be a 1-D integer array, got {arr.dtype} of shape {arr.shape}.')
    if indptr.shape[0] == 0:
        raise ValueError(f'{who}: indptr must hold at least one entry (rows + 1), got none.')
    nnz = indices.shape[0]
    if is_concrete(indptr):
        # searchsorted assumes sorted row pointers: bad ones would put entries in rows they are not in.
        validate_indptr(who, indptr, nnz, skip='')
    rows = xp.searchsorted(indptr[1:], xp.arange(nnz, dtype=indptr.dtype), side='right')
    return rows.astype(np.int32 if nnz < np.iinfo(np.int32).max else indptr.dtype), indices


def _coo_index(who, major, minor, shape, names, *, by_column: bool):
    """The entries grouped by ``major``, their rows (``by_column``: their columns) in ``shape``; ``minor`` checked."""
    m, n = (int(d) for d in shape)
    n_major, n_minor = (n, m) if by_column else (m, n)
    _check_coords(who, names[1], minor, n_minor, 'rows' if by_column else 'columns')
    return _group(who, _module(major, minor), major, minor, n_major, names)


def _transposed_index(who, indptr, indices, shape, *, from_csc: bool):
    """The compressed index of the transpose: ``major`` rows of ``minor`` columns become ``minor`` rows."""
    m, n = (int(d) for d in shape)
    # A CSC structure of (m, n) is the CSR structure of the (n, m) transpose.
    major, minor, names = (n, m, ('columns', 'rows')) if from_csc else (m, n, ('rows', 'columns'))
    if np.shape(indptr) != (major + 1,):
        raise ValueError(f'{who}: indptr must have length {major + 1} ({names[0]} of shape + 1), got shape '
                         f'{np.shape(indptr)}.')
    if is_concrete(indptr, indices):
        validate_csr_structure(who, np.asarray(indices), indptr, minor, what=f'the {names[1]} of shape', skip='')
    rows, cols = _entry_rows(who, indptr, indices)
    xp = _module(rows, cols)
    # Entries past indptr[-1] belong to no row: they sort past the last column, where products drop them.
    cols = xp.where(rows < major, cols, minor)
    return _group(who, xp, cols, rows, minor, ('indices', 'rows'), check=False)


def coo2csr(row_ids, col_ids, *, shape):
    """The CSR structure of entries given by coordinates.

    Args:
        row_ids, col_ids: the row and column of each entry (same length).
        shape: ``(m, n)``.

    Returns:
        ``(indptr, indices, order)``: ``indptr`` of length ``m + 1``, the
        column indices grouped by row, and the permutation that puts the
        entries in that order (the weights in CSR order are ``data[order]``).

    Example:
        >>> import numpy as np
        >>> import eventjax as ej
        >>> indptr, indices, order = ej.coo2csr(np.array([1, 0, 1]), np.array([2, 0, 1]), shape=(2, 3))
        >>> indptr, indices, order
        (array([0, 1, 3], dtype=int32), array([0, 2, 1], dtype=int32), array([1, 0, 2], dtype=int32))
    """
    return _coo_index('coo2csr()', row_ids, col_ids, shape, ('row_ids', 'col_ids'), by_column=False)


def csr_to_coo_index(indptr, indices):
    """The row and column of every stored entry of a CSR structure.

    Returns:
        ``(row_ids, col_ids)``; ``col_ids`` is ``indices`` itself. Entries
        past ``indptr[-1]`` belong to no row and get row ``m`` (past the end).

    Example:
        >>> import numpy as np
        >>> import eventjax as ej
        >>> ej.csr_to_coo_index(np.array([0, 2, 3]), np.array([0, 2, 1]))
        (array([0, 0, 1], dtype=int32), array([0, 2, 1]))
    """
    return _entry_rows('csr_to_coo_index()', indptr, indices)


def coo_to_csc_index(pre_ids, indices, *, shape):
    """The CSC structure of entries given by coordinates (``pre_ids`` rows, ``indices`` columns).

    Returns:
        ``(indptr, row_indices, order)``: ``indptr`` of length ``n + 1``,
        the rows grouped by column, and the permutation to CSC order.

    Example:
        >>> import numpy as np
        >>> import eventjax as ej
        >>> ej.coo_to_csc_index(np.array([0, 0, 1]), np.array([1, 0, 1]), shape=(2, 2))[0]
        array([0, 1, 3], dtype=int32)
    """
    return _coo_index('coo_to_csc_index()', indices, pre_ids, shape, ('indices', 'pre_ids'), by_column=True)


def csr_to_csc_index(csr_indptr, csr_indices, *, shape):
    """The CSC structure of the same matrix as a CSR structure.

    Returns:
        ``(csc_indptr, csc_indices, order)``: the weights in CSC order are
        ``data[order]``.

    Example:
        >>> import numpy as np
        >>> import eventjax as ej
        >>> indptr, rows, order = ej.csr_to_csc_index(np.array([0, 2, 3]), np.array([0, 1, 0]), shape=(2, 2))
        >>> indptr, rows, order
        (array([0, 2, 3], dtype=int32), array([0, 1, 0], dtype=int32), array([0, 2, 1], dtype=int32))
    """
    return _transposed_index('csr_to_csc_index()', csr_indptr, csr_indices, shape, from_csc=False)


def csc_to_csr_index(csc_indptr, csc_indices, *, shape):
    """The CSR structure of the same matrix as a CSC structure (``shape`` is the matrix's ``(m, n)``).

    Returns:
        ``(csr_indptr, csr_indices, order)``: the weights in CSR order are ``data[order]``.

    Example:
        >>> import numpy as np
        >>> import eventjax as ej
        >>> ej.csc_to_csr_index(np.array([0, 2, 3]), np.array([0, 1, 0]), shape=(2, 2))[0]
        array([0, 2, 3], dtype=int32)
    """
    return _transposed_index('csc_to_csr_index()', csc_indptr, csc_indices, shape, from_csc=True)
