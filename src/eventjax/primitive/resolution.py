"""Backend resolution: from one snapshot to the kernel each platform will run.

Resolution happens once per call, at bind time, for every platform. Its
result, a :class:`Resolved`, travels in the bind parameters, so the lowering
rules read their choice from their parameters and never from the global
state, and the choice is part of every cache key JAX builds from those
parameters. Which platform's choice runs is decided by the lowering itself:
JAX lowers a primitive with the rule of the platform it compiles for, which
need not be the default device's (``.lower(lowering_platforms=('tpu',))``
from a CPU host compiles the TPU kernels). A per-call backend the primitive
lacks on that platform therefore raises when that platform is lowered for.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import attrs

from eventjax.config import PLATFORMS, ConfigSnapshot
from eventjax.errors import BackendNotFoundError

__all__ = ['KernelEntry', 'MissingBackend', 'Resolved', 'resolve']


@attrs.frozen(eq=False, repr=False)
class KernelEntry:
    """One registered kernel generator; compares by identity."""

    prim_name: str
    platform: str
    backend: str
    generator: Callable[..., Any]

    def __repr__(self) -> str:
        return f'{self.backend}@{self.platform}'


@attrs.frozen(repr=False)
class MissingBackend:
    """A per-call backend the primitive lacks on one platform; lowering there raises."""

    prim_name: str
    platform: str
    requested: str
    available: tuple[str, ...]

    def __repr__(self) -> str:
        return f'missing:{self.requested}@{self.platform}'

    def error(self) -> BackendNotFoundError:
        return BackendNotFoundError(missing_backend_message(
            self.prim_name, self.platform, self.requested, self.available))


def missing_backend_message(name: str, platform: str, requested: str, available: tuple[str, ...]) -> str:
    if available:
        fix = f'pass backend= one of {", ".join(map(repr, available))}, or omit backend= to use the default'
        have = f'it has {", ".join(map(repr, available))}'
    else:
        fix = 'run it on a platform that has a kernel'
        have = 'it has no kernel on this platform'
    return (f'primitive {name!r} has no {requested!r} kernel for platform {platform!r} '
            f'({have}); {fix}.')


@attrs.frozen(repr=False)
class Resolved:
    """The resolved kernel of every platform plus what each platform offers.

    ``choices`` has one item per platform in ``PLATFORMS`` order: a
    :class:`KernelEntry`, a :class:`MissingBackend`, or None (no kernel).
    ``available`` lists each platform's backend names, for error messages.
    """

    choices: tuple[Any, ...]
    available: tuple[tuple[str, ...], ...]
    prim_name: str = ''

    def choice(self, platform: str):
        return self.choices[PLATFORMS.index(platform)]

    def backends_of(self, platform: str) -> tuple[str, ...]:
        return self.available[PLATFORMS.index(platform)]

    def platforms_with_kernels(self) -> tuple[str, ...]:
        return tuple(p for p, names in zip(PLATFORMS, self.available) if names)

    def __repr__(self) -> str:
        return ','.join(f'{p}={c!r}' for p, c in zip(PLATFORMS, self.choices))


@functools.lru_cache(maxsize=4096)
def resolve(snap: ConfigSnapshot, uid: int, override: tuple, requested: str | None) -> Resolved:
    """Pick each platform's kernel: per-call > thread override > global > primitive default.

    A pure function of its arguments (snapshots hash by identity), hence the
    cache: the per-call cost is one dictionary look-up. A global or override
    backend the primitive lacks is skipped; a per-call one it lacks on every
    platform raises here, and one it lacks on some platform raises when that
    platform is lowered for (eager calls lower at once, so they raise at once).
    """
    table = snap.primitives[uid]
    overrides = dict(override)
    choices, available = [], []
    for platform in PLATFORMS:
        kernels = table.kernels[platform]
        names = tuple(kernels)
        available.append(names)
        if requested is not None:
            if requested in kernels:
                choices.append(kernels[requested])
            else:
                choices.append(MissingBackend(table.name, platform, requested, names) if names else None)
            continue
        for candidate in (overrides.get(platform), snap.backends[platform], table.default(platform)):
            if candidate is not None and candidate in kernels:
                choices.append(kernels[candidate])
                break
        else:
            choices.append(None)
    resolved = Resolved(tuple(choices), tuple(available), table.name)
    if requested is not None:
        if not any(requested in names for names in available):
            raise BackendNotFoundError(
                f'primitive {table.name!r} has no {requested!r} kernel on any platform; '
                f'its backends are '
                + '; '.join(f'{p!r}: {", ".join(map(repr, n)) or "none"}' for p, n in zip(PLATFORMS, available))
                + '. Pass one of those as backend=, or omit backend=.'
            )
    return resolved
