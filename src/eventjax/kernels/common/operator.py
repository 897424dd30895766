"""Declare a standard primitive once: its primitive, kernels and rules follow from the declaration.

Every standard primitive is a :class:`Declaration`, the last statement of
its module, named ``_<primitive name>``. It holds the primitive
(``.primitive``, a :class:`PreparedKernel`), registers the kernels found by
the naming rule (``<family>.<backend>_impl.<name>_kernel``) and wires the
rules through a hook. The forms the library has:

- :class:`Operator`: ``y = op(weights, *structure, x)``, with ``x`` a vector
  (``*mv``) or a matrix (``*mm``), and a result of ``shape[1]``
  (``transpose``) or ``shape[0]`` rows in the weights' dtype (``shape`` is the
  static parameter, or the weights' own shape for dense operators);
- :class:`~eventjax.kernels.common.update.Update`: an in-place update of the
  weights (plasticity);
- ``Delivery`` (``kernels/delay/delivery.py``): an in-place delivery into a ring buffer;
- any other form (index-list products, per-entry products): a
  :class:`Declaration` with its ``out`` and ``rules`` hooks.

See ``kernels/README.md``.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import inspect
from collections.abc import Callable

import jax
import numpy as np

from eventjax.backends import XLACustomKernel
from eventjax.backends.registry import JAX_BACKEND, backend_names, get_bridge
from eventjax.kernels.common.rules import register_rules
from eventjax.primitive.chain import link

__all__ = ['Declaration', 'Operator', 'PreparedKernel', 'kernel_sources', 'register_backend',
           'register_jax', 'register_kernels']

class Declaration:
    """One standard primitive: the declaration its module ends with, as ``_<name> = Declaration(...)``.

    Args:
        name: the primitive's name, also the stem of its kernels' names.
        family: the family package (pass ``__package__``). The ``jax`` kernel
            is ``<family>.jax_impl.<name>_kernel`` (``<family>.reference.<name>_kernel``
            for a family without a ``jax_impl``), the kernel of backend ``b``
            ``<family>.<b>_impl.<name>_kernel`` (imported at the first lowering).
        operands: operand names in call order.
        kernels: the backends besides ``jax`` that have kernels. ``pallas``
            kernels are ``<family>.pallas_impl.<name>_kernel`` (gpu) and,
            where the family has one, ``<name>_tpu_kernel`` (tpu).
        prepare: ``prepare(*operands) -> operands``, run in JAX on the operands
            before the kernels (e.g. repairing unvalidated structure), except
            those of the backends whose bridge declares ``prepares_in_kernel``;
            None: nothing.
        out: ``out(*operands, **static) -> jax.ShapeDtypeStruct``, the result
            of a call (the subclasses define it).
        rules: ``rules(declaration)`` gives ``declaration.primitive`` its JVP,
            transpose and batching rules (the subclasses define it).

    Class attributes the subclasses set: ``in_place`` (``{input: output}``,
    the result is that operand updated, or None) and ``bounds`` (the static
    ``w_min`` / ``w_max`` travel as one more operand to the kernels of the
    backends whose bridge declares ``bounds_as_operand``).

    Example::

        _csr_slice_rows = Declaration('csr_slice_rows', __package__, ('data', 'indices', 'indptr', 'rows'),
                                      kernels=('numba', 'warp', 'pallas'), out=_out, rules=linear_in_data(_cotangent))
    """

    in_place: dict[int, int] | None = None
    bounds: bool = False

    def __init__(self, name: str, family: str, operands: tuple[str, ...], *,
                 kernels: tuple[str, ...], prepare: Callable | None = None,
                 out: Callable | None = None, rules: Callable | None = None):
        self.name, self.family, self.operands = name, family, tuple(operands)
        self._prepare = prepare
        if out is not None:
            self.out = out
        self.primitive = PreparedKernel(name, prepare, bounds=self.bounds)
        register_kernels(self.primitive, family, name, kernels)
        if rules is None:
            self.rules()
        else:
            rules(self)

    def __repr__(self) -> str:
        return f'{type(self).__name__}({self.name!r})'

    def out(self, *operands, **static) -> jax.ShapeDtypeStruct:
        """The result of a call on ``operands``."""
        raise NotImplementedError(f'{self!r}: declare its result with out=...')

    def rules(self) -> None:
        """Give :attr:`primitive` its JVP, transpose and batching rules (none: the general ones)."""

    def register(self, backend: str) -> None:
        """Register ``backend``'s kernels again, through its bridge's adapter (registering replaces them).

        Tests re-register the pallas kernels this way after turning on
        ``eventjax.backends.pallas.set_cpu_interpret(True)``, so the cpu gets the
        gpu kernel in interpret mode.
        """
        register_backend(self.primitive, self.family, self.name, backend)

    def bind(self, *operands, backend: str | None = None, **static):
        """Call the primitive on checked operands (what the public function and the rules call)."""
        static.pop('input_output_aliases', None)  # rules forward the bind parameters; a call adds its own
        return self.primitive(*operands, outs=(self.out(*operands, **static),), input_output_aliases=self.in_place,
                              backend=backend, **static)[0]


class Operator(Declaration):
    """One standard operator ``y = op(weights, *structure, x)``: the declaration an operator module ends with.

    Args:
        name, family, kernels, prepare: as for :class:`Declaration`.
        operands: operand names in call order: weights first, ``x`` last.
        events: whether ``x`` holds events (a binary operator).
        matrix: whether ``x`` is a matrix (an ``*mm`` operator).
        weight_cotangent: ``(ct, x_as_floats, *structure, **static)`` returns
            the cotangent of one weight per stored connection.
        float_op: the float operator the derivative w.r.t. ``x`` goes through:
            the name of an operator of the same family, or a callable with the
            same call signature as :meth:`bind`; None (a float operator): itself.
        mm_op: the name of the matrix operator a vmap over ``x`` folds into;
            None (only for a matrix operator): itself.

    Example::

        _csrmv = Operator('csrmv', __package__, ('data', 'indices', 'indptr', 'v'),
                          events=False, matrix=False, weight_cotangent=reference.entry_cotangent, mm_op='csrmm',
                          kernels=('numba', 'warp', 'pallas', 'cpp', 'cuda'))
    """

    def __init__(self, name: str, family: str, operands: tuple[str, ...], *, events: bool, matrix: bool,
                 weight_cotangent: Callable, float_op: str | Callable | None = None, mm_op: str | None = None,
                 kernels: tuple[str, ...], prepare: Callable | None = None):
        if not matrix and mm_op is None:
            raise TypeError(f'Operator({name!r}): a vector operator must name its matrix counterpart (mm_op=...), '
                            f'which a vmap over {operands[-1]!r} folds into.')
        self.events, self.matrix = bool(events), bool(matrix)
        self.weight_cotangent = weight_cotangent
        self._float_op, self._mm_op = float_op, mm_op
        super().__init__(name, family, operands, kernels=kernels, prepare=prepare)

    def out(self, *operands, **static) -> jax.ShapeDtypeStruct:
        """``shape[1]`` (``transpose``) or ``shape[0]`` rows (times ``x``'s columns) in the weights' dtype."""
        weights, x = operands[0], operands[-1]
        shape = static.get('shape', weights.shape)
        rows = shape[1] if static['transpose'] else shape[0]
        return jax.ShapeDtypeStruct((rows, x.shape[1]) if self.matrix else (rows,), weights.dtype)

    def rules(self) -> None:
        register_rules(self.primitive, self)

    def float_call(self, *operands, backend: str | None = None, **static):
        """The float operator's :meth:`bind` (this operator's own, for a float operator)."""
        if self._float_op is None:
            return self.bind(*operands, backend=backend, **static)
        fn = self._float_op if callable(self._float_op) else _declared(self.family, self._float_op).bind
        return fn(*operands, backend=backend, **static)

    def mm_call(self, *operands, backend: str | None = None, **static):
        """The matrix operator's :meth:`bind`, which a vmap over ``x`` folds into."""
        op = self if self._mm_op is None else _declared(self.family, self._mm_op)
        return op.bind(*operands, backend=backend, **static)


