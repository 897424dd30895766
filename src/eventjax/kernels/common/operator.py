"""Declare a standard operator once: its primitive, kernels and rules follow from the declaration.

Every standard operator computes ``y = op(weights, *structure, x)``, with
``x`` a vector (``*mv``) or a matrix (``*mm``), and a result of
``shape[1]`` (``transpose``) or ``shape[0]`` rows in the weights' dtype
(``shape`` is the static parameter, or the weights' own shape for dense
operators). An :class:`Operator` holds what differs between operators; an
operator module holds its public function, its docstring and one
declaration. See ``kernels/README.md``.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import inspect
from collections.abc import Callable

import jax

from eventjax.backends import XLACustomKernel
from eventjax.backends.registry import get_bridge
from eventjax.kernels.common.rules import register_rules

__all__ = ['ALL_BACKENDS', 'Operator', 'kernel_sources', 'register_backend', 'register_jax', 'register_kernels']

# The backends of operators that also have C++ (cpp, cpu) and CUDA (cuda, gpu) kernels.
ALL_BACKENDS = ('numba', 'warp', 'pallas', 'cpp', 'cuda')


class Operator:
    """One standard operator: the declaration an operator module ends with.

    Args:
        name: the primitive's name, also the stem of its kernels' names.
        family: the family package (pass ``__package__``). The kernel
            generators are named after the operator: the ``jax`` kernel is
            ``<family>.jax_impl.<name>_kernel`` (``<family>.reference.<name>_kernel``
            for a family without a ``jax_impl``), the kernel of backend ``b``
            ``<family>.<b>_impl.<name>_kernel`` (imported at the first lowering).
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
        kernels: the backends besides ``jax`` that have kernels. ``pallas``
            kernels are ``<family>.pallas_impl.<name>_kernel`` (gpu) and,
            where the family has one, ``<name>_tpu_kernel`` (tpu).
        prepare: ``prepare(*operands) -> operands``, run in JAX on the operands
            before the kernel of every backend not in ``prepared_in_kernel``
            (e.g. repairing unvalidated structure); None: nothing.
        prepared_in_kernel: the backends whose kernels do ``prepare``'s work
            themselves, because an XLA op before their custom call costs more
            than the work (tens of microseconds on XLA:CPU).

    Example::

        _csrmv = Operator('csrmv', __package__, ('data', 'indices', 'indptr', 'v'),
                          events=False, matrix=False, weight_cotangent=reference.entry_cotangent, mm_op='csrmm')
    """

    def __init__(self, name: str, family: str, operands: tuple[str, ...], *, events: bool, matrix: bool,
                 weight_cotangent: Callable, float_op: str | Callable | None = None, mm_op: str | None = None,
                 kernels: tuple[str, ...] = ('numba', 'warp', 'pallas'), prepare: Callable | None = None,
                 prepared_in_kernel: tuple[str, ...] = ()):
        if not matrix and mm_op is None:
            raise TypeError(f'Operator({name!r}): a vector operator must name its matrix counterpart (mm_op=...), '
                            f'which a vmap over {operands[-1]!r} folds into.')
        self.name, self.family, self.operands = name, family, tuple(operands)
        self.events, self.matrix = bool(events), bool(matrix)
        self.weight_cotangent = weight_cotangent
        self._float_op, self._mm_op = float_op, mm_op
        self.primitive = XLACustomKernel(name) if prepare is None else \
            _PreparedKernel(name, prepare, prepared_in_kernel)
        register_kernels(self.primitive, family, name, kernels)
        register_rules(self.primitive, self)

    def __repr__(self) -> str:
        return f'Operator({self.name!r})'

    def register(self, backend: str) -> None:
        """Register ``backend``'s kernels again, through its bridge's adapter (registering replaces them).

        Tests re-register the pallas kernels this way after turning on
        ``eventjax.config.set_pallas_cpu_interpret(True)``, so the cpu gets the
        gpu kernel in interpret mode.
        """
        register_backend(self.primitive, self.family, self.name, backend)

    def bind(self, *operands, backend: str | None = None, **static):
        """Call the primitive on checked operands (what the public function and the rules call)."""
        weights, x = operands[0], operands[-1]
        shape = static.get('shape', weights.shape)
        rows = shape[1] if static['transpose'] else shape[0]
        out = jax.ShapeDtypeStruct((rows, x.shape[1]) if self.matrix else (rows,), weights.dtype)
        return self.primitive(*operands, outs=(out,), backend=backend, **static)[0]

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
    _SOURCES.setdefault(name, {})['jax'] = f'{family}.{module}'


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


class _PreparedKernel(XLACustomKernel):
    """A primitive whose operands go through ``prepare`` before every kernel but those of ``in_kernel``."""

    def __init__(self, name: str, prepare: Callable, in_kernel: tuple[str, ...]):
        self._prepare, self._in_kernel = prepare, frozenset(in_kernel)
        super().__init__(name)

    def def_kernel(self, backend: str, platform: str, kernel_generator: Callable, asdefault: bool = False) -> None:
        if backend not in self._in_kernel:
            kernel_generator = _prepared(kernel_generator, self._prepare)
        super().def_kernel(backend, platform, kernel_generator, asdefault)


def _prepared(kernel_generator: Callable, prepare: Callable) -> Callable:
    forwards_aliases = 'input_output_aliases' in inspect.signature(kernel_generator).parameters

    def generator(*, input_output_aliases=None, **params):
        if input_output_aliases and forwards_aliases:  # the bridge writes the output into the input's buffer
            params['input_output_aliases'] = input_output_aliases
        fn = kernel_generator(**params)
        if not callable(fn):
            return fn  # the lowering reports it
        return lambda *operands: fn(*prepare(*operands))
    return generator


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
