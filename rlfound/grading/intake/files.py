"""File-system operations on folders a submission controlled: read without following, remove
whatever it left.

A submissions folder is data: :func:`open_regular` opens one entry without following a
symbolic link and refuses anything that is not a regular file (a FIFO would block the grader,
a device could be anything). :func:`remove_tree` deletes a folder a submission wrote in,
however it arranged it: a chain of folders thousands of levels deep (no recursion, and a
constant number of open descriptors), folders without permissions (they are given back as the
walk reaches them), links (removed, never followed) and special files.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat

__all__ = ["READ_FLAGS", "NotRegular", "kind_of", "read_regular", "remove_tree"]

#: Flags of every open of a file the grader did not write itself.
READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def kind_of(mode: int) -> str:
    """A short description of a file type, for the reasons given in reports.

    Examples
    --------
    >>> kind_of(stat.S_IFIFO)
    'a FIFO (named pipe)'
    """
    if stat.S_ISREG(mode):
        return "a regular file"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a special file"


class NotRegular(OSError):
    """The entry is not a regular file (``kind`` says what it is)."""

    def __init__(self, kind: str):
        super().__init__(f"{kind}, not a regular file")
        self.kind = kind


def read_regular(path, limit: int, *, dir_fd: int | None = None) -> bytes:
    """At most ``limit + 1`` bytes of a regular file, opened without following a link.

    Raises
    ------
    NotRegular
        If the entry is a link, a folder, a FIFO, a socket or a device (never opened for
        reading: a FIFO cannot block the grader).
    OSError
        If it cannot be read.
    """
    try:
        descriptor = os.open(path, READ_FLAGS, dir_fd=dir_fd)
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.EMLINK):  # O_NOFOLLOW met a link
            raise NotRegular("a symbolic link") from None
        raise
    try:
        mode = os.fstat(descriptor).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegular(kind_of(mode))
        os.set_blocking(descriptor, True)
        chunks, left = [], limit + 1
        while left > 0:
            chunk = os.read(descriptor, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(descriptor)


def _chmod_quietly(name, mode, dir_fd=None) -> None:
    with contextlib.suppress(OSError, NotImplementedError):
        os.chmod(name, mode, dir_fd=dir_fd)


def remove_tree(path) -> None:
    """Delete ``path`` and everything under it; a missing ``path`` is not an error.

    The walk keeps one folder open at a time and a list of names back to the top, so depth
    costs memory for names only (no recursion, no ``PATH_MAX``): it descends into a folder
    through its parent's descriptor, never following a link, gives each folder back its
    owner's permissions before opening it, unlinks every other entry, and goes up through
    ``..`` once a folder is empty. Nothing may be running in the tree (the grader kills a
    submission's processes first); a tree that still changes is retried a bounded number of
    times, then the last error is raised.
    """
    path = os.fspath(path)
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(info.st_mode):
        os.unlink(path)
        return
    _chmod_quietly(path, 0o700)
    descriptor = os.open(path, _DIR_FLAGS)
    names: list[str] = []  # the folders entered below ``path``, in order
    steps = 0
    try:
        while True:
            steps += 1
            if steps > 10_000_000:
                raise OSError(errno.ELOOP, "the folder keeps changing while it is removed")
            child = None
            with os.scandir(descriptor) as entries:
                for entry in entries:
                    try:
                        is_dir = entry.is_dir(follow_symlinks=False)
                    except OSError:
                        is_dir = False
                    if is_dir:
                        child = entry.name
                        break
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(entry.name, dir_fd=descriptor)
            if child is not None:
                # Give the folder back to its owner before entering it (a submission may
                # have removed every permission); fchmodat cannot skip links on Linux, but
                # the entry was just seen as a folder and nothing runs in the tree.
                _chmod_quietly(child, 0o700, dir_fd=descriptor)
                inner = os.open(child, _DIR_FLAGS, dir_fd=descriptor)
                os.close(descriptor)
                descriptor = inner
                names.append(child)
                continue
            if not names:
                break
            parent = os.open("..", _DIR_FLAGS, dir_fd=descriptor)
            os.close(descriptor)
            descriptor = parent
            with contextlib.suppress(FileNotFoundError):
                os.rmdir(names.pop(), dir_fd=descriptor)
    finally:
        os.close(descriptor)
    with contextlib.suppress(FileNotFoundError):  # removed meanwhile by someone else
        os.rmdir(path)
