"""Argument checks shared by every kernel family.

Most checks run at trace time on shapes and dtypes only and raise a
``TypeError`` (wrong kind of value or dtype) or ``ValueError`` (wrong shape,
rank or value) whose message names the function, the argument, what was
expected and what came, e.g. ``csrmv(): indptr must have length 11 (rows +
1), got 10.`` Concrete index structure is also checked by value
(:func:`validate_csr_structure`, :func:`validate_fcn_indices`); the rules are
those of the Semantics page of the docs (``docs/semantics.rst``).
"""

from __future__ import annotations

import operator

import jax
import jax.numpy as jnp
import numpy as np

from eventjax.kernels.common.eager import is_concrete, one_program_when_eager

__all__ = [
    'check_csr_operands',
    'check_product_operand',
    'check_transpose',
    'check_events',
    'check_float_operand',
    'check_index_array',
    'check_index_capacity',
    'check_length',
    'check_rank',
    'check_shape',
    'check_x_layout',
    'check_weights',
    'dtype_of',
    'float_result_dtype',
    'is_concrete',
    'repair_indptr',
    'running_sum',
    'validate_csr_structure',
    'validate_fcn_indices',
    'validate_indptr',
]

WEIGHT_DTYPES = ('float16', 'float32', 'float64')


def dtype_of(x, who: str = 'eventjax', name: str = 'the operand') -> np.dtype:
    """The dtype of an array or Python scalar, as JAX will see it.

    A list or tuple is refused as JAX refuses it, but by argument name (JAX's
    own message, "Cannot determine dtype of [...]", names neither).
    """
    if isinstance(x, (list, tuple)):
        raise TypeError(f'{who}: {name} must be an array or a scalar, got a {type(x).__name__}; wrap it with '
                        f'jnp.asarray({name}).')
    return np.dtype(jnp.result_type(x))


def check_shape(who: str, shape) -> tuple[int, int]:
    """``shape`` as a pair of non-negative Python ints.

    Example:
        >>> check_shape('csrmv()', (3, 4))
        (3, 4)
    """
    try:
        pair = tuple(operator.index(d) for d in shape)
    except TypeError:
        pair = None
    if pair is None or len(pair) != 2 or min(pair) < 0:
        raise ValueError(f'{who}: shape must be a pair of non-negative ints (rows, cols), got {shape!r}.')
    return pair


def check_rank(who: str, name: str, x, ranks: tuple[int, ...]) -> None:
    """``x`` has one of ``ranks``."""
    if jnp.ndim(x) not in ranks:
        want = ' or '.join(str(r) for r in ranks)
        raise ValueError(f'{who}: {name} must have rank {want}, got rank {jnp.ndim(x)} '
                         f'(shape {jnp.shape(x)}).')


def check_length(who: str, name: str, x, length: int, what: str, axis: int = 0) -> None:
    """``x.shape[axis] == length``; ``what`` says where the length comes from."""
    got = jnp.shape(x)[axis]
    if got == length:
        return
    if jnp.ndim(x) == 1:
        raise ValueError(f'{who}: {name} must have length {length} ({what}), got {got}.')
    raise ValueError(f'{who}: {name} must have shape[{axis}] == {length} ({what}), '
                     f'got shape {jnp.shape(x)}.')


def check_weights(who: str, name: str, x):
    """Float weights as an array; a scalar becomes shape ``(1,)`` (homogeneous).

    Example:
        >>> check_weights('csrmv()', 'data', 0.5).shape
        (1,)
    """
    dtype = dtype_of(x, who, name)
    if dtype.name not in WEIGHT_DTYPES:
        raise TypeError(f'{who}: {name} must be a float16, float32 or float64 array, got {dtype.name}; '
                        f'cast it, e.g. {name}.astype(jnp.float32).')
    x = jnp.asarray(x, dtype)
    return x.reshape(1) if x.ndim == 0 else x


def check_index_array(who: str, name: str, x, rank: int = 1):
    """An int32 or int64 array of the given rank.

    int64 values given while ``jax_enable_x64`` is off become int32 in JAX;
    a value that does not fit would silently become another index, so it is
    refused here instead.
    """
    dtype = np.dtype(x.dtype) if isinstance(x, np.ndarray) else dtype_of(x, who, name)
    if dtype.name not in ('int32', 'int64'):
        raise TypeError(f'{who}: {name} must be an int32 or int64 array, got {dtype.name}; '
                        f'cast it, e.g. {name}.astype(jnp.int32).')
    check_rank(who, name, x, (rank,))
    if dtype == np.int64 and isinstance(x, np.ndarray) and not jax.config.jax_enable_x64:
        _check_fits_int32(who, name, x)
        return jnp.asarray(x.astype(np.int32))
    return jnp.asarray(x)


