"""The numba handler cache's files: written whole or not at all, read back, and the damaged one named.

A handler file is written to a temporary name, flushed to disk and renamed
(then its folder flushed), so no reader, and no process after a crash, ever
sees part of one.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from typing import Any

__all__ = ['failed_index', 'read_text', 'remove', 'write_durably']


def read_text(path: str) -> str | None:
    """The text of ``path``; None when it does not exist, ``''`` when it cannot be read (then written again).

    Example:
        >>> read_text('/nonexistent/handler.py') is None
        True
    """
    try:
        with open(path, encoding='utf-8') as f:
            return f.read()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError):
        return ''


def write_durably(folder: str, path: str, text: str) -> None:
    """Write ``path`` whole or not at all, and on disk before it is named: a crash never leaves part of it.

    Example:
        >>> import tempfile, os
        >>> folder = tempfile.mkdtemp()
        >>> write_durably(folder, os.path.join(folder, 'h.py'), 'x = 1')
        >>> read_text(os.path.join(folder, 'h.py'))
        'x = 1'
    """
    fd, tmp = tempfile.mkstemp(dir=folder, suffix='.tmp')
    try:
        with os.fdopen(fd, 'w', encoding='utf-8') as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):  # the rename itself, where the platform allows syncing a folder
        dir_fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def failed_index(tb: Any) -> str | None:
    """The numba index file whose loading raised, found in the traceback (the innermost one).

    The damaged file may belong to the handler or to any ``cache=True``
    function compiled into it; numba's cache objects on the failing frames
    name their index (``_index_path``).

    Example:
        >>> try:
        ...     raise EOFError
        ... except EOFError as e:
        ...     print(failed_index(e.__traceback__))
        None
    """
    found = None
    while tb is not None:
        index = getattr(tb.tb_frame.f_locals.get('self'), '_index_path', None)
        found = index if isinstance(index, str) else found
        tb = tb.tb_next
    return found


def remove(path: str) -> bool:
    """Delete ``path``; whether it is gone now.

    Example:
        >>> remove('/nonexistent/index.nbi')
        True
    """
    try:
        os.unlink(path)
        return True
    except FileNotFoundError:
        return True
    except OSError:
        return False
