"""Write files atomically: to a temporary file in the same folder, then ``os.replace``.

An interrupted run never leaves a half-written report, and a file a submission managed to drop
where results go is replaced, not trusted.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = ["write_atomic", "write_atomic_bytes"]


def write_atomic_bytes(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (same-folder temporary file, then rename).

    The folder is created if needed (a link in its place is replaced by a folder, never
    followed); the file ends up readable by everyone (0644).
    """
    path = Path(path)
    if path.parent.is_symlink():
        path.parent.unlink()
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def write_atomic(path: str | Path, text: str) -> None:
    """Write ``text`` (UTF-8; a lone surrogate, which UTF-8 cannot hold, as ``\\udXXX``) to
    ``path`` atomically."""
    write_atomic_bytes(path, text.encode("utf-8", "backslashreplace"))