def _check_fits_int32(who, name, x):
    info = np.iinfo(np.int32)
    if x.size == 0 or (x.min() >= info.min and x.max() <= info.max):
        return
    k = int(np.flatnonzero(((x < info.min) | (x > info.max)).reshape(-1))[0])
    pos = np.unravel_index(k, x.shape)
    where = ', '.join(str(int(p)) for p in pos)
    raise ValueError(f'{who}: {name}[{where}] = {x[pos]} does not fit int32, and JAX runs int64 indices as '
                     f'int32 while jax_enable_x64 is off; fix the index, or enable 64-bit indices with '
                     f"jax.config.update('jax_enable_x64', True).")


def check_index_capacity(who: str, shape: tuple[int, ...], index_dtype) -> None:
    """Every dimension of ``shape`` (rows, columns) fits ``index_dtype``.

    Example:
        >>> check_index_capacity('csrmv()', (10, 2**31), jnp.int32)
        Traceback (most recent call last):
        ...
        ValueError: csrmv(): shape[1] = 2147483648 (columns) does not fit the int32 indices...
    """
    limit = np.iinfo(np.dtype(index_dtype)).max
    for axis, (d, what) in enumerate(zip(shape, ('rows', 'columns'))):
        if d > limit:
            raise ValueError(f'{who}: shape[{axis}] = {d} ({what}) does not fit the {np.dtype(index_dtype).name} '
                             f'indices (at most {limit}); pass int64 indices and indptr with '
                             f"jax.config.update('jax_enable_x64', True).")


def check_events(who: str, name: str, x):
    """Events: a bool array or a numeric one (entries > 0 are events).

    Floats no kernel language has (bfloat16, the float8 types) are widened
    to float32 here, outside the primitive: exact, so the events are the
    same, every backend gets a dtype it can read, and a gradient with
    respect to the events still comes back in their own dtype.

    Example:
        >>> check_events('f()', 'spikes', jnp.array([1.0, 0.0], jnp.bfloat16)).dtype
        dtype('float32')
    """
    dtype = dtype_of(x, who, name)
    if not (dtype == np.bool_ or jnp.issubdtype(dtype, jnp.floating) or jnp.issubdtype(dtype, jnp.integer)):
        raise TypeError(f'{who}: {name} must be a bool, integer or float array of events, got {dtype.name}.')
    x = jnp.asarray(x)
    if jnp.issubdtype(dtype, jnp.floating) and dtype.name not in WEIGHT_DTYPES:
        x = x.astype(jnp.float32)
    return x


def float_result_dtype(who: str, name: str, weights, x) -> np.dtype:
    """The result dtype of a float product: JAX's promotion of the weights and ``x``.

    Under ``jax_numpy_dtype_promotion='strict'`` a mixed pair raises JAX's own
    error. Never narrower than either operand: float16 weights times a float32
    vector give float32.

    Example:
        >>> with jax.numpy_dtype_promotion('standard'):
        ...     float_result_dtype('csrmv()', 'v', jnp.ones(2, jnp.float16), jnp.ones(2, jnp.float32))
        dtype('float32')
        >>> float_result_dtype('csrmv()', 'v', 0.5, jnp.ones(2, jnp.float16))  # a Python scalar is weak
        dtype('float16')
    """
    got = dtype_of(x, who, name)
    if not (jnp.issubdtype(got, jnp.floating) or jnp.issubdtype(got, jnp.integer) or got == np.bool_):
        raise TypeError(f'{who}: {name} must be a real numeric array, got {got.name}.')
    return np.dtype(jnp.result_type(weights, x))


def check_float_operand(who: str, name: str, x, dtype: np.dtype):
    """A numeric operand of a float product, cast to the result ``dtype``.

    The cast happens outside the primitive, so autodiff returns tangents in
    the operand's own dtype.
    """
    got = dtype_of(x, who, name)
    if not (jnp.issubdtype(got, jnp.floating) or jnp.issubdtype(got, jnp.integer) or got == np.bool_):
        raise TypeError(f'{who}: {name} must be a real numeric array, got {got.name}.')
    return jnp.asarray(x).astype(dtype)


_SKIP = 'validate=False skips this check and drops such entries instead (see the Semantics page).'


