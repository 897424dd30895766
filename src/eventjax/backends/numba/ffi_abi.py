"""A mirror of the XLA FFI C ABI (``xla/ffi/api/c_api.h``), and nothing else.

Each struct the handlers read or write is declared below as a
``ctypes.Structure``, under the C declaration it mirrors, and the byte
offsets the generated handlers use (plain integers, which numba freezes into
the machine code) are taken from those declarations. ctypes lays a struct out
as the C compiler does, so the offsets hold for the 64-bit ABIs jaxlib ships
(pointers and ``size_t`` of 8 bytes); C enums are 4 bytes (``c_int32``), so an
enum field followed by a pointer is padded to 8 and must be read as a 32-bit
integer. Pointers to structs the handlers never enter are ``c_void_p``.
A test compiles the header and checks every offset, size and code here.

The API version is read from the header of the installed jaxlib, so a handler
always announces the version of the runtime it runs in.
"""

from __future__ import annotations

import ctypes
import functools
import os
import re

import numpy as np

_ENUM = ctypes.c_int32  # every C enum of the header is an int


def _struct_size(struct: type[ctypes.Structure], last_field: str) -> int:
    """``XLA_FFI_STRUCT_SIZE(struct, last_field)``: the bytes up to the end of the last field, no padding."""
    field = getattr(struct, last_field)
    return field.offset + field.size


# typedef struct XLA_FFI_Extension_Base {
#   size_t struct_size;
#   XLA_FFI_Extension_Type type;
#   struct XLA_FFI_Extension_Base* next;
# } XLA_FFI_Extension_Base;
class ExtensionBase(ctypes.Structure):
    _fields_ = [('struct_size', ctypes.c_size_t), ('type', _ENUM), ('next', ctypes.c_void_p)]


# struct XLA_FFI_Metadata_Extension {
#   XLA_FFI_Extension_Base extension_base;
#   XLA_FFI_Metadata* metadata;
# };
class MetadataExtension(ctypes.Structure):
    _fields_ = [('extension_base', ExtensionBase), ('metadata', ctypes.c_void_p)]


# struct XLA_FFI_Api_Version {
#   size_t struct_size;
#   XLA_FFI_Extension_Base* extension_start;
#   int major_version;  // out
#   int minor_version;  // out
# };
class ApiVersion(ctypes.Structure):
    _fields_ = [('struct_size', ctypes.c_size_t), ('extension_start', ctypes.c_void_p),
                ('major_version', ctypes.c_int), ('minor_version', ctypes.c_int)]


# struct XLA_FFI_Metadata {
#   size_t struct_size;
#   XLA_FFI_Api_Version api_version;
#   XLA_FFI_Handler_Traits traits;
#   XLA_FFI_TypeId state_type_id;  // struct XLA_FFI_TypeId { int64_t type_id; }
# };
class Metadata(ctypes.Structure):
    _fields_ = [('struct_size', ctypes.c_size_t), ('api_version', ApiVersion), ('traits', ctypes.c_uint32),
                ('state_type_id', ctypes.c_int64)]


# struct XLA_FFI_Args {                  struct XLA_FFI_Rets: the same, with
#   size_t struct_size;                  XLA_FFI_RetType* types and void** rets
#   XLA_FFI_Extension_Base* extension_start;
#   int64_t size;
#   XLA_FFI_ArgType* types;  // length == size
#   void** args;             // length == size
# };
class Args(ctypes.Structure):
    _fields_ = [('struct_size', ctypes.c_size_t), ('extension_start', ctypes.c_void_p), ('size', ctypes.c_int64),
                ('types', ctypes.c_void_p), ('args', ctypes.c_void_p)]


# struct XLA_FFI_Attrs {
#   size_t struct_size;
#   XLA_FFI_Extension_Base* extension_start;
#   int64_t size;
#   XLA_FFI_AttrType* types;   // length == size
#   XLA_FFI_ByteSpan** names;  // length == size
#   void** attrs;              // length == size
# };
class Attrs(ctypes.Structure):
    _fields_ = [('struct_size', ctypes.c_size_t), ('extension_start', ctypes.c_void_p), ('size', ctypes.c_int64),
                ('types', ctypes.c_void_p), ('names', ctypes.c_void_p), ('attrs', ctypes.c_void_p)]


# struct XLA_FFI_CallFrame {
#   size_t struct_size;
#   XLA_FFI_Extension_Base* extension_start;
#   const XLA_FFI_Api* api;
#   XLA_FFI_ExecutionContext* ctx;
#   XLA_FFI_ExecutionStage stage;
#   XLA_FFI_Args args;
#   XLA_FFI_Rets rets;
#   XLA_FFI_Attrs attrs;
#   XLA_FFI_Future* future;  // out
# };
class CallFrame(ctypes.Structure):
    _fields_ = [('struct_size', ctypes.c_size_t), ('extension_start', ctypes.c_void_p), ('api', ctypes.c_void_p),
                ('ctx', ctypes.c_void_p), ('stage', _ENUM), ('args', Args), ('rets', Args), ('attrs', Attrs),
                ('future', ctypes.c_void_p)]


