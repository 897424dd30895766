"""The differential test of delayed delivery: drawn problems on every backend and transformation."""

from hypothesis import given

from tests.differential.delay import (
    check_delivery,
    check_layout_delivery,
    deliveries,
    delivery_backends,
    layout_backends,
)
from tests.differential.profile import differential_settings, past_the_simplest, reproducible


@reproducible('csr_delay_deliver')
@differential_settings()
@given(deliveries())
@past_the_simplest
def test_csr_delay_deliver_agrees_with_the_oracle_on_every_backend(problem):
    assert check_delivery(problem, delivery_backends()) > 0


@reproducible('csr_delay_deliver_layout')
@differential_settings()
@given(deliveries())
@past_the_simplest
def test_the_layout_delivery_agrees_with_the_oracle_on_every_backend(problem):
    assert check_layout_delivery(problem, layout_backends()) > 0