def validate_indptr(who: str, indptr, nnz: int, *, skip: str = _SKIP) -> None:
    """Check concrete row pointers: they start at 0, never decrease and end at most at ``nnz``.

    ``skip`` ends each message (what ``validate=False`` would do instead; empty where there is none).
    """
    ip = np.asarray(indptr)
    if ip[0] != 0:
        raise ValueError(f'{who}: indptr[0] must be 0, got {ip[0]}; indptr[i] is where row i starts. {skip}'.rstrip())
    steps = np.diff(ip)
    if steps.size and steps.min() < 0:
        i = int(np.flatnonzero(steps < 0)[0]) + 1
        raise ValueError(f'{who}: indptr must never decrease, but indptr[{i}] = {ip[i]} < indptr[{i - 1}] = '
                         f'{ip[i - 1]}; fix the row pointers. {skip}'.rstrip())
    if ip[-1] > nnz:
        raise ValueError(f'{who}: indptr[-1] = {ip[-1]} is past the end of indices (length {nnz}); '
                         f'indptr[-1] must be at most len(indices). {skip}'.rstrip())


def validate_csr_structure(who: str, indices, indptr, n: int, *, what: str = 'the columns of shape',
                           skip: str = _SKIP) -> None:
    """Check concrete CSR structure by value; raises ``ValueError`` at the first bad position.

    ``indptr`` must start at 0, never decrease and end at most at
    ``len(indices)``; every column index of an entry that belongs to a row
    (``indices[:indptr[-1]]``) must lie in ``[0, n)`` (``what`` names ``n``).

    Example:
        >>> validate_csr_structure('csrmv()', np.array([0, 7]), np.array([0, 1, 2]), 3)
        Traceback (most recent call last):
        ...
        ValueError: csrmv(): indices[1] = 7 is outside [0, 3) (the columns of shape)...
    """
    validate_indptr(who, indptr, int(np.shape(indices)[0]), skip=skip)
    used = np.asarray(indices)[: int(np.asarray(indptr)[-1])]
    if used.size and (used.min() < 0 or used.max() >= n):
        k = int(np.flatnonzero((used < 0) | (used >= n))[0])
        raise ValueError(f'{who}: indices[{k}] = {used[k]} is outside [0, {n}) ({what}); fix '
                         f'the index or the shape. {skip}'.rstrip())


def validate_fcn_indices(who: str, indices, n: int) -> None:
    """Check concrete FCN ``indices`` (``(m, k)``) by value: every index lies in ``[0, n)``.

    Example:
        >>> validate_fcn_indices('fcnmv()', np.array([[0, 1], [3, 0]]), 3)
        Traceback (most recent call last):
        ...
        ValueError: fcnmv(): indices[1, 0] = 3 is outside [0, 3) (the columns of shape)...
    """
    idx = np.asarray(indices)
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        i, j = (int(a) for a in np.argwhere((idx < 0) | (idx >= n))[0])
        raise ValueError(f'{who}: indices[{i}, {j}] = {idx[i, j]} is outside [0, {n}) (the columns of shape); '
                         f'fix the index or the shape. {_SKIP}')


def repair_indptr(indptr, nnz: int):
    """Row pointers every backend can trust: ``cummax(clip(indptr, 0, nnz))``.

    Row ``i`` then owns entries ``[p[i], p[i + 1])``; with a valid
    ``indptr`` nothing changes. Unvalidated structure goes through this in
    JAX before any kernel, so every backend drops the same entries.

    Example:
        >>> repair_indptr(jnp.array([0, 3, 1, 9]), 4)
        Array([0, 3, 3, 4], dtype=int32)
    """
    if indptr.shape[0] == 0:
        return indptr
    return _repaired(indptr, nnz)


@one_program_when_eager(1)
def _repaired(indptr, nnz):
    # XLA:CPU lowers cummax to a reduce-window tree that costs ~0.25 ms per 4,000 rows, more than
    # the event-driven product itself; a valid indptr (the usual case) is only checked, in a few
    # microseconds, and the repair runs only when something is wrong. (cummax, not a parallel
    # prefix scan: the scan runs faster but compiles 3-5x slower, on every jitted CSR call.)
    # Under vmap a batched predicate turns the cond into a select, which is still correct.
    valid = (indptr[0] >= 0) & (indptr[-1] <= nnz) & jnp.all(indptr[1:] >= indptr[:-1])
    # On a TPU the running maximum in 128-wide rows (a cummax of 100,000 pointers took seconds to compile
    # there); elsewhere XLA's cummax, which compiles faster on a CPU (the rows' passes added a third to the
    # compile time of every jitted CSR call).
    repair = lambda p: jax.lax.platform_dependent(jnp.clip(p, 0, nnz), tpu=_running_max,
                                                  default=lambda q: jax.lax.cummax(q, axis=0))
    return jax.lax.cond(valid, lambda p: p, repair, indptr)