# struct XLA_FFI_Buffer {
#   size_t struct_size;
#   XLA_FFI_Extension_Base* extension_start;
#   XLA_FFI_DataType dtype;
#   void* data;
#   int64_t rank;
#   int64_t* dims;  // length == rank
# };
class Buffer(ctypes.Structure):
    _fields_ = [('struct_size', ctypes.c_size_t), ('extension_start', ctypes.c_void_p), ('dtype', _ENUM),
                ('data', ctypes.c_void_p), ('rank', ctypes.c_int64), ('dims', ctypes.c_void_p)]


# struct XLA_FFI_Api {
#   size_t struct_size;
#   XLA_FFI_Extension_Base* extension_start;
#   XLA_FFI_Api_Version api_version;
#   const XLA_FFI_InternalApi* internal_api;
#   _XLA_FFI_API_STRUCT_FIELD(XLA_FFI_Error_Create);  // a function pointer
#   ...                                                // (the rest is not read)
# };
class Api(ctypes.Structure):
    _fields_ = [('struct_size', ctypes.c_size_t), ('extension_start', ctypes.c_void_p),
                ('api_version', ApiVersion), ('internal_api', ctypes.c_void_p),
                ('XLA_FFI_Error_Create', ctypes.c_void_p)]


# struct XLA_FFI_Error_Create_Args {
#   size_t struct_size;
#   XLA_FFI_Extension_Base* extension_start;
#   const char* message;
#   XLA_FFI_Error_Code errc;
# };
class ErrorCreateArgs(ctypes.Structure):
    _fields_ = [('struct_size', ctypes.c_size_t), ('extension_start', ctypes.c_void_p),
                ('message', ctypes.c_char_p), ('errc', _ENUM)]


# --- The offsets and sizes the handlers use ----------------------------------
EXTENSION_METADATA = 1          # XLA_FFI_Extension_Metadata
EXT_BASE_STRUCT_SIZE = ExtensionBase.struct_size.offset
EXT_BASE_TYPE = ExtensionBase.type.offset
EXT_METADATA_PTR = MetadataExtension.metadata.offset

METADATA_API_VERSION = Metadata.api_version.offset
METADATA_API_MAJOR = Metadata.api_version.offset + ApiVersion.major_version.offset
METADATA_API_MINOR = Metadata.api_version.offset + ApiVersion.minor_version.offset
METADATA_TRAITS = Metadata.traits.offset
API_VERSION_STRUCT_SIZE = _struct_size(ApiVersion, 'minor_version')

FRAME_STRUCT_SIZE = CallFrame.struct_size.offset
FRAME_EXTENSION_START = CallFrame.extension_start.offset
FRAME_API = CallFrame.api.offset
FRAME_CTX = CallFrame.ctx.offset
FRAME_STAGE = CallFrame.stage.offset
FRAME_ARGS = CallFrame.args.offset
FRAME_RETS = CallFrame.rets.offset
FRAME_ATTRS = CallFrame.attrs.offset
CALL_FRAME_STRUCT_SIZE = _struct_size(CallFrame, 'attrs')  # XLA_FFI_CallFrame_STRUCT_SIZE
STAGE_EXECUTE = 3               # XLA_FFI_ExecutionStage_EXECUTE

# Within XLA_FFI_Args and XLA_FFI_Rets (one layout).
LIST_SIZE = Args.size.offset
LIST_TYPES = Args.types.offset
LIST_ITEMS = Args.args.offset
ARG_TYPE_BUFFER = 1             # XLA_FFI_ArgType_BUFFER == XLA_FFI_RetType_BUFFER

BUFFER_DTYPE = Buffer.dtype.offset
BUFFER_DATA = Buffer.data.offset
BUFFER_RANK = Buffer.rank.offset
BUFFER_DIMS = Buffer.dims.offset

API_ERROR_CREATE = Api.XLA_FFI_Error_Create.offset

ERROR_ARGS_MESSAGE = ErrorCreateArgs.message.offset
ERROR_ARGS_ERRC = ErrorCreateArgs.errc.offset
ERROR_ARGS_STRUCT_SIZE = _struct_size(ErrorCreateArgs, 'errc')
ERROR_ARGS_WORDS = (ctypes.sizeof(ErrorCreateArgs) + 7) // 8  # storage reserved, padding included

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
