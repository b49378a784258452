"""The output folder of an assignment, replaced whole.

Everything is written into a fresh folder beside ``--out`` (same parent, so the same file
system) and swapped in only when it is complete, so a regrade never leaves a stale
per-student folder beside the new ones, and an interrupted one leaves the old output as it
was. On Linux the swap is one atomic ``renameat2(RENAME_EXCHANGE)``; elsewhere (or where the
file system refuses it) it is two renames, the old folder first moved aside.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import shutil
import tempfile
from pathlib import Path

__all__ = ["check_out", "staging", "swap_in"]

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


def check_out(out: Path, *, force: bool, only: str | None) -> None:
    """Refuse an ``--out`` that holds something unless ``--force`` (or ``--only``) is given.

    Raises
    ------
    ValueError
        ``argument --out: ...`` if ``out`` is a file, or a folder that is not empty while
        neither ``force`` nor ``only`` is given.
    """
    if out.exists() and not out.is_dir():
        raise ValueError(f"argument --out: {out} is a file, not a folder")
    if only is None and not force and out.is_dir() and any(out.iterdir()):
        raise ValueError(
            f"argument --out: {out} is not empty; pass --force to replace all of it, or "
            "--only STUDENT to regrade one student"
        )


@contextlib.contextmanager
def staging(out: Path):
    """A new empty folder beside ``out``, removed on leaving unless it was swapped in."""
    out.parent.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix=f".{out.name}.new-", dir=out.parent))
    try:
        yield folder
    finally:
        if folder.exists():
            shutil.rmtree(folder, ignore_errors=True)


def _exchange(a: Path, b: Path) -> bool:
    libc_name = ctypes.util.find_library("c")
    if libc_name is None:
        return False
    libc = ctypes.CDLL(libc_name, use_errno=True)
    renameat2 = getattr(libc, "renameat2", None)
    if renameat2 is None:
        return False
    code = renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    return code == 0


def swap_in(new: Path, out: Path) -> None:
    """Make ``new`` the folder ``out`` (its permissions 0755) and remove the old ``out``."""
    os.chmod(new, 0o755)
    if not out.exists():
        os.rename(new, out)
        return
    if _exchange(new, out):
        shutil.rmtree(new)  # `new` now names the old output
        return
    old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
    os.rename(out, old / "out")
    os.rename(new, out)
    shutil.rmtree(old)
