"""A mirror of the XLA FFI C ABI (``xla/ffi/api/c_api.h``), and nothing else.

Byte offsets and sizes are for the 64-bit ABIs jaxlib ships (pointers and
``size_t`` are 8 bytes). C enums are 4 bytes; where one is followed by a
pointer or an ``int64_t`` the compiler pads it to 8, so an enum field must be
read as a 32-bit integer, never as a 64-bit word.

The API version is read from the header of the installed jaxlib, so a handler
always announces the version of the runtime it runs in.
"""

from __future__ import annotations

import functools
import os
import re

import numpy as np

# --- XLA_FFI_Extension_Base / XLA_FFI_Metadata_Extension -------------------
EXTENSION_METADATA = 1          # XLA_FFI_Extension_Metadata
EXT_BASE_STRUCT_SIZE = 0        # size_t struct_size
EXT_BASE_TYPE = 8               # XLA_FFI_Extension_Type (int32)
EXT_METADATA_PTR = 24           # XLA_FFI_Metadata* metadata

# --- XLA_FFI_Metadata (api_version is an inline XLA_FFI_Api_Version) -------
METADATA_API_VERSION = 8
METADATA_API_MAJOR = 8 + 16     # int major_version
METADATA_API_MINOR = 8 + 20     # int minor_version
METADATA_TRAITS = 32            # uint32 traits
API_VERSION_STRUCT_SIZE = 24    # XLA_FFI_Api_Version_STRUCT_SIZE

# --- XLA_FFI_CallFrame ------------------------------------------------------
FRAME_STRUCT_SIZE = 0
FRAME_EXTENSION_START = 8
FRAME_API = 16
FRAME_CTX = 24
FRAME_STAGE = 32                # XLA_FFI_ExecutionStage (int32)
FRAME_ARGS = 40                 # XLA_FFI_Args, inline
FRAME_RETS = 80                 # XLA_FFI_Rets, inline
FRAME_ATTRS = 120               # XLA_FFI_Attrs, inline
CALL_FRAME_STRUCT_SIZE = 168    # XLA_FFI_CallFrame_STRUCT_SIZE (up to attrs)
STAGE_EXECUTE = 3               # XLA_FFI_ExecutionStage_EXECUTE

# --- XLA_FFI_Args / XLA_FFI_Rets (same layout), offsets within the struct ---
LIST_SIZE = 16                  # int64_t size
LIST_TYPES = 24                 # XLA_FFI_ArgType* / XLA_FFI_RetType* (int32[])
LIST_ITEMS = 32                 # void** args / rets
ARG_TYPE_BUFFER = 1             # XLA_FFI_ArgType_BUFFER == XLA_FFI_RetType_BUFFER

# --- XLA_FFI_Buffer ---------------------------------------------------------
BUFFER_DTYPE = 16               # XLA_FFI_DataType (int32)
BUFFER_DATA = 24
BUFFER_RANK = 32
BUFFER_DIMS = 40

# --- XLA_FFI_Api function table --------------------------------------------
API_ERROR_CREATE = 48           # XLA_FFI_Error_Create*

# --- XLA_FFI_Error_Create_Args ----------------------------------------------
ERROR_ARGS_MESSAGE = 16         # const char* message
ERROR_ARGS_ERRC = 24            # XLA_FFI_Error_Code (int32)
ERROR_ARGS_STRUCT_SIZE = 28     # XLA_FFI_Error_Create_Args_STRUCT_SIZE
ERROR_ARGS_WORDS = 4            # 32 bytes of storage, rounded up

# --- XLA_FFI_Error_Code -----------------------------------------------------
ERRC_INVALID_ARGUMENT = 3
ERRC_OUT_OF_RANGE = 11
ERRC_INTERNAL = 13

# --- XLA_FFI_DataType -------------------------------------------------------
DATATYPE_PRED = 1
# numpy dtype name: (XLA name, code), in the enum's order.
_DATATYPE_CODES = {
    'bool': ('PRED', 1), 'int8': ('S8', 2), 'int16': ('S16', 3), 'int32': ('S32', 4), 'int64': ('S64', 5),
    'uint8': ('U8', 6), 'uint16': ('U16', 7), 'uint32': ('U32', 8), 'uint64': ('U64', 9),
    'float32': ('F32', 11), 'float64': ('F64', 12), 'complex64': ('C64', 15), 'complex128': ('C128', 18),
}
DATATYPE = {np.dtype(name): code for name, (_, code) in _DATATYPE_CODES.items()}
DATATYPE_F16 = 10
DATATYPE_BF16 = 16


def _header_path() -> str:
    import jaxlib

    return os.path.join(os.path.dirname(jaxlib.__file__), 'include', 'xla', 'ffi', 'api', 'c_api.h')


@functools.cache
def api_version() -> tuple[int, int]:
    """The XLA FFI API version ``(major, minor)`` of the installed jaxlib.

    Returns:
        A pair of ints taken from ``XLA_FFI_API_MAJOR``/``XLA_FFI_API_MINOR``
        in jaxlib's ``c_api.h``.

    Example:
        >>> major, minor = api_version()
    """
    path = _header_path()
    try:
        with open(path, encoding='utf-8') as f:
            text = f.read()
    except OSError as e:
        raise RuntimeError(
            f'eventjax numba backend: cannot read the XLA FFI header {path!r} to learn the FFI API version; '
            f'reinstall jaxlib, whose wheel ships it.'
        ) from e
    found = {}
    for part in ('MAJOR', 'MINOR'):
        m = re.search(rf'#define\s+XLA_FFI_API_{part}\s+(\d+)', text)
        if m is None:
            raise RuntimeError(
                f"eventjax numba backend: XLA_FFI_API_{part} not found in {path!r}; this jaxlib's FFI header "
                f'is not one the bridge knows; use a jaxlib version eventjax supports.'
            )
        found[part] = int(m.group(1))
    return found['MAJOR'], found['MINOR']
