"""The memory floor: the bytes each kind of product must move, counted by hand on tiny matrices."""

import numpy as np

from benchmarks.floor import dense_bytes, lines_bytes, sparse_bytes

IDX = np.array([[0, 1], [1, 2], [2, 3], [3, 0]], np.int32)  # n = 4, k = 2


class TestLines:
    def test_offsets_in_one_cache_line_count_it_once(self):
        assert lines_bytes([0, 4, 60]) == 64

    def test_offsets_in_distinct_lines_count_each(self):
        assert lines_bytes([0, 64, 640]) == 192


class TestSparse:
    def test_scatter_counts_events_the_indptr_line_the_event_rows_and_the_output(self):
        events = np.array([True, False, True, False])
        # events 4 + one line holding indptr[0..3] + rows 0 and 2 (2 x 2 x (4 + 4)) + output 4 x 4
        assert sparse_bytes(IDX, events, transpose=True) == 4 + 64 + 32 + 16

    def test_fcn_scatter_has_no_indptr(self):
        events = np.array([True, False, True, False])
        assert sparse_bytes(IDX, events, transpose=True, csr=False) == 4 + 32 + 16

    def test_gather_counts_all_indices_and_the_lines_of_the_event_entries_weights(self):
        events = np.array([True, False, False, False])
        # column 0 sits at entries 0 and 7: byte offsets 0 and 28 of data, one line
        assert sparse_bytes(IDX, events, transpose=False) == 4 + 5 * 4 + 8 * 4 + 64 + 16

    def test_a_float_product_reads_every_entry(self):
        x = np.ones(4, np.float32)
        assert sparse_bytes(IDX, x, transpose=False, event=False) == 5 * 4 + 8 * (4 + 4) + 16 + 16
        assert sparse_bytes(IDX, x, transpose=False, event=False, csr=False) == 8 * (4 + 4) + 16 + 16

    def test_a_batch_of_events_reads_the_rows_with_an_event_in_any_column(self):
        events = np.zeros((4, 3), bool)
        events[1, 2] = True
        assert sparse_bytes(IDX, events, transpose=True, csr=False) == 12 + 1 * 2 * 8 + 4 * 3 * 4

    def test_no_events_still_reads_the_events_and_writes_the_output(self):
        events = np.zeros(4, bool)
        assert sparse_bytes(IDX, events, transpose=True) == 4 + 16
        assert sparse_bytes(IDX, events, transpose=False) == 4 + 20 + 32 + 16


class TestDense:
    def test_scatter_reads_the_event_rows(self):
        assert dense_bytes(np.array([True, False, True, False]), transpose=True) == 4 + 2 * 4 * 4 + 16

    def test_gather_reads_per_row_the_lines_holding_an_event_column(self):
        events = np.zeros(64, bool)
        events[[0, 3, 16]] = True  # columns 0 and 3 share a line, 16 is in the next
        assert dense_bytes(events, transpose=False) == 64 + 64 * 128 + 64 * 4
