"""The two outside anchors of ``eventjax bench``: brainevent and ``scipy.sparse``.

Both are optional (``pip install 'eventjax[compare]'``). brainevent runs its
own function on the very arrays eventjax gets, on the backend that matches
eventjax's (:data:`BRAINEVENT_BACKENDS`); scipy runs the float product of the
same matrix as a CSR (the transposed product for ``transpose=True``). Where a
package is missing the columns show ``-`` and the run says why in a note.
"""

from __future__ import annotations

import importlib

import attrs
import jax
import numpy as np

__all__ = ['BRAINEVENT_BACKENDS', 'BraineventCall', 'ScipyCall', 'brainevent_backend', 'brainevent_fn',
           'import_optional', 'scipy_fn']

# eventjax backend -> brainevent backend of the same kind of kernel.
BRAINEVENT_BACKENDS = {'numba': 'numba', 'jax': 'jax_raw', 'warp': 'warp'}


def import_optional(name: str):
    """``importlib.import_module(name)``, or None when it cannot be imported (whatever the reason).

    Example:
        >>> import_optional('no_such_package_here') is None
        True
    """
    try:
        return importlib.import_module(name)
    except Exception:  # a broken optional install must cost a column, not the benchmark
        return None


@attrs.frozen
class BraineventCall:
    """``brainevent.<function>(*args, **kwargs, backend=...)`` on the same arrays as eventjax.

    Attributes:
        function: brainevent's public function name.
        args: the operands, in brainevent's order.
        kwargs: static keywords (``shape``, ``transpose``).
        workspace: the CSR functions also take the workspace brainevent makes
            from ``indptr`` (``args[2]``).
        backends: False where brainevent's function has no ``backend``
            keyword (pure ``jax.numpy``): then only eventjax's ``jax`` backend
            is compared with it.
    """

    function: str
    args: tuple
    kwargs: dict
    workspace: bool = False
    backends: bool = True


@attrs.frozen
class ScipyCall:
    """The float product of a CSR matrix (``A @ x``, or ``A.T @ x``) with ``scipy.sparse``."""

    data: np.ndarray
    indices: np.ndarray
    indptr: np.ndarray
    shape: tuple
    x: np.ndarray
    transpose: bool


def brainevent_backend(call: BraineventCall, backend: str, platform: str, module) -> str | None:
    """The brainevent backend to compare with eventjax's ``backend``, or None if brainevent has none here.

    ``''`` means the function takes no ``backend`` keyword (compared with ``jax`` only).
    """
    if not call.backends:
        return '' if backend == 'jax' else None
    wanted = BRAINEVENT_BACKENDS.get(backend)
    primitive = getattr(module, f'{call.function}_p', None)
    try:
        have = primitive.available_backends(platform) if primitive is not None else ()
    except Exception:  # an older brainevent without the query: try the name
        have = (wanted,)
    return wanted if wanted in have else None


def brainevent_fn(call: BraineventCall, be_backend: str, module):
    """``(fn, args)`` with ``jax.jit(fn)(*args)`` brainevent's product on ``be_backend``."""
    function = getattr(module, call.function)
    kwargs = dict(call.kwargs, **({'backend': be_backend} if be_backend else {}))
    args = call.args
    if call.workspace:
        from brainevent._csr.binary import _make_binary_csrmv_workspace

        args = (*args, _make_binary_csrmv_workspace(args[2]))
        return (lambda d, i, p, x, ws: function(d, i, p, x, workspace=ws, **kwargs)), args
    return (lambda *a: function(*a, **kwargs)), args


def scipy_fn(call: ScipyCall, module):
    """A no-argument function computing the product with ``scipy.sparse`` (``module`` is ``scipy.sparse``).

    Example:
        >>> import scipy.sparse
        >>> c = ScipyCall(np.ones(2, np.float32), np.array([1, 0]), np.array([0, 1, 2]), (2, 2),
        ...               np.array([1., 2.], np.float32), transpose=False)
        >>> scipy_fn(c, scipy.sparse)()
        array([2., 1.], dtype=float32)
    """
    matrix = module.csr_matrix((call.data, call.indices, call.indptr), shape=call.shape)
    if call.transpose:
        matrix = matrix.T  # a CSC view: scipy's transposed product, no copy
    x = call.x
    return lambda: matrix @ x


def same_result(got, want) -> bool:
    """Whether two products agree to float32 summation-order noise."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    if got.shape != want.shape:
        return False
    scale = max(1.0, float(np.max(np.abs(want), initial=0.0)))
    return bool(np.allclose(got, want, rtol=1e-4, atol=1e-4 * scale))


def block(result):
    """Wait for a result, jax or numpy."""
    return jax.block_until_ready(result) if isinstance(result, jax.Array) else result