def register_kernels(prim, family: str, name: str, kernels: tuple[str, ...]) -> None:
    """Register the ``jax`` kernel and those of ``kernels`` of operator ``name`` of ``family`` on ``prim``.

    The naming rules are :class:`Operator`'s; a primitive with rules of its
    own (not the ``weights x events`` form) uses this without the rest.
    """
    register_jax(prim, family, name)
    for backend in kernels:
        register_backend(prim, family, name, backend)


def register_jax(prim, family: str, name: str) -> None:
    """Register the ``jax`` kernel of operator ``name`` of ``family`` on ``prim``.

    It is ``<name>_kernel`` of the family's ``jax_impl`` when it has one, else
    of its ``reference``.
    """
    module = _jax_module(family)
    prim.def_jax_kernel(_impl(family, module, name))
    _SOURCES.setdefault(name, {})[JAX_BACKEND] = f'{family}.{module}'


def register_backend(prim, family: str, name: str, backend: str) -> None:
    """Register ``backend``'s kernels of operator ``name`` of ``family`` on ``prim``, by its bridge's adapter.

    The generators are in ``<family>.<backend>_impl``; each bridge says how
    they are registered (platforms, default, typing) in its ``standard``.
    Registering again replaces them.
    """
    get_bridge(backend).register_standard(prim, functools.partial(_module, family, f'{backend}_impl'), name)
    _SOURCES.setdefault(name, {})[backend] = f'{family}.{backend}_impl'


