"""ffi_abi.py's struct declarations, offsets, sizes and codes agree with jaxlib's own ``xla/ffi/api/c_api.h``.

A small C program is compiled against the header of the installed jaxlib and prints what the C
compiler makes of every field the mirror names (``offsetof``, ``sizeof``, the enums); a jaxlib that
moves a field fails here instead of corrupting memory at run time.
"""

import ctypes
import shutil
import subprocess

import jax.ffi
import numpy as np
import pytest

from eventjax.backends.numba import ffi_abi

# Each constant of the mirror, and the C expression it must equal.
EXPECTED = {
    'EXTENSION_METADATA': 'XLA_FFI_Extension_Metadata',
    'EXT_BASE_STRUCT_SIZE': 'offsetof(XLA_FFI_Extension_Base, struct_size)',
    'EXT_BASE_TYPE': 'offsetof(XLA_FFI_Extension_Base, type)',
    'EXT_METADATA_PTR': 'offsetof(XLA_FFI_Metadata_Extension, metadata)',
    'METADATA_API_VERSION': 'offsetof(XLA_FFI_Metadata, api_version)',
    'METADATA_API_MAJOR': 'offsetof(XLA_FFI_Metadata, api_version) + offsetof(XLA_FFI_Api_Version, major_version)',
    'METADATA_API_MINOR': 'offsetof(XLA_FFI_Metadata, api_version) + offsetof(XLA_FFI_Api_Version, minor_version)',
    'METADATA_TRAITS': 'offsetof(XLA_FFI_Metadata, traits)',
    'API_VERSION_STRUCT_SIZE': 'XLA_FFI_Api_Version_STRUCT_SIZE',
    'FRAME_STRUCT_SIZE': 'offsetof(XLA_FFI_CallFrame, struct_size)',
    'FRAME_EXTENSION_START': 'offsetof(XLA_FFI_CallFrame, extension_start)',
    'FRAME_API': 'offsetof(XLA_FFI_CallFrame, api)',
    'FRAME_CTX': 'offsetof(XLA_FFI_CallFrame, ctx)',
    'FRAME_STAGE': 'offsetof(XLA_FFI_CallFrame, stage)',
    'FRAME_ARGS': 'offsetof(XLA_FFI_CallFrame, args)',
    'FRAME_RETS': 'offsetof(XLA_FFI_CallFrame, rets)',
    'FRAME_ATTRS': 'offsetof(XLA_FFI_CallFrame, attrs)',
    'CALL_FRAME_STRUCT_SIZE': 'XLA_FFI_CallFrame_STRUCT_SIZE',
    'STAGE_EXECUTE': 'XLA_FFI_ExecutionStage_EXECUTE',
    'LIST_SIZE': 'offsetof(XLA_FFI_Args, size)',
    'LIST_TYPES': 'offsetof(XLA_FFI_Args, types)',
    'LIST_ITEMS': 'offsetof(XLA_FFI_Args, args)',
    'ARG_TYPE_BUFFER': 'XLA_FFI_ArgType_BUFFER',
    'BUFFER_DTYPE': 'offsetof(XLA_FFI_Buffer, dtype)',
    'BUFFER_DATA': 'offsetof(XLA_FFI_Buffer, data)',
    'BUFFER_RANK': 'offsetof(XLA_FFI_Buffer, rank)',
    'BUFFER_DIMS': 'offsetof(XLA_FFI_Buffer, dims)',
    'API_ERROR_CREATE': 'offsetof(XLA_FFI_Api, XLA_FFI_Error_Create)',
    'ERROR_ARGS_MESSAGE': 'offsetof(XLA_FFI_Error_Create_Args, message)',
    'ERROR_ARGS_ERRC': 'offsetof(XLA_FFI_Error_Create_Args, errc)',
    'ERROR_ARGS_STRUCT_SIZE': 'XLA_FFI_Error_Create_Args_STRUCT_SIZE',
    # The storage the bridge reserves, in 8-byte words: the whole struct, padding included.
    'ERROR_ARGS_WORDS': '(sizeof(XLA_FFI_Error_Create_Args) + 7) / 8',
    'ERRC_INVALID_ARGUMENT': 'XLA_FFI_Error_Code_INVALID_ARGUMENT',
    'ERRC_OUT_OF_RANGE': 'XLA_FFI_Error_Code_OUT_OF_RANGE',
    'ERRC_INTERNAL': 'XLA_FFI_Error_Code_INTERNAL',
    'DATATYPE_PRED': 'XLA_FFI_DataType_PRED',
    'DATATYPE_F16': 'XLA_FFI_DataType_F16',
    'DATATYPE_BF16': 'XLA_FFI_DataType_BF16',
}
DATATYPE_NAMES = {'bool': 'PRED', 'int8': 'S8', 'int16': 'S16', 'int32': 'S32', 'int64': 'S64', 'uint8': 'U8',
                  'uint16': 'U16', 'uint32': 'U32', 'uint64': 'U64', 'float32': 'F32', 'float64': 'F64',
                  'complex64': 'C64', 'complex128': 'C128'}
