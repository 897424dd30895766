"""Old module names kept until a stated release: their documented names, each warning where it is used."""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable

__all__ = ['moved_names']


def moved_names(old: str, new: str, removed_in: str, names: tuple[str, ...]) -> Callable[[str], object]:
    """The module ``__getattr__`` of ``eventjax.backends.<old>``, whose ``names`` moved to ``eventjax.backends.<new>``.

    ``removed_in``: the release that removes the old module, named in each warning.

    Example:
        >>> __getattr__ = moved_names('warp_bridge', 'warp', '0.3.0', ('warp_dtype',))
    """
    def __getattr__(name: str):
        if name in names:
            warnings.warn(f'eventjax.backends.{old}.{name} is deprecated and goes in eventjax {removed_in}; import it '
                          f'from eventjax.backends.{new} '
                          f'(from eventjax.backends.{new} import {name}).', DeprecationWarning, stacklevel=2)
            return getattr(importlib.import_module(f'eventjax.backends.{new}'), name)
        raise AttributeError(f'module eventjax.backends.{old!r} has no attribute {name!r}')
    return __getattr__
