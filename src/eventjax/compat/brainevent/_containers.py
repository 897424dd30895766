"""brainevent's containers on eventjax's: brainevent's constructor arguments, eventjax's kernels.

Each class subclasses the eventjax container it builds, so it works
everywhere an eventjax container does (``@`` with event arrays, ``.T``,
``with_data``, units), and ``isinstance(A, brainevent.DataRepresentation)``
holds for all of them.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

import eventjax as ej
from eventjax.compat.brainevent import _plasticity as plasticity
from eventjax.compat.brainevent._errors import MathError
from eventjax.containers.operands import is_plain_array

__all__ = ['CSC', 'CSR', 'TCSR', 'DataRepresentation', 'Dense', 'FixedNumConn', 'FixedNumPerPost', 'FixedNumPerPre',
           'FixedPostNumConn', 'FixedPreNumConn', 'JITCMatrix', 'JITCNormalC', 'JITCNormalR', 'JITCScalarC',
           'JITCScalarMatrix', 'JITCScalarR', 'JITCUniformC', 'JITCUniformR']


class DataRepresentation:
    """brainevent's base of the sparse containers; here a marker every compat container carries."""

    @property
    def nse(self) -> int:
        """The number of stored entries (brainevent's name)."""
        return int(np.prod(self.indices.shape))


def _options(who: str, backend, buffers, **defaults) -> None:
    """brainevent's per-container options: accepted at their defaults, refused otherwise with the fix."""
    if backend is not None:
        raise ValueError(f'{who}: eventjax containers carry no backend; drop backend={backend!r} and choose it '
                         f"with eventjax.set_backend('cpu', {backend!r}) or eventjax.config.override(cpu={backend!r}).")
    if buffers is not None:
        raise ValueError(f'{who}: eventjax containers hold no buffers; drop buffers=.')
    for name, (value, default) in defaults.items():
        if value != default:
            raise ValueError(f'{who}: {name}={value!r} has no eventjax counterpart; leave it at {default!r}.')


class _CSRUpdates:
    """``update_on_pre`` / ``update_on_post`` by brainevent's rules: ``!= 0`` events, units, every weight bounded."""

    def _stored_on_pre(self, spikes, trace, w_min, w_max, backend):
        return self.with_data(plasticity.update_csr_on_binary_pre(
            self.data, self.indices, self.indptr, spikes, trace, w_min, w_max, shape=self.stored_shape,
            backend=backend))

    def _stored_on_post(self, trace, spikes, w_min, w_max, backend):
        rows, col_ptr, pos = self.column_view()
        return self.with_data(plasticity.update_csr_on_binary_post(
            self.data, rows, col_ptr, pos, trace, spikes, w_min, w_max, shape=self.stored_shape, backend=backend))


class _FixedUpdates:
    """``update_on_pre`` / ``update_on_post`` by brainevent's rules: ``!= 0`` events, units, every weight bounded."""

    def _stored_on_pre(self, spikes, trace, w_min, w_max, backend):
        return self.with_data(plasticity.update_fixed_post_conn_on_binary_pre(
            self.weights, self.indices, spikes, trace, w_min, w_max, shape=self.stored_shape, backend=backend))

    def _stored_on_post(self, trace, spikes, w_min, w_max, backend):
        rows, col_ptr, pos = self.column_view()
        weights = self.weights
        flat = weights.reshape(-1) if weights.ndim == 2 else weights  # a shared weight raises below
        flat = plasticity.update_csr_on_binary_post(flat, rows, col_ptr, pos, trace, spikes, w_min, w_max,
                                                    shape=self.stored_shape, backend=backend)
        return self.with_data(flat.reshape(weights.shape))


def _parts(who: str, data, rest: tuple, count: int) -> tuple:
    # brainevent takes both Container((data, indices, ...), shape=...) and Container(data, indices, ..., shape=...).
    if all(r is None for r in rest) and isinstance(data, (tuple, list)) and len(data) == count:
        return tuple(data)
    if any(r is None for r in rest):
        raise TypeError(f'{who}: pass the {count} arrays as one tuple or as {count} arguments, then shape=.')
    return (data, *rest)


