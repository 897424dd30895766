"""What runs when a standard primitive is called: per platform, the kernel and each wrapper around it.

``eventjax info --kernel NAME [--backend B]`` prints :func:`kernel_chain`.
"""

from __future__ import annotations

import difflib
import importlib.util
import pathlib
import re
import sys

from eventjax.config import PLATFORMS, snapshot
from eventjax.config.runtime import current_override
from eventjax.kernels.common.operator import kernel_sources
from eventjax.primitive.chain import chain, where
from eventjax.primitive.resolution import resolve
from eventjax.primitive.tags import get_registry

__all__ = ['kernel_chain']

_PACKAGE_ROOT = pathlib.Path(__file__).resolve().parents[3]  # the folder holding eventjax/


def kernel_chain(name: str, backend: str | None = None) -> list[str]:
    """The lines ``eventjax info --kernel NAME`` prints: per platform, the kernel that runs and its wrappers.

    Each wrapper is listed outermost first, with its file and line, down to
    the kernel generator in the family's ``<backend>_impl`` module. Without
    ``backend``, each platform's kernel is the one a call would pick under the
    current configuration.

    Example:
        >>> import eventjax as ej
        >>> _ = ej.get_registry()  # loads every standard primitive
        >>> kernel_chain('binary_csrmv', 'jax')[1].split()[:2]
        ['cpu:', 'jax']
    """
    registry = get_registry()
    if name not in registry:
        close = difflib.get_close_matches(name, sorted(registry), n=3)
        hint = f" Did you mean {', '.join(map(repr, close))}?" if close else ' eventjax info lists no kernels; ' \
            'ej.get_all_primitive_names() lists the primitives.'
        raise ValueError(f'{name!r} is not a registered primitive.{hint}')
    prim = registry[name]
    if backend is not None and not any(backend in prim.available_backends(p) for p in PLATFORMS):
        raise ValueError(f'{name} has no {backend!r} kernel on any platform; its backends: '
                         + '; '.join(f'{p}: {", ".join(prim.available_backends(p)) or "none"}' for p in PLATFORMS)
                         + '.')
    snap = snapshot()
    table = snap.primitives[prim._uid]
    picked = resolve(snap, prim._uid, current_override(), None) if backend is None else None
    lines = [f'{name} (outermost wrapper first; file:line)']
    for i, platform in enumerate(PLATFORMS):
        kernels = table.kernels[platform]
        entry = kernels.get(backend) if backend is not None else picked.choices[i]
        if entry is None:
            why = f'no {backend} kernel' if backend is not None else 'no kernel'
            lines.append(f'{platform}: {why} (registered: {", ".join(kernels) or "none"})')
            continue
        others = [b for b in kernels if b != entry.backend]
        lines.append(f'{platform}: {entry.backend}' + (f'  (also registered: {", ".join(others)})' if others else ''))
        lines += [f'  {_here(fn)}  {_label(fn)}: {role}' for fn, role in _hops(name, entry.backend, entry.generator)]
    return lines


def _hops(name, backend, generator):
    hops = chain(generator)
    module = kernel_sources().get(name, {}).get(backend)
    if module is None:
        return hops
    innermost = hops[-1][0]
    # The generator registered is the kernel's own when its module is loaded and names it; else the bridge
    # registered an adapter that loads the module at the first lowering.
    loaded = sys.modules.get(module)
    if getattr(loaded, f'{name}_kernel', None) is innermost:
        made = _here(innermost)
        hops[-1] = (_KernelAt(module, f'{name}_kernel'), 'the kernel generator' + (
            f' (made at {made})' if not made.startswith(module.replace('.', '/') + '.py') else ''))
    else:
        hops[-1] = (innermost, f"the {backend} bridge's adapter of standard kernels (finds {name}_kernel)")
        hops.append((_KernelAt(module, f'{name}_kernel'), 'the kernel generator'))
    return hops


class _KernelAt:
    """A kernel generator where its module names it, found in the source (its backend's package may be missing)."""

    def __init__(self, module: str, attr: str):
        self.module, self.attr = module, attr

    def location(self) -> tuple[str, int]:
        spec = importlib.util.find_spec(self.module)
        origin = spec.origin if spec is not None else None
        if origin is None:
            return '?', 0
        text, name = pathlib.Path(origin).read_text(), re.escape(self.attr)
        match = re.search(rf'^(def {name}\b|[\w, ]*\b{name}\b[\w, ]*=)', text, re.MULTILINE)
        return origin, text.count('\n', 0, match.start()) + 1 if match else 0


def _here(fn) -> str:
    path, line = fn.location() if isinstance(fn, _KernelAt) else where(fn)
    try:
        path = pathlib.Path(path).resolve().relative_to(_PACKAGE_ROOT).as_posix()
    except ValueError:
        pass
    return f'{path}:{line}'


def _label(fn) -> str:
    if isinstance(fn, _KernelAt):
        return f'{fn.module}.{fn.attr}'
    return getattr(fn, '__qualname__', type(fn).__qualname__)
