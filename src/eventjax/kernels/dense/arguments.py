"""Argument checks shared by the dense operators (trace time, shapes and dtypes only)."""

from __future__ import annotations

from eventjax.kernels.common import check_events, check_length, check_rank, check_weights
from eventjax.kernels.common.checks import check_transpose
from eventjax.kernels.common.units import attach, split_product

__all__ = ['check_dense_call', 'checked_call']


def check_dense_call(who, weights, spikes, *, transpose, matrix, validate=True):
    """Validate a dense product's operands; returns ``(weights, spikes)``.

    ``validate`` is accepted for a signature uniform with the sparse
    families; dense weights have no index structure to check.
    """
    check_transpose(who, transpose)
    weights = check_weights(who, 'weights', weights)
    check_rank(who, 'weights', weights, (2,))
    spikes = check_events(who, 'spikes', spikes)
    check_rank(who, 'spikes', spikes, (2,) if matrix else (1,))
    m, n = weights.shape
    want, what = (m, 'rows of weights, as transpose=True') if transpose else (n, 'columns of weights')
    check_length(who, 'spikes', spikes, want, what)
    return weights, spikes


def checked_call(op, weights, spikes, *, transpose, backend, validate):
    """Check a dense event product's operands for the declared operator ``op``, then bind it."""
    weights, spikes, unit = split_product(weights, spikes)
    weights, spikes = check_dense_call(f'{op.name}()', weights, spikes, transpose=transpose, matrix=op.matrix,
                                       validate=validate)
    return attach(op.bind(weights, spikes, transpose=transpose, backend=backend), unit)