@jax.tree_util.register_pytree_node_class
class CSR(_CSRUpdates, ej.CSR, DataRepresentation):
    """:class:`eventjax.CSR` built with brainevent's arguments: ``CSR((data, indices, indptr), shape=...)``."""

    def __init__(self, data, indices=None, indptr=None, *, shape, backend=None, buffers=None, indptr_dtype='auto',
                 check_structure: bool = True, transposed: bool = False, validate: bool | None = None):
        who = type(self).__name__ + '()'
        _options(who, backend, buffers, indptr_dtype=(indptr_dtype, 'auto'))
        super().__init__(_parts(who, data, (indices, indptr), 3), shape=shape, transposed=transposed,
                         validate=check_structure if validate is None else validate)


@jax.tree_util.register_pytree_node_class
class CSC(_CSRUpdates, ej.CSC, DataRepresentation):
    """:class:`eventjax.CSC` built with brainevent's arguments: ``CSC((data, indices, indptr), shape=...)``."""

    def __init__(self, data, indices=None, indptr=None, *, shape, backend=None, buffers=None, indptr_dtype='auto',
                 check_structure: bool = True, transposed: bool = False, validate: bool | None = None):
        _options('CSC()', backend, buffers, indptr_dtype=(indptr_dtype, 'auto'))
        super().__init__(_parts('CSC()', data, (indices, indptr), 3), shape=shape, transposed=transposed,
                         validate=check_structure if validate is None else validate)


@jax.tree_util.register_pytree_node_class
class TCSR(CSR):
    """brainevent's tile-compressed CSR, built from a CSR: here the same CSR (eventjax tiles nothing)."""

    def __init__(self, source, *, backend=None, binary_backend=None, backward_algorithm: str = 'bptt'):
        if backward_algorithm != 'bptt':
            raise ValueError(f"TCSR(): backward_algorithm={backward_algorithm!r} has no eventjax counterpart; eventjax "
                             "differentiates by backpropagation through time, leave it at 'bptt'.")
        if binary_backend is not None:
            _options('TCSR()', binary_backend, None)
        _options('TCSR()', backend, None)
        data, indices, indptr = source.data, source.indices, source.indptr
        super().__init__((data, indices, indptr), shape=source.stored_shape, transposed=source.transposed)


def _fixed(base):
    @jax.tree_util.register_pytree_node_class
    class Fixed(_FixedUpdates, base, DataRepresentation):
        __doc__ = (f':class:`eventjax.{base.__name__}` built with brainevent\'s arguments: '
                   f'``{base.__name__}((data, indices), shape=...)``.')

        def __init__(self, data, indices=None, *, shape, backend=None, precompute_weight_indices: bool = False,
                     buffers=None, transposed: bool = False, validate: bool = True):
            who = f'{base.__name__}()'
            _options(who, backend, buffers, precompute_weight_indices=(precompute_weight_indices, False))
            super().__init__(*_parts(who, data, (indices,), 2), shape=shape, transposed=transposed,
                             validate=validate)

    Fixed.__name__ = Fixed.__qualname__ = base.__name__
    return Fixed


FixedNumPerPre = _fixed(ej.FixedNumPerPre)
FixedNumPerPost = _fixed(ej.FixedNumPerPost)
FixedNumConn = ej.FixedNumConn
# brainevent's names before 0.1, which brainstate 0.5 still uses.
FixedPostNumConn, FixedPreNumConn = FixedNumPerPre, FixedNumPerPost


# -- just-in-time connectivity ---------------------------------------------------------------------

def seed_or_draw(seed):
    """brainevent draws a seed when none is given."""
    return int(np.random.randint(0, 2**31 - 1)) if seed is None else seed


JITCMatrix = ej.JITCMatrix


