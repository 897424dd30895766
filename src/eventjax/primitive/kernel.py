"""``KernelPrimitive``: the machinery of a JAX primitive whose kernel is chosen per platform and backend.

The public class is :class:`eventjax.XLACustomKernel` (in
:mod:`eventjax.backends`), which adds one ``def_<backend>_kernel`` method per
bridge; this class knows no backend by name. The primitive always has
multiple results. A call resolves the backend of every platform once, from
one configuration snapshot, and binds with the caller's static parameters
plus the bind-only ones of :mod:`eventjax.primitive.params`.

The lowering for a platform calls the chosen kernel generator with the
static parameters and lowers the function it returns with
``mlir.lower_fun``; it reads nothing but its parameters.

In-place outputs. A call may declare ``input_output_aliases={i: k}``: output
``k`` is input ``i`` updated, so it must have that input's shape and dtype.
It travels as the bind parameter ``input_output_aliases`` (a sorted tuple of
pairs). Generators that name an ``input_output_aliases`` parameter receive
it (the numba, warp and pallas bridges do, and hand it to their custom call
so the output is written into the input's buffer); others get nothing and
return a functional result, which XLA updates in place where it can (a
``.at[]`` scatter on a donated buffer). Either way the result is the same:
without donation XLA copies the input first, so the caller's array is never
changed.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import itertools
import pickle
import sys
import warnings
from collections.abc import Callable
from typing import Any

import attrs
import jax
import numpy as np
from jax.extend import core
from jax.interpreters import ad, batching, mlir

from eventjax.config import PLATFORM_ALIASES, PLATFORMS, PrimitiveTable, snapshot, update
from eventjax.config.runtime import bind_snapshot, current_override
from eventjax.config.snapshot import check_backend_name, frozen_map, normalize_platform
from eventjax.errors import (
    BackendNotFoundError,
    BackendUnavailableError,
    DuplicatePrimitiveWarning,
    KernelCompilationError,
    KernelOutputError,
    PlatformNotSupportedError,
)
from eventjax.primitive import autodiff
from eventjax.primitive.batching import general_batching_rule
from eventjax.primitive.compat import apply_primitive
from eventjax.primitive.params import BIND_ONLY, split_params
from eventjax.primitive.resolution import KernelEntry, MissingBackend, Resolved, missing_backend_message, resolve
from eventjax.primitive.tags import CallAndTags, get_registry, register

__all__ = ['KernelPrimitive', 'primitives']

_UIDS = itertools.count(1)
# JAX registers lowerings under its own platform names; gpu covers cuda and rocm.
_LOWERING_PLATFORMS = {**{p: p for p in PLATFORMS if p not in PLATFORM_ALIASES.values()}, **PLATFORM_ALIASES}


class KernelPrimitive(CallAndTags):
    """The machinery of a primitive with kernels per backend and platform; use :class:`eventjax.XLACustomKernel`.

    It registers kernels with :meth:`def_kernel`, resolves a backend per
    platform at call time and lowers the chosen kernel; the public subclass
    adds one ``def_<backend>_kernel`` per bridge.
    """

    def __init__(self, name: str, doc: str | None = None):
        if not isinstance(name, str) or not name:
            raise TypeError(f'XLACustomKernel(): name must be a non-empty string, got {name!r}.')
        self.name = name
        self._uid = next(_UIDS)
        prim = core.Primitive(name)
        prim.multiple_results = True
        prim.def_impl(functools.partial(apply_primitive, prim))
        prim.def_abstract_eval(_abstract_eval)
        for jax_platform, platform in _LOWERING_PLATFORMS.items():
            mlir.register_lowering(prim, functools.partial(_lower, platform=platform), platform=jax_platform)
        self.primitive = prim
        self.register_general_batching()
        table = PrimitiveTable(name)
        if any(t.name == name for t in snapshot().primitives.values()):
            # "already registered" is the wording brainevent's users search their logs for.
            warnings.warn(f'XLACustomKernel({name!r}): a primitive named {name!r} is already registered; both stay '
                          f'registered, eventjax.primitives() lists this one as {name!r} and the older one '
                          f'as {name!r}#<uid>. Give each primitive its own name.',
                          DuplicatePrimitiveWarning, stacklevel=2)
        update(lambda s: attrs.evolve(s, primitives=frozen_map({**s.primitives, self._uid: table})))
        register(self, doc)
        self._home = _declaring_module()

    def __repr__(self) -> str:
        return f'{type(self).__name__}({self.name!r})'

    def __reduce__(self):
        # By reference, as pickle treats functions: the module that made the
        # primitive, and its name there. Unpickling imports the module, which
        # registers the primitive again in a fresh process.
        if sum(k.name == self.name for k in get_registry().values()) > 1:
            raise pickle.PicklingError(
                f'{self!r} cannot be pickled: several primitives named {self.name!r} are registered, so the name '
                'does not say which. Give each primitive its own name.')
        return _unpickle_primitive, (self.name, self._home)

    # -- registration -------------------------------------------------------

    def _table(self, snap=None) -> PrimitiveTable:
        return (snap or snapshot()).primitives[self._uid]

    def def_kernel(self, backend: str, platform: str, kernel_generator: Callable, asdefault: bool = False) -> None:
        """Register ``kernel_generator`` as this primitive's ``backend`` kernel on ``platform``.

        ``kernel_generator(**static_params, outs=outs)`` must return a
        JAX-traceable function of the input arrays returning one array per
        entry of ``outs``. Registering a (backend, platform) again replaces it.

        Example:
            >>> import eventjax as ej
            >>> p = ej.XLACustomKernel('def_kernel_example')
            >>> p.def_kernel('a', 'cpu', lambda outs: lambda x: (x + 1,))
            >>> p.available_backends('cpu')
            ('a',)
        """
        backend = check_backend_name(backend, who=f'{self.name}.def_kernel()', allow_none=False)
        platform = normalize_platform(platform, who=f'{self.name}.def_kernel()')
        if not callable(kernel_generator):
            raise TypeError(f'{self.name}.def_kernel(): kernel_generator must be callable, '
                            f'got {type(kernel_generator).__name__}.')
        entry = KernelEntry(self.name, platform, backend, kernel_generator)

        def change(snap):
            table = snap.primitives[self._uid].with_kernel(platform, backend, entry, bool(asdefault))
            return attrs.evolve(snap, primitives=frozen_map({**snap.primitives, self._uid: table}))

        update(change)

    def set_default(self, platform: str, backend: str | None) -> None:
        """Make ``backend`` this primitive's default on ``platform`` (None: first registered).

        Example:
            >>> import eventjax as ej
            >>> p = ej.XLACustomKernel('set_default_example')
            >>> p.def_kernel('a', 'cpu', lambda outs: lambda x: (x,))
            >>> p.def_kernel('b', 'cpu', lambda outs: lambda x: (-x,))
            >>> p.set_default('cpu', 'b')
            >>> p.get_default('cpu')
            'b'
        """
        who = f'{self.name}.set_default()'
        platform = normalize_platform(platform, who=who)
        backend = check_backend_name(backend, who=who)

        def change(snap):
            table = snap.primitives[self._uid]
            if backend is not None and backend not in table.kernels[platform]:
                raise BackendNotFoundError(
                    f'{who}: ' + missing_backend_message(self.name, platform, backend, table.backends(platform)))
            if table.defaults.get(platform) == backend:
                return snap
            table = table.with_default(platform, backend)
            return attrs.evolve(snap, primitives=frozen_map({**snap.primitives, self._uid: table}))

        update(change)

    def get_default(self, platform: str) -> str | None:
        """The backend this primitive uses on ``platform`` when nothing else is set."""
        return self._table().default(normalize_platform(platform, who=f'{self.name}.get_default()'))

    @property
    def defaults(self) -> dict[str, str | None]:
        """This primitive's default backend per platform."""
        table = self._table()
        return {p: table.default(p) for p in PLATFORMS}

    def available_backends(self, platform: str) -> tuple[str, ...]:
        """The backends registered for ``platform``, in registration order."""
        return self._table().backends(normalize_platform(platform, who=f'{self.name}.available_backends()'))

    # -- transformation rules -----------------------------------------------

    def def_batching_rule(self, fn: Callable) -> None:
        """Use ``fn(args, axes, **params) -> (outs, out_axes)`` under ``vmap``."""
        batching.primitive_batchers[self.primitive] = fn

    def register_general_batching(self) -> None:
        """Batch with :func:`general_batching_rule` (a ``lax.scan`` over the batch)."""
        batching.primitive_batchers[self.primitive] = functools.partial(general_batching_rule, self.primitive)

    def def_jvp_rule(self, fn: Callable) -> None:
        """Use ``fn(primals, tangents, **params) -> (outs, tangent_outs)`` as the JVP."""
        ad.primitive_jvps[self.primitive] = fn

    def def_jvp_rule2(self, *rules: Callable | None) -> None:
        """Define the JVP with one rule per operand; see :func:`eventjax.defjvp`."""
        autodiff.defjvp(self.primitive, *rules)

    def def_transpose_rule(self, fn: Callable) -> None:
        """Use ``fn(cts, *args, **params)`` to transpose this (linear) primitive."""
        ad.primitive_transposes[self.primitive] = fn

    # -- calling ------------------------------------------------------------

    def __call__(self, *args, outs, backend: str | None = None, input_output_aliases=None, **static_params):
        """Bind the primitive; returns results with the structure of ``outs``.

        ``input_output_aliases`` maps an input's position to the position of
        the (flattened) output that is that input updated in place; see the
        module docstring and the "In-place outputs" section of the backends
        guide.
        """
        if isinstance(static_params.get('kernels'), Resolved):
            # Rules forward a call's params; resolve afresh for this primitive.
            _, static_params = split_params(static_params)
        if backend is not None:
            backend = check_backend_name(backend, who=f'{self.name}()', allow_none=False)
        flat, tree = jax.tree.flatten(outs)
        if not flat:
            raise ValueError(f'{self.name}(): outs must be a jax.ShapeDtypeStruct or a pytree of them, got {outs!r}.')
        flat = tuple(_as_struct(self.name, o) for o in flat)
        _check_static(self.name, static_params)
        aliases = _check_aliases(self.name, input_output_aliases, args, flat)
        if aliases:
            static_params = {**static_params, 'input_output_aliases': aliases}
        snap = bind_snapshot()
        chosen = resolve(snap, self._uid, current_override(), backend)
        results = self.primitive.bind(*args, outs=flat, backend=backend, kernels=chosen,
                                      config_version=snap.version, **static_params)
        return jax.tree.unflatten(tree, results)


