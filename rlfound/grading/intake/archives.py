"""Zip archives a student or an LMS made, extracted as data: bounded, flat, never followed.

An archive is read in two passes. The first reads its listing only (the central directory)
and refuses the whole archive when one member is hostile: an absolute path, a ``..``
component, a symbolic link, a device, a FIFO or a socket, two members with the same name (or a
file where another member needs a folder), a member nested deeper than the cap, more members
than the cap, an encrypted member, or a member whose header says it is larger than the cap.
Nothing is written before this pass has accepted every member, so a refused archive leaves no
file behind. The second pass extracts the members the caller asks for into a folder of the
grader's own, creating every folder and file itself (``O_EXCL``, ``O_NOFOLLOW``: never
through a link), and counts the bytes it actually writes: a member that expands past its
cap, or an archive past its total, however its headers lie, stops the extraction, and the
folder is removed. Every such failure is an :class:`ArchiveError` with the reason; the caller
records it as that hand-in's failure.

Members under a hidden folder or with a hidden name (``.git/``, ``.ipynb_checkpoints/``,
macOS's ``__MACOSX/`` and ``._`` files) are never extracted: they are copies or metadata, not
the student's answer (:func:`hidden_reason`). A zip inside an archive is not opened by this
module; the caller decides (a class archive's hand-in zips are, a hand-in's own are not).

The caps are the :class:`Limits` of this module, :data:`HAND_IN` for one student's zip and
:data:`CLASS` for an LMS download or a zip of a whole class.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import stat
import zipfile
from collections.abc import Callable
from pathlib import Path

from rlfound.grading.intake import files, text

__all__ = [
    "CLASS",
    "HAND_IN",
    "ArchiveError",
    "Extracted",
    "Limits",
    "Member",
    "extract",
    "hidden_reason",
    "read_listing",
]


@dataclasses.dataclass(frozen=True)
class Limits:
    """Caps on one archive (every size in bytes).

    ``max_members`` counts every entry of the listing, folders included; ``max_files`` and
    ``max_total_bytes`` the files extracted; ``max_file_bytes`` one extracted file (a caller
    may ask for less per member); ``max_depth`` the folders above a member; ``max_archive_bytes``
    the archive file itself.
    """

    max_members: int
    max_files: int
    max_total_bytes: int
    max_file_bytes: int
    max_depth: int
    max_archive_bytes: int


#: One student's zip: generous for a folder of notebooks and scripts, small for a bomb.
HAND_IN = Limits(
    max_members=5_000,
    max_files=200,
    max_total_bytes=32 * 1024**2,
    max_file_bytes=2 * 1024**2,
    max_depth=8,
    max_archive_bytes=64 * 1024**2,
)
#: A class's archive (an LMS bulk download): room for hundreds of hand-in zips.
CLASS = Limits(
    max_members=100_000,
    max_files=20_000,
    max_total_bytes=4 * 1024**3,
    max_file_bytes=HAND_IN.max_archive_bytes,
    max_depth=10,
    max_archive_bytes=8 * 1024**3,
)

_SEPARATORS = re.compile(r"[/\\]")  # a zip made on Windows may separate with backslashes
_DRIVE = re.compile(r"^[A-Za-z]:")
_MAX_COMPONENT_BYTES = 255
_CHUNK = 1 << 16
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


class ArchiveError(ValueError):
    """An archive that is refused or cannot be extracted; the message says why."""


@dataclasses.dataclass(frozen=True)
class Member:
    """One accepted member: its path inside the archive as components, and its header."""

    parts: tuple[str, ...]
    info: zipfile.ZipInfo
    is_dir: bool

    @property
    def name(self) -> str:
        """The member's path, ``/``-separated, inert and capped for a report."""
        return text.clean("/".join(self.parts), text.NAME_CHARS)


@dataclasses.dataclass(frozen=True)
class Extracted:
    """What :func:`extract` wrote (paths relative to the destination) and what it left out."""

    files: tuple[tuple[str, ...], ...]
    skipped: tuple[tuple[str, str], ...]