# Running maxima and sums are taken in 128-wide rows, each by seven shifted passes, then across the rows'
# totals: XLA compiles that for a TPU in a fraction of a second, where its cummax over 100,000 row pointers
# took seconds (and far longer on a TPU host).
_RUN = 128


def _running(p, join, identity):
    n = p.shape[0]
    rows = -(-n // _RUN)
    within = jnp.pad(p, (0, rows * _RUN - n), constant_values=identity).reshape(rows, _RUN)
    shift = 1
    while shift < _RUN:
        within = join(within, jnp.pad(within[:, :-shift], ((0, 0), (shift, 0)), constant_values=identity))
        shift *= 2
    if rows > 1:
        before = _running(within[:, -1], join, identity)  # up to the end of each row
        # Row r's elements also take in every row before it.
        within = jnp.concatenate([within[:1], join(within[1:], before[:-1, None])])
    return within.reshape(-1)[:n]


def _running_max(p):
    return _running(p, jnp.maximum, jnp.iinfo(p.dtype).min)


def running_sum(p):
    """``cumsum(p)`` of a 1-D integer array, taken in 128-wide rows and then across them, which XLA
    compiles for a TPU in a fraction of the time of one long scan.

    Example:
        >>> running_sum(jnp.arange(1, 5))
        Array([ 1,  3,  6, 10], dtype=int32)
    """
    return _running(p, jnp.add, 0)


def check_csr_operands(who: str, data, indices, indptr, shape):
    """``(data, indices, indptr)`` of a CSR matrix of ``shape`` checked by shape and dtype (not by value).

    ``data`` is float, one weight per entry or one shared (a scalar becomes
    shape ``(1,)``); ``indptr`` takes the dtype of ``indices``.
    """
    m, n = shape
    data = check_weights(who, 'data', data)
    check_rank(who, 'data', data, (1,))
    indices = check_index_array(who, 'indices', indices)
    indptr = check_index_array(who, 'indptr', indptr).astype(indices.dtype)
    check_index_capacity(who, (m, n), indices.dtype)
    check_length(who, 'indptr', indptr, m + 1, 'rows + 1')
    nnz = indices.shape[0]
    if data.shape[0] not in (1, nnz):
        raise ValueError(f'{who}: data must have length {nnz} (one weight per entry of indices) '
                         f'or 1 (one homogeneous weight), got {data.shape[0]}.')
    return data, indices, indptr


def check_transpose(who: str, transpose) -> None:
    """``transpose`` is a Python bool (a traced or numpy bool cannot pick a kernel).

    Example:
        >>> check_transpose('csrmv()', 1)
        Traceback (most recent call last):
        TypeError: csrmv(): transpose must be a bool, got 1.
    """
    if not isinstance(transpose, bool):
        raise TypeError(f'{who}: transpose must be a bool, got {transpose!r}.')


def operand_name(matrix: bool, events: bool) -> str:
    """What the error messages call a product's vector/matrix operand."""
    return 'B' if matrix else ('spikes' if events else 'v')


def check_x_layout(who: str, name: str, x, *, shape, transpose: bool, matrix: bool) -> None:
    """``x`` is a vector (a matrix when ``matrix``) of ``n`` rows (``m`` when ``transpose``); ``A`` is ``shape``."""
    m, n = shape
    check_rank(who, name, x, (2,) if matrix else (1,))
    want, what = (m, 'rows of shape, as transpose=True') if transpose else (n, 'columns of shape')
    check_length(who, name, x, want, what)


def check_product_operand(who: str, weights, given, x, *, shape, transpose: bool, matrix: bool, events: bool):
    """The operand ``x`` of a sparse product checked; returns ``(weights, x)``.

    Events keep their dtype and so do the weights; a float product casts the
    weights and ``x`` to the promotion (JAX's rules) of ``x`` and ``given``,
    the weights as the caller passed them.

    Example:
        >>> import jax.numpy as jnp
        >>> w, x = check_product_operand('csrmv()', jnp.ones(3), 1.0, jnp.ones(4), shape=(2, 4),
        ...                              transpose=False, matrix=False, events=False)
        >>> x.shape
        (4,)
    """
    name = operand_name(matrix, events)
    if events:
        x = check_events(who, name, x)
    else:
        dtype = float_result_dtype(who, name, given, x)
        weights, x = weights.astype(dtype), check_float_operand(who, name, x, dtype)
    check_x_layout(who, name, x, shape=shape, transpose=transpose, matrix=matrix)
    return weights, x
