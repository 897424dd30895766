"""The handler's error text is built from bytes and digits (no numba strings)."""

import numpy as np
import pytest

pytest.importorskip('numba')

from eventjax.backends import numba_codegen, numba_intrinsics  # noqa: E402


def _text(buf):
    return bytes(buf[:list(buf).index(0)]).decode()


class TestMessageBytes:
    @pytest.mark.parametrize('n', [0, 7, -42, 1234567890123, np.iinfo(np.int64).max])
    def test_a_count_is_written_in_decimal_after_the_message(self, n):
        err = np.zeros(64, np.uint8)
        pos = numba_intrinsics._put_bytes(err, 0, numba_intrinsics.message_bytes('got '))
        numba_intrinsics._put_int(err, pos, np.int64(n))
        assert _text(err) == f'got {n}'

    def test_a_long_message_is_cut_to_the_buffer_and_stays_terminated(self):
        err = np.zeros(8, np.uint8)
        pos = numba_intrinsics._put_bytes(err, 0, numba_intrinsics.message_bytes('0123456789'))
        numba_intrinsics._put_int(err, pos, np.int64(99))
        assert _text(err) == '0123456' and err[-1] == 0

    def test_the_handler_source_carries_its_messages_as_byte_arrays_not_string_literals(self):
        src = numba_codegen.handler_source('k', [(np.dtype('float32'), 1)], [(np.dtype('int32'), 2)], False, False)
        assert "message_bytes('numba kernel k: output 0 must be int32[rank 2], got XLA ')" in src
        assert 'fail_buffer(api, A.ERRC_INVALID_ARGUMENT, _M' in src
        handler_body = src[src.index('def handler'):]
        assert 'message_bytes' not in handler_body