# operator name -> backend -> the module whose ``<name>_kernel`` that backend runs, as registered.
_SOURCES: dict[str, dict[str, str]] = {}


def kernel_sources() -> dict[str, dict[str, str]]:
    """For every operator registered so far: backend -> the module of its kernel (``<operator>_kernel`` there).

    ``tools/kernel_table.py`` writes ``eventjax/kernels/table.py`` from it.

    Example:
        >>> import eventjax as ej
        >>> _ = ej.get_registry()  # loads every standard operator
        >>> kernel_sources()['binary_csrmv']['numba']
        'eventjax.kernels.csr.numba_impl'
    """
    return {name: dict(row) for name, row in _SOURCES.items()}


class PreparedKernel(XLACustomKernel):
    """The primitive of a :class:`Declaration`: each kernel is registered wrapped as its bridge declares.

    One wrap around a backend's kernel generator does what the declaration
    asks and the backend's bridge does not do inside its kernels:

    - ``prepare(*operands) -> operands`` runs in JAX before the kernel, unless
      the bridge declares ``prepares_in_kernel`` (its kernels do that work
      themselves: an XLA op before their custom call costs more than the work);
    - with ``bounds``, the static ``w_min`` / ``w_max`` reach the kernel as one
      more operand ``[w_min, w_max]`` (``-inf`` / ``inf`` for None) when the
      bridge declares ``bounds_as_operand`` (so one compiled kernel serves every pair).

    Example:
        >>> import jax, jax.numpy as jnp
        >>> p = PreparedKernel('prepared_example', prepare=lambda x: (jnp.abs(x),))
        >>> p.def_jax_kernel(lambda outs: lambda x: (2 * x,))
        >>> x = jnp.array([-1., 2.])
        >>> p(x, outs=jax.ShapeDtypeStruct(x.shape, x.dtype))
        Array([2., 4.], dtype=float32)
    """

    def __init__(self, name: str, prepare: Callable | None = None, *, bounds: bool = False):
        self._prepare, self._bounds = prepare, bool(bounds)
        super().__init__(name)

    def def_kernel(self, backend: str, platform: str, kernel_generator: Callable, asdefault: bool = False) -> None:
        bridge = get_bridge(backend) if backend in backend_names() else None
        prepare = None if bridge is not None and bridge.prepares_in_kernel else self._prepare
        bounds = self._bounds and bridge is not None and bridge.bounds_as_operand
        if prepare is not None or bounds:
            kernel_generator = _declared_generator(kernel_generator, prepare, bounds)
        super().def_kernel(backend, platform, kernel_generator, asdefault)


def _declared_generator(kernel_generator: Callable, prepare: Callable | None, bounds: bool) -> Callable:
    """``kernel_generator`` whose kernel gets its operands through ``prepare`` and, with ``bounds``, the bounds."""
    forwards_aliases = bounds or 'input_output_aliases' in inspect.signature(kernel_generator).parameters

    def declared(*, outs, input_output_aliases=None, **params):
        if input_output_aliases and forwards_aliases:  # the bridge writes the output into the input's buffer
            params['input_output_aliases'] = input_output_aliases
        if bounds:
            w_min, w_max = params.pop('w_min', None), params.pop('w_max', None)
            dtype = (outs[0] if isinstance(outs, (tuple, list)) else outs).dtype
            extra = (np.array([-np.inf if w_min is None else w_min, np.inf if w_max is None else w_max], dtype),)
        else:
            extra = ()
        fn = kernel_generator(outs=outs, **params)
        if not callable(fn):
            return fn  # the lowering reports it
        if prepare is None:
            return lambda *operands: fn(*operands, *extra)
        return lambda *operands: fn(*prepare(*operands), *extra)
    what = ' and '.join(w for w, on in (('prepare in JAX', prepare is not None), ('bounds as operand', bounds)) if on)
    return link(declared, kernel_generator, f'the declaration: {what}')


@functools.cache
def _declared(family: str, name: str) -> Operator:
    module = importlib.import_module(f'{family}.{name}')
    for value in vars(module).values():
        if isinstance(value, Operator) and value.name == name:
            return value
    raise LookupError(f'{family}.{name} declares no Operator named {name!r}.')


def _module(family: str, module: str):
    return importlib.import_module(f'{family}.{module}')


def _impl(family: str, module: str, name: str) -> Callable:
    """``<family>.<module>.<name>_kernel`` (``<backend>_impl`` for a backend's kernels)."""
    return getattr(_module(family, module), f'{name}_kernel')


def _jax_module(family: str) -> str:
    """Where a family's ``jax`` kernels live: its fast ``jax_impl`` when it has one, else its reference."""
    return 'jax_impl' if importlib.util.find_spec(f'{family}.jax_impl') is not None else 'reference'
