"""Compile C++ and CUDA kernel sources into shared libraries, cached on disk by content.

A build is keyed by everything that changes the binary: the source text
(a file's content, never its name or date), the compiler flags and macro
definitions, the compiler's path and its ``--version`` output, the jaxlib
version (its FFI headers) and, for CUDA, the target architecture. The
library lands in :func:`eventjax.config.cache.native_dir` as
``<key>.so``: an edited source has another key, so it is compiled
again and the stale library is never loaded.

Concurrent builders are safe (and a build whose folder is cleared under it
by ``eventjax cache --clear`` starts again): each compiles into a file name
of its own and publishes it with ``os.replace``, which is atomic, so a
reader sees either no library or a whole one, and two processes that build
the same kernel at once both end up loading the same file. Where the system
has ``flock`` (Linux, macOS), a process that finds another building the same
key waits for that build rather than running the compiler a second time: a
standard kernel source takes the compiler tens of seconds, and test workers
or a job's processes on one machine tend to ask for it at the same moment.
The lock only saves work; a build never depends on it.

The compiled copy of the source starts with a ``#line 1 "<name>"``
directive, so the compiler's messages carry the user's file name and line
numbers; a failed build raises :class:`NativeBuildError` with them.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import hashlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence

import attrs

try:
    import fcntl
except ImportError:  # no flock (Windows): concurrent builders each compile, which is safe, only slower
    fcntl = None

from eventjax.config.cache import native_dir
from eventjax.errors import KernelCompilationError

__all__ = ['NativeBuildError', 'Toolchain', 'build_library', 'cpp_toolchain', 'cuda_toolchain', 'load_symbol']

BUILD_TIMEOUT_S = 600
"""The longest a compiler may run for one kernel before the build is abandoned."""

_MESSAGE_LINES = 40


class NativeBuildError(KernelCompilationError):
    """A C++ or CUDA kernel failed to compile or link; the message holds the compiler's output."""


@attrs.frozen
class Toolchain:
    """A compiler found on this machine, or why none was.

    Attributes:
        language: ``'cpp'`` or ``'cuda'``.
        path: the compiler's absolute path ('' when missing).
        version: the first line of its ``--version`` output that names a version.
        reason: why it cannot be used ('' when it can).
        fix: how to get one.
    """

    language: str
    path: str
    version: str = ''
    reason: str = ''
    fix: str = ''


def _version_of(path: str) -> str:
    try:
        out = subprocess.run([path, '--version'], capture_output=True, text=True, timeout=60, check=False).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ''
    lines = [line.strip() for line in out.splitlines() if line.strip()]
    named = [line for line in lines if 'release' in line or 'version' in line.lower()]
    return ' | '.join(named or lines[:1])


def _first_found(candidates: Sequence[str]) -> str:
    for name in candidates:
        if not name:
            continue
        found = shutil.which(name)
        if found:
            return os.path.realpath(found)
    return ''


@functools.cache
def cpp_toolchain() -> Toolchain:
    """The C++ compiler: ``$CXX``, else ``g++``, ``clang++`` or ``c++`` on the PATH.

    Example:
        >>> cpp_toolchain().language
        'cpp'
    """
    path = _first_found((os.environ.get('CXX', '').strip(), 'g++', 'clang++', 'c++'))
    if not path:
        return Toolchain('cpp', '', reason='No C++ compiler found ($CXX, g++, clang++ or c++ on the PATH).',
                         fix='Install one (e.g. apt-get install g++) or set CXX to its path.')
    return Toolchain('cpp', path, _version_of(path))


@functools.cache
def cuda_toolchain() -> Toolchain:
    """The CUDA compiler: ``$NVCC``, else ``nvcc`` on the PATH, under ``$CUDA_HOME`` or /usr/local/cuda.

    Example:
        >>> cuda_toolchain().language
        'cuda'
    """
    home = os.environ.get('CUDA_HOME', '').strip() or os.environ.get('CUDA_PATH', '').strip()
    path = _first_found((os.environ.get('NVCC', '').strip(), 'nvcc',
                         os.path.join(home, 'bin', 'nvcc') if home else '', '/usr/local/cuda/bin/nvcc'))
    if not path:
        return Toolchain('cuda', '', reason='nvcc (the CUDA toolkit) was not found ($NVCC, the PATH, '
                                            '$CUDA_HOME/bin, /usr/local/cuda/bin).',
                         fix='Install the CUDA toolkit and put nvcc on the PATH, or set NVCC to its path.')
    return Toolchain('cuda', path, _version_of(path))


def _jaxlib() -> tuple[str, str]:
    import jax
    import jaxlib

    return jaxlib.__version__, jax.ffi.include_dir()


def _command(tool: Toolchain, source: str, output: str, *, arch: str, includes: Sequence[str],
             defines: Mapping[str, str], flags: Sequence[str]) -> list[str]:
    _, ffi_include = _jaxlib()
    common = ['-std=c++17', '-O3', '-shared', '-isystem', ffi_include,
              *(f'-I{d}' for d in includes), *(f'-D{k}={v}' for k, v in sorted(defines.items()))]
    if tool.language == 'cuda':
        return [tool.path, *common, '-Xcompiler', '-fPIC', f'-arch={arch}', *flags, '-x', 'cu', source, '-o', output]
    return [tool.path, *common, '-fPIC', *flags, source, '-o', output]


def build_key(tool: Toolchain, text: str, *, arch: str, includes: Sequence[str], defines: Mapping[str, str],
              flags: Sequence[str], depends: str = '') -> str:
    """The cache key of one build: a hash of everything that changes the binary.

    Example:
        >>> t = Toolchain('cpp', '/usr/bin/g++', 'g++ 12')
        >>> build_key(t, 'int x;', arch='', includes=(), defines={}, flags=()) != \\
        ...     build_key(t, 'int y;', arch='', includes=(), defines={}, flags=())
        True
    """
    jaxlib_version, _ = _jaxlib()
    parts = (tool.language, tool.path, tool.version, jaxlib_version, arch, tuple(includes),
             tuple(sorted(defines.items())), tuple(flags), text, depends)
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:32]


