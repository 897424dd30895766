"""The handler's own error messages are fixed byte arrays (no numba string code is compiled for them)."""

import numpy as np
import pytest

pytest.importorskip('numba')

from eventjax.backends.numba import codegen as numba_codegen  # noqa: E402
from eventjax.backends.numba import intrinsics as numba_intrinsics  # noqa: E402


class TestMessageBytes:
    def test_a_message_is_ascii_and_nul_terminated_and_cut_to_the_error_buffer(self):
        assert bytes(numba_intrinsics.message_bytes('naïve')) == b'na?ve\0'
        long = numba_intrinsics.message_bytes('x' * 10_000)
        assert long.size == numba_intrinsics.ERROR_BUFFER_LEN and long[-1] == 0

    def test_the_handler_source_carries_its_messages_as_byte_arrays_not_string_literals(self):
        src = numba_codegen.handler_source('k', [(np.dtype('float32'), 1)], [(np.dtype('int32'), 2)], False, False)
        assert ("message_bytes('numba kernel k: output 0 must be int32[rank 2], XLA passed another dtype or rank')"
                in src)
        handler_body = src[src.index('def handler'):]
        assert 'message_bytes' not in handler_body and 'fail(api, A.ERRC_INVALID_ARGUMENT, _M' in handler_body
        assert not any(line.strip().startswith('return as_voidptr(fail') and '"' in line
                       for line in handler_body.splitlines())
