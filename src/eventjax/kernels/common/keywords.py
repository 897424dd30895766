"""brainevent's operand keywords on eventjax's own functions, accepted with a warning until they go."""

from __future__ import annotations

import warnings

__all__ = ['REMOVED_IN', 'operand']

# The release whose functions no longer take brainevent's keywords.
REMOVED_IN = '0.3.0'


def operand(who: str, new: str, value, old: str, old_value):
    """The operand passed as ``new=`` (or positionally), or as brainevent's ``old=`` with a DeprecationWarning.

    ``who`` is the public function; each of its operands with an old keyword
    defaults to None, and this makes it required again.

    Example:
        >>> operand('fcnmv', 'v', [1.0], 'vector', None)
        [1.0]
    """
    if old_value is None:
        if value is None:
            raise TypeError(f"{who}() missing 1 required argument: '{new}'.")
        return value
    if value is not None:
        raise TypeError(f'{who}(): got both {old}= and {new}=; {old} is another name for {new}, pass only {new}=.')
    warnings.warn(f"eventjax.{who}(): {old}= is brainevent's keyword and leaves eventjax's function in "
                  f'{REMOVED_IN}; pass {new}= (or call eventjax.compat.brainevent.{who}, with brainevent\'s '
                  'signature).', DeprecationWarning, stacklevel=3)
    return old_value
