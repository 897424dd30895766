"""Where eventjax keeps compiled kernels on disk (numba handlers, C++/CUDA libraries), their size, clearing them.

The numba bridge writes each handler's generated source into one folder and
compiles it with numba's ``cache=True``, so a second process loads the
machine code instead of compiling again. The folder is, in order:
``$NUMBA_CACHE_DIR/numba_handlers`` when numba's own cache folder is set,
else ``$XDG_CACHE_HOME/eventjax/numba_handlers``, else
``~/.cache/eventjax/numba_handlers``. Numba keeps its index and machine
code beside the sources (``__pycache__``) or, with ``NUMBA_CACHE_DIR``, in a
folder of its own under that directory, named after the sources' folder.

The ``cpp`` and ``cuda`` backends keep their shared libraries (and the
source each was built from) in :func:`native_dir`:
``$EVENTJAX_CACHE_DIR/native_kernels`` when set, else
``$XDG_CACHE_HOME/eventjax/native_kernels``, else
``~/.cache/eventjax/native_kernels``.

Clearing is safe while other processes compile: one whose handler file,
folder or index vanishes under it compiles that handler again, or without
the disk cache, so it pays a compile but never fails. A file that cannot
be deleted (a folder of another user, a read-only mount) is an error that
names it, never a silent success.
"""

from __future__ import annotations

import errno
import hashlib
import os
import tempfile

import attrs

__all__ = ['CacheFolder', 'cache_folders', 'check_writable', 'clear_cache', 'handler_dir', 'native_dir']

HANDLERS = 'numba_handlers'
NATIVE = 'native_kernels'


def _numba_cache_dir() -> str:
    return os.environ.get('NUMBA_CACHE_DIR', '').strip()


def handler_dir(numba_cache_dir: str | None = None) -> str:
    """The folder of the generated numba handler sources (not created here).

    Args:
        numba_cache_dir: numba's ``config.CACHE_DIR``; None reads ``NUMBA_CACHE_DIR``.

    Example:
        >>> handler_dir('/tmp/nb')
        '/tmp/nb/numba_handlers'
    """
    base = numba_cache_dir if numba_cache_dir is not None else _numba_cache_dir()
    return os.path.join(base or _user_cache_dir(), HANDLERS)


def _user_cache_dir() -> str:
    xdg = os.environ.get('XDG_CACHE_HOME', '').strip()
    # The XDG spec says a relative XDG_CACHE_HOME is invalid and must be ignored.
    root = xdg if os.path.isabs(xdg) else os.path.join(os.path.expanduser('~'), '.cache')
    return os.path.join(root, 'eventjax')


def native_dir() -> str:
    """The folder of the compiled C++ and CUDA kernel libraries (not created here).

    Read at every build: ``EVENTJAX_CACHE_DIR``, else ``XDG_CACHE_HOME``, else ``~/.cache``.

    Example:
        >>> native_dir().endswith('native_kernels')
        True
    """
    base = os.environ.get('EVENTJAX_CACHE_DIR', '').strip()
    return os.path.join(base or _user_cache_dir(), NATIVE)


def _numba_index_dir(numba_cache_dir: str, handlers: str) -> str:
    # numba names a user-provided cache folder after the source folder's name
    # and the SHA-1 of its absolute path (numba.core.caching._CacheLocator).
    parent = os.path.abspath(handlers)
    return os.path.join(numba_cache_dir, f'{os.path.basename(parent)}_{hashlib.sha1(parent.encode()).hexdigest()}')


@attrs.frozen
class CacheFolder:
    """One folder of the handler cache: what it holds, where, and its size."""

    role: str
    path: str
    files: int
    size_bytes: int


def _measure(role: str, path: str) -> CacheFolder:
    files = size = 0
    for root, _, names in os.walk(path):
        for name in names:
            try:
                size += os.path.getsize(os.path.join(root, name))
                files += 1
            except OSError:  # removed by another process meanwhile
                continue
    return CacheFolder(role, path, files, size)


def cache_folders(numba_cache_dir: str | None = None) -> list[CacheFolder]:
    """The folders of the kernel caches (numba handlers, C++/CUDA libraries) with their file counts and sizes.

    Example:
        >>> [f.role for f in cache_folders('/nonexistent')]
        ['handler sources and numba cache', 'numba cache index and machine code', 'C++ and CUDA kernel libraries']
    """
    base = numba_cache_dir if numba_cache_dir is not None else _numba_cache_dir()
    handlers = handler_dir(base)
    folders = [_measure('handler sources and numba cache', handlers)]
    if base:
        folders.append(_measure('numba cache index and machine code', _numba_index_dir(base, handlers)))
    return [*folders, _measure('C++ and CUDA kernel libraries', native_dir())]


def _vanished(exc: OSError) -> bool:
    # Another process deleted the entry first, or wrote a new one into a folder being removed:
    # neither means this process failed to clear what it found.
    return isinstance(exc, FileNotFoundError) or exc.errno == errno.ENOTEMPTY


def _remove(folder: CacheFolder) -> tuple[CacheFolder, list[OSError]]:
    """Delete ``folder.path``; return what was deleted (files, bytes) and the errors met."""
    files = size = 0
    errors: list[OSError] = []

    def record(exc: OSError) -> None:
        if not _vanished(exc):
            errors.append(exc)

    for root, dirs, names in os.walk(folder.path, topdown=False, onerror=record):
        for name in names:
            path = os.path.join(root, name)
            try:
                n = os.lstat(path).st_size
                os.unlink(path)
            except OSError as exc:
                record(exc)
                continue
            files, size = files + 1, size + n
        for name in dirs:
            path = os.path.join(root, name)
            try:
                os.unlink(path) if os.path.islink(path) else os.rmdir(path)
            except OSError as exc:
                record(exc)
    try:
        os.rmdir(folder.path)
    except OSError as exc:
        record(exc)
    return CacheFolder(folder.role, folder.path, files, size), errors


def clear_cache(numba_cache_dir: str | None = None) -> list[CacheFolder]:
    """Delete the kernel cache folders; return what was deleted from each. The next process compiles again.

    Raises:
        PermissionError: some file or folder could not be deleted (the message names the first, how
            many, and the fix); whatever could be deleted is gone.

    Example:
        >>> clear_cache('/nonexistent')[0].files
        0
    """
    done, errors = [], []
    for folder in cache_folders(numba_cache_dir):
        deleted, failed = _remove(folder)
        done.append(deleted)
        errors += failed
    if errors:
        first = errors[0]
        raise PermissionError(
            f'clear_cache(): could not delete {len(errors)} entr{"y" if len(errors) == 1 else "ies"} of the kernel '
            f'caches, first {first.filename!r} ({first.strerror or first}); deleted '
            f'{sum(f.files for f in done)} file(s). Fix: run as the user who owns the folder or make it writable, '
            'or point NUMBA_CACHE_DIR and EVENTJAX_CACHE_DIR at folders of your own.')
    return done


def check_writable(path: str) -> None:
    """Create ``path`` if needed and check that a file can be written in it.

    Raises:
        PermissionError: it cannot be created or written to; the message names it and the fix.

    Example:
        >>> import tempfile
        >>> check_writable(tempfile.gettempdir())
    """
    try:
        os.makedirs(path, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=path, prefix='.eventjax-probe-')
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise PermissionError(
            f'the kernel cache folder {path!r} cannot be written ({exc.strerror or exc}): nothing compiled would '
            'reach the disk. Fix: point NUMBA_CACHE_DIR (numba handlers) or EVENTJAX_CACHE_DIR (C++/CUDA '
            'libraries) at a writable folder, or make this one writable.') from exc
