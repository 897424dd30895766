"""What kind of operand ``@`` was handed: a plain array, a CSR-like or a fixed-number container.

The event containers know the sparse ones by their arrays rather than by
class, because the sparse containers' modules import the event ones.
"""

from __future__ import annotations

import jax
import numpy as np

__all__ = ['check_side', 'is_csr', 'is_fcn', 'is_plain_array']


def is_plain_array(x) -> bool:
    """Whether ``x`` is an array operand rather than an eventjax container (which marks itself)."""
    return isinstance(x, (jax.Array, np.ndarray)) or (hasattr(x, 'shape') and hasattr(x, 'dtype')
                                                       and not getattr(x, '_eventjax_container', False))


def is_csr(x) -> bool:
    """A CSR or CSC container (known by its arrays: the csr module imports this one)."""
    return all(hasattr(x, a) for a in ('data', 'indices', 'indptr', 'stored_shape', 'transposed'))


def is_fcn(x) -> bool:
    """A FixedNumConn container (known by its arrays, as :func:`is_csr`)."""
    return all(hasattr(x, a) for a in ('weights', 'indices', 'stored_shape', 'transposed', 'tocsr'))


def check_side(form, size, A, events_are_rows):
    """Refuse events whose count is not the side of ``A`` they index."""
    side = A.stored_shape[0 if events_are_rows else 1]
    if side != size:
        raise ValueError(f'{form} of {size} neurons cannot multiply a matrix of shape {A.shape} on the side of '
                         f'{side}; check the operand order or the matrix.')