def primitives() -> dict[str, dict[str, tuple[str, ...]]]:
    """Every registered primitive with its backends per platform.

    When several primitives share a name, the newest is listed under the
    plain name and the older ones as ``name#uid``.

    Example:
        >>> import eventjax as ej
        >>> isinstance(ej.primitives(), dict)
        True
    """
    tables = snapshot().primitives
    newest = {table.name: uid for uid, table in tables.items()}  # uids grow: the last one wins
    return {(table.name if newest[table.name] == uid else f'{table.name}#{uid}'):
            {p: table.backends(p) for p in PLATFORMS} for uid, table in tables.items()}


# The modules that make primitives for others: the module a primitive belongs to is its first caller outside them.
_MAKERS = ('eventjax.primitive.', 'eventjax.backends.custom_kernel', 'eventjax.kernels.common.')


def _declaring_module() -> str | None:
    frame = sys._getframe(2)
    while frame is not None:
        module = frame.f_globals.get('__name__', '')
        if not module.startswith(_MAKERS):
            return module
        frame = frame.f_back
    return None


def _unpickle_primitive(name: str, module: str | None) -> KernelPrimitive:
    """The primitive named ``name`` that module ``module`` registers (how a pickled primitive comes back)."""
    if module is not None:
        try:
            importlib.import_module(module)
        except ImportError as e:
            raise pickle.UnpicklingError(
                f'primitive {name!r}: its module {module!r} cannot be imported ({e}); make it importable '
                'where the pickle is loaded.') from e
    found = get_registry().get(name)
    if found is None:
        raise pickle.UnpicklingError(
            f'no primitive named {name!r} is registered after importing {module!r}; a pickled primitive comes back '
            'only if importing its module makes it (create it at module level, not inside a function).')
    return found