# What the mirror relies on without naming: Rets laid out as Args, 4-byte enums, 8-byte pointers.
LAYOUT = {
    'rets size = args size': ('offsetof(XLA_FFI_Rets, size) == offsetof(XLA_FFI_Args, size)', 1),
    'rets types = args types': ('offsetof(XLA_FFI_Rets, types) == offsetof(XLA_FFI_Args, types)', 1),
    'rets items = args items': ('offsetof(XLA_FFI_Rets, rets) == offsetof(XLA_FFI_Args, args)', 1),
    'ret buffer = arg buffer': ('XLA_FFI_RetType_BUFFER == XLA_FFI_ArgType_BUFFER', 1),
    'sizeof stage': ('sizeof(XLA_FFI_ExecutionStage)', 4),
    'sizeof data type': ('sizeof(XLA_FFI_DataType)', 4),
    'sizeof error code': ('sizeof(XLA_FFI_Error_Code)', 4),
    'sizeof extension type': ('sizeof(XLA_FFI_Extension_Type)', 4),
    'sizeof arg type': ('sizeof(XLA_FFI_ArgType)', 4),
    'sizeof traits': ('sizeof(XLA_FFI_Handler_Traits)', 4),
    'sizeof api version': ('sizeof(XLA_FFI_Api_Version)', ffi_abi.API_VERSION_STRUCT_SIZE),
    'sizeof pointer': ('sizeof(void*)', 8),
}
# Each ctypes declaration of the mirror and the C struct it declares; XLA_FFI_Api is declared up to the
# one function pointer the handlers call, so only its fields are compared, not its size.
STRUCTS = {
    'ExtensionBase': 'XLA_FFI_Extension_Base', 'MetadataExtension': 'XLA_FFI_Metadata_Extension',
    'ApiVersion': 'XLA_FFI_Api_Version', 'Metadata': 'XLA_FFI_Metadata', 'Args': 'XLA_FFI_Args',
    'Attrs': 'XLA_FFI_Attrs', 'CallFrame': 'XLA_FFI_CallFrame', 'Buffer': 'XLA_FFI_Buffer', 'Api': 'XLA_FFI_Api',
    'ErrorCreateArgs': 'XLA_FFI_Error_Create_Args',
}
PREFIXES = {'Api'}


def _struct_layout(module=ffi_abi) -> dict[str, tuple[str, int]]:
    """``{label: (C expression, what the ctypes declaration says)}`` for every field offset and struct size."""
    layout = {}
    for py, c in STRUCTS.items():
        struct = getattr(module, py)
        for field, _ in struct._fields_:
            layout[f'{py}.{field}'] = (f'offsetof({c}, {field})', getattr(struct, field).offset)
        if py not in PREFIXES:
            layout[f'sizeof {py}'] = (f'sizeof({c})', ctypes.sizeof(struct))
    return layout


def _program() -> str:
    lines = [f'  std::printf("%s %lld\\n", "{name}", (long long)({expr}));' for name, expr in _expressions().items()]
    return '#include <cstddef>\n#include <cstdio>\n#include "xla/ffi/api/c_api.h"\n\nint main() {\n' + \
        '\n'.join(lines) + '\n  return 0;\n}\n'


