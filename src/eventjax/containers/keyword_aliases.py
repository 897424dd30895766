"""brainevent's operand keywords on the top-level functions, until the next release.

brainevent names some operands differently (``binary_csrmv(..., v=...)``
where eventjax says ``spikes``; ``fcnmv(..., vector=...)`` for ``v``;
``matrix=`` for ``B``). The top-level functions still take those keywords,
with a ``DeprecationWarning`` naming eventjax's; ``eventjax.compat.brainevent``
has the functions with brainevent's signatures.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable

from eventjax.kernels.csr import binary_csrmv as _binary_csrmv
from eventjax.kernels.fixed_conn import binary_fcnmm as _binary_fcnmm
from eventjax.kernels.fixed_conn import fcnmm as _fcnmm
from eventjax.kernels.fixed_conn import fcnmv as _fcnmv

__all__ = ['accept_keywords', 'binary_csrmv', 'binary_fcnmm', 'fcnmm', 'fcnmv']


def accept_keywords(fn: Callable, **renamed: str) -> Callable:
    """``fn`` that also takes each old keyword of ``renamed`` (old name -> eventjax name), with a warning.

    Example:
        >>> import warnings
        >>> f = accept_keywords(lambda x, *, scale: x * scale, factor='scale')
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter('ignore', DeprecationWarning)
        ...     f(2, factor=3)
        6
    """
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        for old, new in renamed.items():
            if old in kwargs:
                if new in kwargs:
                    raise TypeError(f'{fn.__name__}(): got both {old}= and {new}=; {old} is another name for '
                                    f'{new}, pass only {new}=.')
                warnings.warn(f"eventjax.{fn.__name__}(): {old}= is brainevent's keyword and leaves eventjax's "
                              f'function in the next release; pass {new}= (or call '
                              f'eventjax.compat.brainevent.{fn.__name__}, with brainevent\'s signature).',
                              DeprecationWarning, stacklevel=2)
                kwargs[new] = kwargs.pop(old)
        return fn(*args, **kwargs)

    return wrapper


binary_csrmv = accept_keywords(_binary_csrmv, v='spikes')
fcnmv = accept_keywords(_fcnmv, vector='v')
fcnmm = accept_keywords(_fcnmm, matrix='B')
binary_fcnmm = accept_keywords(_binary_fcnmm, matrix='B')