class JITCScalarMatrix(ej.JITCMatrix, DataRepresentation):
    """brainevent's base of the generated matrices: an :class:`eventjax.JITCMatrix` built from brainevent's
    arguments. The connections are eventjax's generator's, not brainevent's, for the same seed."""

    law, column = 'homo', False

    def __init__(self, data, *args, shape, corder: bool = False, backend=None, buffers=None):
        name = type(self).__name__
        _options(f'{name}()', None, buffers)
        count = 3 if self.law == 'homo' else 4
        parts = tuple(data) if isinstance(data, (tuple, list)) and not args else (data, *args)
        parts = parts + (None,) * (count - len(parts))
        if len(parts) != count or parts[count - 2] is None:
            form = '(weight, prob, seed)' if count == 3 else '(w1, w2, prob, seed)'
            raise TypeError(f'{name}(): takes {form} as one tuple or as arguments, then shape=.')
        weights = parts[0] if count == 3 else (parts[0], parts[1])
        m, n = (int(d) for d in shape)
        # A column-generated matrix is the transposed view of its transpose, generated row by row.
        super().__init__(weights, prob=parts[-2], seed=seed_or_draw(parts[-1]), shape=(n, m) if self.column else (m, n),
                         law=self.law, transposed=self.column, backend=backend)


def _jitc(name: str, law: str, column: bool):
    cls = type(name, (JITCScalarMatrix,), {
        'law': law, 'column': column, '__module__': __name__,
        '__doc__': f"brainevent's ``{name}``: an :class:`eventjax.JITCMatrix` with ``law={law!r}``"
                   f"{', generated by column' if column else ''}."})
    return jax.tree_util.register_pytree_node_class(cls)


JITCScalarR, JITCScalarC = _jitc('JITCScalarR', 'homo', False), _jitc('JITCScalarC', 'homo', True)
JITCUniformR, JITCUniformC = _jitc('JITCUniformR', 'uniform', False), _jitc('JITCUniformC', 'uniform', True)
JITCNormalR, JITCNormalC = _jitc('JITCNormalR', 'normal', False), _jitc('JITCNormalC', 'normal', True)
JITCHomoR, JITCHomoC = JITCScalarR, JITCScalarC


# -- dense ------------------------------------------------------------------------------------------

@jax.tree_util.register_pytree_node_class
class Dense(DataRepresentation):
    """brainevent's ``Dense``: a weight matrix whose ``@`` with event arrays is event-driven.

    Example:
        >>> import jax.numpy as jnp
        >>> from eventjax.compat.brainevent import BinaryArray
        >>> W = Dense(jnp.array([[1., 2.], [3., 4.]]))
        >>> BinaryArray(jnp.array([1., -1.])) @ W
        Array([4., 6.], dtype=float32)
    """

    _eventjax_container = True
    __array_priority__ = 100

    def __init__(self, data, *, shape=None, backend=None, buffers=None):
        _options('Dense()', backend, buffers)
        data = data if hasattr(data, 'ndim') else jnp.asarray(data)
        if data.ndim != 2:
            raise MathError(f'Dense(): data must be 2-D, got shape {tuple(data.shape)}.')
        if shape is not None and tuple(shape) != tuple(data.shape):
            raise MathError(f'Dense(): shape {tuple(shape)} does not match the data\'s {tuple(data.shape)}.')
        self.data = data

    shape = property(lambda self: tuple(self.data.shape))
    dtype = property(lambda self: self.data.dtype)
    nse = property(lambda self: int(np.prod(self.data.shape)))
    T = property(lambda self: Dense(self.data.T))  # noqa: N815 (NumPy's name)

    @classmethod
    def fromdense(cls, dense):
        """A ``Dense`` holding ``dense``."""
        return cls(dense)

    def todense(self):
        """The weight matrix."""
        return self.data

    def with_data(self, data):
        """A ``Dense`` holding new weights of the same shape."""
        return Dense(data, shape=self.shape)

    def tree_flatten(self):
        return (self.data,), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        obj = object.__new__(cls)
        obj.data = children[0]
        return obj

    def _product(self, other, left: bool):
        if isinstance(other, ej.EventArray):
            x = other._operand
            if isinstance(other, ej.GradedEvents):
                x = other.value
                return x @ self.data if left else self.data @ x
            if jnp.ndim(x) == 1:
                return ej.binary_densemv(self.data, x, transpose=left)
            return ej.binary_densemm(self.data, x.T, transpose=True).T if left else \
                ej.binary_densemm(self.data, x, transpose=False)
        if is_plain_array(other):
            return other @ self.data if left else self.data @ other
        return NotImplemented

    def __matmul__(self, other):
        return self._product(other, left=False)

    def __rmatmul__(self, other):
        return self._product(other, left=True)

