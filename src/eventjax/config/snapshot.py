"""Frozen configuration data: the snapshot and the per-primitive kernel tables.

Nothing here is ever mutated. Writers in :mod:`eventjax.config.runtime` build
a new snapshot with :func:`attrs.evolve` (validators run again) and publish it
with one reference assignment, so a reader that holds a snapshot sees one
consistent state for as long as it likes.
"""

from __future__ import annotations

import types
from collections.abc import Mapping
from typing import Any

import attrs

__all__ = [
    'PLATFORMS',
    'PLATFORM_ALIASES',
    'ConfigSnapshot',
    'PrimitiveTable',
    'check_backend_name',
    'frozen_map',
    'normalize_backend',
    'normalize_platform',
    'register_backend_aliases',
]

PLATFORMS = ('cpu', 'gpu', 'tpu')
# JAX's own names for a platform, where they differ from eventjax's; the one
# alias table of the package (lowerings are registered under these names too).
PLATFORM_ALIASES = {'cuda': 'gpu', 'rocm': 'gpu'}


def frozen_map(items=()) -> Mapping:
    """A read-only mapping over a private copy of ``items``."""
    return types.MappingProxyType(dict(items))


def normalize_platform(platform: Any, *, who: str = 'eventjax') -> str:
    """Return the canonical platform name (``cuda``/``rocm`` become ``gpu``).

    Raises:
        TypeError: ``platform`` is not a string.
        ValueError: ``platform`` is not one of cpu, gpu, tpu, cuda, rocm.
    """
    if not isinstance(platform, str):
        raise TypeError(
            f'{who}: platform must be a string, one of {", ".join(PLATFORMS)}; '
            f'got {platform!r} of type {type(platform).__name__}.'
        )
    name = PLATFORM_ALIASES.get(platform.lower(), platform.lower())
    if name not in PLATFORMS:
        raise ValueError(
            f'{who}: unknown platform {platform!r}; valid platforms are '
            f'{", ".join(PLATFORMS)} (cuda and rocm mean gpu).'
        )
    return name


# Other names for eventjax backends -> their names. The bridges declare them (register_backend_aliases,
# called when eventjax.backends is imported); the configuration layer names no backend itself.
_BACKEND_ALIASES: Mapping[str, str] = frozen_map()


def register_backend_aliases(aliases: Mapping[str, str]) -> None:
    """Make each key of ``aliases`` another name of the backend it maps to (replacing earlier ones).

    Example:
        >>> callable(register_backend_aliases)
        True
    """
    global _BACKEND_ALIASES
    _BACKEND_ALIASES = frozen_map(aliases)


def normalize_backend(backend: str) -> str:
    """The eventjax name of a backend: another name a bridge answers to becomes the bridge's name.

    Example:
        >>> normalize_backend('jax_raw'), normalize_backend('numba')
        ('jax', 'numba')
    """
    return _BACKEND_ALIASES.get(backend, backend)


def check_backend_name(backend: Any, *, who: str, allow_none: bool = True) -> str | None:
    """Validate a backend name (a non-empty string, or None where allowed); return its eventjax name."""
    if backend is None and allow_none:
        return None
    if not isinstance(backend, str):
        expected = 'a string or None' if allow_none else 'a string'
        raise TypeError(
            f'{who}: backend must be {expected} naming a backend (eventjax.backends_available() lists '
            f'them); got {backend!r} of type {type(backend).__name__}.'
        )
    if not backend:
        raise ValueError(
            f'{who}: backend must not be an empty string; pass None to clear it.'
        )
    return normalize_backend(backend)


def _check_platform_keys(instance, attribute, value):
    bad = set(value) - set(PLATFORMS)
    if bad:
        raise ValueError(f'{attribute.name} has unknown platforms {sorted(bad)}')


@attrs.frozen(eq=False)
class PrimitiveTable:
    """The kernels of one primitive: ``kernels[platform][backend] -> entry``.

    ``kernels`` keeps registration order, so the first backend registered for
    a platform is the fallback default. ``defaults`` holds explicit defaults
    set with ``set_default`` or ``asdefault=True``.
    """

    name: str
    kernels: Mapping[str, Mapping[str, Any]] = attrs.field(
        factory=lambda: frozen_map((p, frozen_map()) for p in PLATFORMS),
        validator=_check_platform_keys,
    )
    defaults: Mapping[str, str] = attrs.field(factory=frozen_map, validator=_check_platform_keys)
    # Built once per table: every configuration change compares whole contents, once per registered
    # kernel while the standard operators load.
    _content: tuple = attrs.field(init=False, eq=False, repr=False, default=())

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, '_content', (
            self.name, tuple((p, tuple(self.kernels[p].items())) for p in PLATFORMS),
            tuple(sorted(self.defaults.items()))))

    def backends(self, platform: str) -> tuple[str, ...]:
        return tuple(self.kernels[platform])

    def default(self, platform: str) -> str | None:
        explicit = self.defaults.get(platform)
        if explicit is not None:
            return explicit
        return next(iter(self.kernels[platform]), None)

    def with_kernel(self, platform: str, backend: str, entry: Any, asdefault: bool) -> PrimitiveTable:
        per_platform = dict(self.kernels[platform])
        per_platform[backend] = entry
        kernels = dict(self.kernels)
        kernels[platform] = frozen_map(per_platform)
        defaults = dict(self.defaults)
        if asdefault:
            defaults[platform] = backend
        return attrs.evolve(self, kernels=frozen_map(kernels), defaults=frozen_map(defaults))

    def with_default(self, platform: str, backend: str | None) -> PrimitiveTable:
        defaults = dict(self.defaults)
        if backend is None:
            defaults.pop(platform, None)
        else:
            defaults[platform] = backend
        return attrs.evolve(self, defaults=frozen_map(defaults))

    def content(self) -> tuple:
        """What resolution reads from this table, as a hashable value (kernels by identity)."""
        return self._content


@attrs.frozen(eq=False)
class ConfigSnapshot:
    """One immutable state of the whole configuration.

    Snapshots compare and hash by identity, which makes them cheap cache
    keys; the runtime publishes the same object again when a configuration
    comes back, so equal contents are usually one object.

    Attributes:
        version: the key of this configuration's content in JAX's caches (a
            content that was current before gets its key back; see
            :mod:`eventjax.config.runtime`).
        backends: the global backend per platform (``None``: unset).
        primitives: every registered primitive's kernel table, by its uid.
        settings: the backends' own settings, by names each backend owns
            (config reads none of them; a change gives a new key, like any
            other content).
    """

    version: int = attrs.field(default=0, validator=attrs.validators.ge(0))
    backends: Mapping[str, str | None] = attrs.field(
        factory=lambda: frozen_map((p, None) for p in PLATFORMS),
        validator=_check_platform_keys,
    )
    primitives: Mapping[int, PrimitiveTable] = attrs.field(factory=frozen_map)
    settings: Mapping[str, Any] = attrs.field(factory=frozen_map)

    def content(self) -> tuple:
        """Everything but the key, as a hashable value: equal for configurations that resolve alike."""
        return (tuple(self.backends.items()),
                tuple((uid, table.content()) for uid, table in self.primitives.items()),
                tuple(sorted(self.settings.items())))

    def known_backends(self, platform: str) -> tuple[str, ...]:
        """Every backend name some registered primitive has for ``platform``."""
        seen: dict[str, None] = {}
        for table in self.primitives.values():
            seen.update(dict.fromkeys(table.kernels[platform]))
        return tuple(seen)