def _expressions() -> dict[str, str]:
    exprs = dict(EXPECTED)
    exprs.update({f'DATATYPE[{dt}]': f'XLA_FFI_DataType_{c}' for dt, c in DATATYPE_NAMES.items()})
    exprs.update({name: expr for name, (expr, _) in LAYOUT.items()})
    exprs.update({name: expr for name, (expr, _) in _struct_layout().items()})
    exprs.update({'XLA_FFI_API_MAJOR': 'XLA_FFI_API_MAJOR', 'XLA_FFI_API_MINOR': 'XLA_FFI_API_MINOR'})
    return exprs


def mirror_values(module=ffi_abi) -> dict[str, int]:
    """What the mirror says for every name the program prints."""
    values = {name: getattr(module, name) for name in EXPECTED}
    values.update({f'DATATYPE[{dt}]': module.DATATYPE[np.dtype(dt)] for dt in DATATYPE_NAMES})
    values.update({name: want for name, (_, want) in LAYOUT.items()})
    values.update({name: got for name, (_, got) in _struct_layout(module).items()})
    values.update(zip(('XLA_FFI_API_MAJOR', 'XLA_FFI_API_MINOR'), module.api_version(), strict=True))
    return values


def mismatches(header: dict[str, int], mirror: dict[str, int]) -> list[str]:
    return [f'{name}: ffi_abi.py says {mirror[name]}, c_api.h says {header[name]}'
            for name in header if mirror[name] != header[name]]


@pytest.fixture(scope='module')
def header_values(tmp_path_factory):
    compiler = shutil.which('c++') or shutil.which('g++') or shutil.which('clang++')
    if compiler is None:
        pytest.skip('no C++ compiler on PATH (the native backend needs one too)')
    folder = tmp_path_factory.mktemp('abi')
    (folder / 'abi.cc').write_text(_program())
    build = subprocess.run([compiler, '-std=c++17', '-I', jax.ffi.include_dir(), 'abi.cc', '-o', 'abi'],
                           cwd=folder, capture_output=True, text=True, timeout=120)
    assert build.returncode == 0, build.stderr
    run = subprocess.run([str(folder / 'abi')], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    return {name: int(value) for name, value in (line.rsplit(' ', 1) for line in run.stdout.splitlines())}


def test_every_constant_of_the_mirror_is_checked():
    constants = {name for name, value in vars(ffi_abi).items() if name.isupper() and isinstance(value, int)}
    assert constants == set(EXPECTED)
    assert {dt.name for dt in ffi_abi.DATATYPE} == set(DATATYPE_NAMES)


def test_the_mirror_agrees_with_the_installed_header(header_values):
    assert set(header_values) == set(_expressions())
    assert mismatches(header_values, mirror_values()) == []


def test_one_moved_offset_is_found(header_values):
    moved = mirror_values()
    moved['BUFFER_DATA'] += 8
    assert mismatches(header_values, moved) == [
        f'BUFFER_DATA: ffi_abi.py says {moved["BUFFER_DATA"]}, c_api.h says {header_values["BUFFER_DATA"]}']


def test_every_struct_declaration_is_checked():
    declared = {name for name, value in vars(ffi_abi).items()
                if isinstance(value, type) and issubclass(value, ctypes.Structure)}
    assert declared == set(STRUCTS)


def test_a_declaration_missing_a_field_is_found(header_values):
    import types

    class Buffer(ctypes.Structure):  # extension_start left out: every later field moves up
        _fields_ = [field for field in ffi_abi.Buffer._fields_ if field[0] != 'extension_start']

    wrong = types.SimpleNamespace(**{**vars(ffi_abi), 'Buffer': Buffer})
    mirror = {**mirror_values(), **{name: got for name, (_, got) in _struct_layout(wrong).items()}}
    found = {m.split(':')[0] for m in mismatches(header_values, mirror)}
    assert found == {'Buffer.dtype', 'Buffer.data', 'Buffer.rank', 'Buffer.dims', 'sizeof Buffer'}


def test_the_api_version_is_the_headers(header_values):
    assert ffi_abi.api_version() == (header_values['XLA_FFI_API_MAJOR'], header_values['XLA_FFI_API_MINOR'])