def _as_struct(name: str, out: Any) -> jax.ShapeDtypeStruct:
    if not (hasattr(out, 'shape') and hasattr(out, 'dtype')):
        raise TypeError(f'{name}(): every leaf of outs must be a jax.ShapeDtypeStruct '
                        f'(or have .shape and .dtype), got {out!r}.')
    # As JAX does for arrays: a 64-bit type means its 32-bit twin while
    # jax_enable_x64 is off, so the kernel's x * 2 matches a float64 outs.
    dtype = np.dtype(jax.dtypes.canonicalize_dtype(out.dtype))
    if type(out) is jax.ShapeDtypeStruct and out.sharding is None and not out.weak_type and out.dtype == dtype:
        return out  # already canonical: skip rebuilding it on every call
    return jax.ShapeDtypeStruct(tuple(int(d) for d in out.shape), dtype)


def _check_static(name: str, params: dict) -> None:
    for key, value in params.items():
        if key in BIND_ONLY:
            raise ValueError(f'{name}(): {key!r} is reserved and cannot be a static parameter.')
        try:
            hash(value)
        except TypeError:
            raise TypeError(
                f'{name}(): static parameter {key!r} must be hashable (it is part of the cache key), '
                f'got unhashable {type(value).__name__}; pass a tuple instead of a list, '
                f'or an array as an operand.') from None