def hidden_reason(name: str) -> str | None:
    """Why an entry named ``name`` is left out of a hand-in, or None if it is not hidden.

    Examples
    --------
    >>> hidden_reason(".ipynb_checkpoints")
    'a hidden entry (a copy or metadata, not the answer): not read'
    >>> hidden_reason("__MACOSX") is None, hidden_reason("gae.py") is None
    (False, True)
    """
    if name.startswith(".") or name in ("__MACOSX", "__pycache__"):
        return "a hidden entry (a copy or metadata, not the answer): not read"
    return None


def _kind(info: zipfile.ZipInfo) -> str | None:
    """What a member is, when its Unix mode says it is not a file or a folder."""
    mode = info.external_attr >> 16
    kind = stat.S_IFMT(mode)
    if kind in (0, stat.S_IFREG, stat.S_IFDIR):
        return None
    return files.kind_of(mode)


def _parts(raw: str, limits: Limits) -> tuple[str, ...]:
    shown = text.clean(raw, text.NAME_CHARS)
    if raw.startswith(("/", "\\")) or _DRIVE.match(raw):
        raise ArchiveError(f"the archive holds an absolute path: {shown}")
    parts = tuple(part for part in _SEPARATORS.split(raw) if part not in ("", "."))
    if ".." in parts:
        raise ArchiveError(f"the archive holds a path that leaves its folder (..): {shown}")
    if not parts:
        raise ArchiveError(f"the archive holds a member without a name: {shown!r}")
    if len(parts) - 1 > limits.max_depth:
        raise ArchiveError(
            f"the archive nests a member deeper than {limits.max_depth} folders: {shown}"
        )
    for part in parts:
        if len(os.fsencode(part)) > _MAX_COMPONENT_BYTES:
            raise ArchiveError(f"the archive holds a name longer than 255 bytes: {shown}")
    return parts


def _open(path: Path, limits: Limits) -> tuple[zipfile.ZipFile, object]:
    descriptor = os.open(path, files.READ_FLAGS)
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            raise ArchiveError(f"the archive is {files.kind_of(info.st_mode)}, not a file")
        if info.st_size > limits.max_archive_bytes:
            raise ArchiveError(f"the archive is larger than {limits.max_archive_bytes} bytes")
        os.set_blocking(descriptor, True)
        handle = os.fdopen(descriptor, "rb")
    except BaseException:
        os.close(descriptor)
        raise
    try:
        return zipfile.ZipFile(handle), handle
    except BaseException:
        handle.close()
        raise


def _describe(error: BaseException) -> str:
    if isinstance(error, ArchiveError):
        return str(error)
    if isinstance(error, files.NotRegular):
        return f"the archive is {error.kind}, not a regular file: not read"
    if isinstance(error, OSError) and error.strerror:
        return f"the archive could not be read ({error.strerror})"
    detail = text.clean(str(error), 300)
    return f"not a readable zip archive ({type(error).__name__}{': ' if detail else ''}{detail})"


def read_listing(path: str | os.PathLike, limits: Limits = HAND_IN) -> list[Member]:
    """Every member of the zip at ``path``, checked against ``limits`` (see the module
    docstring); folders are listed too (``is_dir``).

    Raises
    ------
    ArchiveError
        If the archive is refused or is not a readable zip (the message says why).
    """
    try:
        archive, handle = _open(Path(path), limits)
    except Exception as error:
        raise ArchiveError(_describe(error)) from None
    try:
        with handle, archive:
            return _check_listing(archive.infolist(), limits)
    except Exception as error:
        raise ArchiveError(_describe(error)) from None


