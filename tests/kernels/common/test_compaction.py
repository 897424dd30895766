"""Event compaction: the listed events, and the capacity the event count selects."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from eventjax.kernels.common.compaction import (
    CHUNK_SLOTS,
    HEAD_FRACTION,
    by_event_chunks,
    by_event_count,
    capacities,
    compact,
)


class TestCompact:
    def test_lists_the_events_in_order_then_pads_with_the_length(self):
        mask = np.zeros(50, bool)
        mask[[3, 7, 8, 49]] = True
        got = jax.jit(lambda m: compact(m, 6))(jnp.asarray(mask))
        np.testing.assert_array_equal(got, [3, 7, 8, 49, 50, 50])

    def test_stops_at_the_capacity(self):
        got = compact(jnp.ones(10, bool), 4)
        np.testing.assert_array_equal(got, [0, 1, 2, 3])


class TestByEventCount:
    @pytest.mark.parametrize(('count', 'want'), [(0, 8), (8, 8), (9, 32), (32, 32), (33, -1), (64, -1)])
    def test_the_smallest_capacity_holding_every_event_is_chosen(self, count, want):
        assert capacities(64) == (8, 32)
        mask = jnp.arange(64) < count
        chosen = jax.jit(lambda m: by_event_count(m, lambda idx: jnp.int32(idx.shape[0]), lambda: jnp.int32(-1)))
        assert int(chosen(mask)) == want

    def test_the_fallback_overrides_every_capacity(self):
        fn = jax.jit(lambda m, f: by_event_count(m, lambda idx: jnp.int32(idx.shape[0]), lambda: jnp.int32(-1),
                                                 fallback=lambda: jnp.int32(-2), use_fallback=f))
        assert int(fn(jnp.arange(64) < 2, True)) == -2
        assert int(fn(jnp.arange(64) < 2, False)) == 8

    def test_a_short_mask_has_no_capacity_and_runs_the_full_branch(self):
        assert capacities(10) == ()
        assert int(by_event_count(jnp.ones(10, bool), lambda idx: jnp.int32(0), lambda: jnp.int32(-1))) == -1


class TestByEventChunks:
    # 100 slots per event in 4,000 neurons: wide passes of 81 neurons after a narrow first one of 10.
    @pytest.mark.parametrize('count', [0, 1, 9, 10, 11, 90, 91, 92, 500, 4000])
    def test_every_event_is_visited_once_across_the_narrow_and_the_wide_passes(self, count):
        m, slots = 4000, 100
        chunk = CHUNK_SLOTS // slots
        assert chunk // HEAD_FRACTION == 10 and chunk == 81
        mask = np.zeros(m, bool)
        mask[np.random.default_rng(count).choice(m, count, replace=False)] = True

        def body(neurons, valid, seen):
            return seen.at[jnp.where(valid, neurons, m)].add(1, mode='drop')

        seen = jax.jit(lambda mk: by_event_chunks(mk, slots, body, jnp.zeros(m, jnp.int32)))(jnp.asarray(mask))
        np.testing.assert_array_equal(np.asarray(seen), mask.astype(np.int32))