def _check_aliases(name: str, aliases: Any, args: tuple, outs: tuple) -> tuple[tuple[int, int], ...]:
    """``input_output_aliases`` as a sorted tuple of (input, output) pairs, checked against the call."""
    if aliases is None:
        return ()
    if isinstance(aliases, tuple) and all(isinstance(p, tuple) and len(p) == 2 for p in aliases):
        aliases = dict(aliases)  # already normalised: rules forward the bind parameter
    if not isinstance(aliases, dict):
        raise TypeError(f'{name}(): input_output_aliases must be a dict {{input position: output position}}, '
                        f'got {type(aliases).__name__}.')
    seen = set()
    for i, k in aliases.items():
        if not (isinstance(i, (int, np.integer)) and 0 <= i < len(args)):
            raise ValueError(f'{name}(): input_output_aliases names input {i!r}, but the call has '
                             f'{len(args)} inputs (positions 0 to {len(args) - 1}).')
        if not (isinstance(k, (int, np.integer)) and 0 <= k < len(outs)):
            raise ValueError(f'{name}(): input_output_aliases maps input {i} to output {k!r}, but outs declares '
                             f'{len(outs)} outputs (positions 0 to {len(outs) - 1}).')
        if k in seen:
            raise ValueError(f'{name}(): input_output_aliases maps two inputs to output {k}; '
                             'an output can alias one input only.')
        seen.add(k)
        arg, out = args[i], outs[k]
        dtype = arg.dtype if hasattr(arg, 'dtype') else np.asarray(arg).dtype
        shape, dtype = tuple(np.shape(arg)), np.dtype(jax.dtypes.canonicalize_dtype(dtype))
        if shape != tuple(out.shape) or dtype != np.dtype(jax.dtypes.canonicalize_dtype(out.dtype)):
            raise ValueError(
                f'{name}(): input {i} ({dtype.name}{list(shape)}) cannot be updated in place as output {k}, which '
                f'outs declares as {np.dtype(out.dtype).name}{list(out.shape)}; an aliased output must have '
                f"its input's shape and dtype.")
    return tuple(sorted((int(i), int(k)) for i, k in aliases.items()))


def _takes_aliases(generator: Callable) -> bool:
    """Whether a kernel generator names an ``input_output_aliases`` parameter (catch-alls do not count)."""
    try:
        return 'input_output_aliases' in inspect.signature(generator).parameters
    except (TypeError, ValueError):
        return False


def _abstract_eval(*args, outs, **params):
    return [jax.core.ShapedArray(o.shape, o.dtype) for o in outs]


def _lower(ctx, *args, platform, outs, backend, kernels, config_version, input_output_aliases=(), **static):
    # config_version is deliberately unused here: see eventjax.primitive.params.
    choice = kernels.choice(platform)
    if choice is None:
        having = kernels.platforms_with_kernels()
        raise PlatformNotSupportedError(
            f'primitive {kernels.prim_name!r} has no kernel for platform {platform!r}; platforms with kernels: '
            f'{", ".join(having) or "none"}. Register one with def_kernel(..., platform={platform!r}) '
            f'or def_jax_kernel, or run on one of those platforms.')
    if isinstance(choice, MissingBackend):
        raise choice.error()
    alternatives = tuple(b for b in kernels.backends_of(platform) if b != choice.backend)
    where = f'primitive {choice.prim_name!r}, backend {choice.backend!r} on {platform!r}'
    hint = (f' Other backends for {platform!r}: {", ".join(map(repr, alternatives))}; switch with '
            f'backend=... per call or eventjax.set_backend({platform!r}, ...).' if alternatives
            else f' No other backend is registered for {platform!r}.')
    if input_output_aliases and _takes_aliases(choice.generator):
        static = {**static, 'input_output_aliases': dict(input_output_aliases)}
    try:
        fn = choice.generator(**static, outs=outs)
    except BackendUnavailableError:
        raise  # already says what is missing and how to get it
    except Exception as exc:
        raise KernelCompilationError(
            f'{where}: the kernel generator raised {type(exc).__name__}: {exc}.{hint}') from exc
    if not callable(fn):
        raise KernelCompilationError(f'{where}: the kernel generator returned {type(fn).__name__}, '
                                     f'expected a function of the input arrays.{hint}')

    def flat_kernel(*arrays):
        result = fn(*arrays)
        result = tuple(result) if isinstance(result, (tuple, list)) else (result,)
        _check_outputs(where, result, outs)
        return result

    try:
        return mlir.lower_fun(flat_kernel, multiple_results=True)(ctx, *args)
    except Exception as exc:
        exc.add_note(f'While lowering {where}.{hint}')
        raise


def _check_outputs(where: str, result: tuple, outs: tuple) -> None:
    if len(result) != len(outs):
        raise KernelOutputError(f'{where}: the kernel returned {len(result)} outputs, outs declares {len(outs)}.')
    for i, (got, want) in enumerate(zip(result, outs)):
        if tuple(got.shape) != tuple(want.shape) or np.dtype(got.dtype) != np.dtype(want.dtype):
            raise KernelOutputError(
                f'{where}: output {i} has shape {tuple(got.shape)} and dtype {got.dtype}, '
                f'but outs declares {tuple(want.shape)} and {want.dtype}.')