def _check_listing(infos: list[zipfile.ZipInfo], limits: Limits) -> list[Member]:
    if len(infos) > limits.max_members:
        raise ArchiveError(f"the archive holds more than {limits.max_members} entries")
    members, seen_files, seen_dirs = [], set(), set()
    for info in infos:
        parts = _parts(info.filename, limits)
        shown = text.clean("/".join(parts), text.NAME_CHARS)
        kind = _kind(info)
        if kind is not None:
            raise ArchiveError(f"the archive holds {kind}: {shown}")
        if info.flag_bits & 0x1:
            raise ArchiveError(f"the archive holds an encrypted member: {shown}")
        is_dir = info.is_dir()
        folders = {parts[:depth] for depth in range(1, len(parts) + (1 if is_dir else 0))}
        clash = (parts in seen_files) or (not is_dir and parts in seen_dirs)
        if clash or folders & seen_files:
            raise ArchiveError(f"the archive holds the same name twice: {shown}")
        seen_dirs |= folders
        if not is_dir:
            seen_files.add(parts)
            if info.file_size > limits.max_file_bytes:
                raise ArchiveError(
                    f"the archive holds a file larger than {limits.max_file_bytes} bytes "
                    f"(a zip bomb?): {shown}"
                )
        members.append(Member(parts, info, is_dir))
    return members


def extract(
    path: str | os.PathLike,
    destination: str | os.PathLike,
    choose: Callable[[Member], int | str],
    limits: Limits = HAND_IN,
) -> Extracted:
    """Extract the members of the zip at ``path`` that ``choose`` accepts into
    ``destination`` (a folder that must not exist yet; made private to this user).

    ``choose(member)`` returns the largest size in bytes this member may have to be extracted
    (at most ``limits.max_file_bytes``), or, as a string, the reason it is left out. Hidden
    members (:func:`hidden_reason`) are left out before ``choose`` sees them.

    Returns
    -------
    Extracted
        The files written, as paths relative to ``destination``, and the members left out
        with the reason (each ``(name, reason)``).

    Raises
    ------
    ArchiveError
        If the archive is refused, cannot be read, or goes past a cap while it is extracted;
        ``destination`` is then removed, so no part of the archive is left behind.
    """
    destination = Path(destination)
    written, skipped = [], []
    os.mkdir(destination, 0o700)
    try:
        archive, handle = _open(Path(path), limits)
        with handle, archive:
            members = _check_listing(archive.infolist(), limits)
            total = 0
            for member in members:
                if member.is_dir:
                    continue
                hidden = next(filter(None, map(hidden_reason, member.parts)), None)
                cap = hidden if hidden is not None else choose(member)
                if isinstance(cap, str):
                    skipped.append((member.name, cap))
                    continue
                if len(written) >= limits.max_files:
                    raise ArchiveError(f"the archive holds more than {limits.max_files} files")
                cap = min(cap, limits.max_file_bytes)
                if member.info.file_size > cap:
                    raise ArchiveError(
                        f"the archive holds a file larger than {cap} bytes: {member.name}"
                    )
                total += _write(archive, member, destination, cap, total, limits.max_total_bytes)
                written.append(member.parts)
    except Exception as error:
        with contextlib.suppress(OSError):
            files.remove_tree(destination)
        raise ArchiveError(_describe(error)) from None
    return Extracted(tuple(written), tuple(skipped))


def _write(archive, member: Member, destination: Path, cap: int, total: int, limit: int) -> int:
    """Write one member, counting what the decompressor really gives; its size in bytes."""
    folder = destination.joinpath(*member.parts[:-1])
    # Every folder on the way was made by this function (the listing holds no link, no `..`).
    os.makedirs(folder, mode=0o700, exist_ok=True)
    descriptor = os.open(folder / member.parts[-1], _CREATE, 0o600)
    size = 0
    with os.fdopen(descriptor, "wb") as target, archive.open(member.info) as source:
        while chunk := source.read(_CHUNK):
            size += len(chunk)
            if size > cap:
                raise ArchiveError(
                    f"the archive holds a file that expands past {cap} bytes (a zip bomb?): "
                    f"{member.name}"
                )
            if total + size > limit:
                raise ArchiveError(f"the archive expands past {limit} bytes in all (a zip bomb?)")
            target.write(chunk)
    return size