def _trimmed(output: str) -> str:
    lines = output.strip().splitlines()
    if len(lines) > _MESSAGE_LINES:
        lines = lines[:_MESSAGE_LINES] + [f'... ({len(lines) - _MESSAGE_LINES} more lines)']
    return '\n'.join(lines)


def _write_atomically(path: str, data: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix='.tmp')
    with os.fdopen(fd, 'w', encoding='utf-8') as f:
        f.write(data)
    os.replace(tmp, path)


def build_library(tool: Toolchain, text: str, *, origin: str, entry: str, arch: str = '',
                  includes: Sequence[str] = (), defines: Mapping[str, str] | None = None,
                  flags: Sequence[str] = (), depends: str = '') -> str:
    """Compile ``text`` into a shared library (or find it in the cache); return its path.

    Args:
        tool: the compiler (:func:`cpp_toolchain` or :func:`cuda_toolchain`).
        text: the source.
        origin: the name the compiler's messages give the source (the user's
            file, or a description of an inline string).
        entry: the handler symbol, for messages.
        arch: the CUDA architecture (``'sm_90'``); '' for C++.
        includes, defines, flags: further ``-I`` folders, ``-D`` macros and compiler flags.
        depends: the content of the files the source includes, for the key.

    Raises:
        NativeBuildError: the compiler is missing, failed or timed out; the
            message holds its output with the user's line numbers.

    Example:
        >>> path = build_library(cpp_toolchain(), 'extern "C" int f() { return 1; }',
        ...                      origin='<doc>', entry='f')  # doctest: +SKIP
    """
    defines = dict(defines or {})
    if not tool.path:
        raise NativeBuildError(f'{origin}: cannot build {entry!r}: {tool.reason} {tool.fix}')
    key = build_key(tool, text, arch=arch, includes=includes, defines=defines, flags=flags, depends=depends)
    folder = native_dir()
    final = os.path.join(folder, f'{key}.so')  # one build serves every entry of the source
    if os.path.exists(final):
        return final
    for attempt in range(2):
        try:
            with _one_builder(folder, key):
                if os.path.exists(final):  # another process built it while this one waited
                    return final
                return _build(tool, text, key=key, folder=folder, final=final, origin=origin, entry=entry,
                              arch=arch, includes=includes, defines=defines, flags=flags)
        except (NativeBuildError, OSError):
            # `eventjax cache --clear` from another process removed the folder mid-build: build again.
            if attempt or os.path.isdir(folder):
                raise
    raise AssertionError('unreachable')


@contextlib.contextmanager
def _one_builder(folder: str, key: str):
    """Hold ``<key>.lock`` in ``folder`` exclusively while building (nothing where flock is missing).

    The kernel releases the lock when its holder exits, crashed or not; a compiler
    that hangs is stopped after ``BUILD_TIMEOUT_S``, so a waiter waits at most that long.
    A lock file removed by ``eventjax cache --clear`` costs at most a second compile.
    """
    if fcntl is None:
        yield
        return
    os.makedirs(folder, exist_ok=True)
    fd = os.open(os.path.join(folder, f'{key}.lock'), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _build(tool: Toolchain, text: str, *, key: str, folder: str, final: str, origin: str, entry: str, arch: str,
           includes: Sequence[str], defines: Mapping[str, str], flags: Sequence[str]) -> str:
    os.makedirs(folder, exist_ok=True)
    suffix = '.cu' if tool.language == 'cuda' else '.cc'
    source = os.path.join(folder, f'{key}{suffix}')
    escaped = origin.replace('\\', '\\\\').replace('"', '\\"')
    _write_atomically(source, f'#line 1 "{escaped}"\n{text}')
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f'{key}.', suffix='.so.tmp')
    os.close(fd)
    cmd = _command(tool, source, tmp, arch=arch, includes=includes, defines=defines, flags=flags)
    try:
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S, check=False)
        except subprocess.TimeoutExpired as e:
            raise NativeBuildError(f'{origin}: {os.path.basename(tool.path)} did not finish compiling {entry!r} '
                                   f'within {BUILD_TIMEOUT_S} s.') from e
        if done.returncode != 0:
            raise NativeBuildError(
                f'{origin}: {os.path.basename(tool.path)} could not compile {entry!r} (exit {done.returncode}); '
                f'line numbers are those of the source:\n{_trimmed(done.stderr or done.stdout)}\n'
                f'command: {" ".join(cmd)}')
        os.replace(tmp, final)  # atomic: a concurrent reader sees no library or a whole one
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return final


@functools.cache
def _library(path: str) -> ctypes.CDLL:
    # One handle per file for the life of the process: XLA keeps its symbols' addresses.
    return ctypes.CDLL(path, mode=ctypes.RTLD_LOCAL)


def load_symbol(path: str, entry: str, origin: str):
    """The handler ``entry`` of the library at ``path``, as a ctypes function pointer.

    Raises:
        NativeBuildError: the library defines no such symbol.

    Example:
        >>> fn = load_symbol(path, 'scale_kernel', '<doc>')  # doctest: +SKIP
    """
    try:
        return getattr(_library(path), entry)
    except AttributeError:
        raise NativeBuildError(
            f'{origin}: the compiled source defines no symbol {entry!r}. Define the handler with '
            f'XLA_FFI_DEFINE_HANDLER_SYMBOL({entry}, impl, binding) (it has C linkage), or pass '
            f'entry= the name you gave it.') from None
