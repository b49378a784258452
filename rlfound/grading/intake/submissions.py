"""Find submissions and read their code as text, without running any of it.

A submission is a ``.py`` file, a ``.ipynb`` notebook, or a folder of those (each file in it is
one submission; folders are read one level deep). The submissions folder is data, not
instructions: :func:`scan` looks at each entry without following links, and only regular
files are read. An entry named like a submission (``.py`` or ``.ipynb``) that is a link, a
folder, a FIFO or a device still gets a row in the grades, with zero points and the reason;
every other entry that is not graded is listed in :attr:`Scan.skipped` with the reason.

Names are unique and stable: an entry whose file name gives a safe name (letters, digits,
``.``, ``_``, ``-``) that no other entry's file name gives keeps it; every other entry (a name
that had to be changed, or one that two files give) gets ``<safe name>-<hash of its path>``.
So a look-alike file (``alice!.py``, or ``alice.ipynb`` next to ``alice.py``) can never take
the row of the student whose file is ``alice.py``; ``grades.csv`` keeps each original file
name too.

``.py`` files are read as UTF-8, with or without a byte-order mark. A notebook's code cells
are turned into Python the way Jupyter runs them, with IPython's own input transformer (as
nbconvert's Python exporter does), in a child process under CPU-time, memory, size and
wall-clock limits (:mod:`~rlfound.grading.intake.notebooks`): magics, shell escapes and help
syntax become calls of ``get_ipython()``, which the worker answers with a stand-in that does
nothing. The body of a ``%%time``, ``%%capture`` or ``%%timeit`` cell (Python the notebook
runs in its own namespace) runs once, as Python; a cell that starts with another cell magic
(``%%bash``, ``%%writefile``, ...) is not Python and is skipped, with a note in the feedback.
A notebook whose conversion goes past a limit is that submission's failure, with the reason.
The worker then runs the cells one after another, as Jupyter would: a cell that raises is
reported, and the cells after it still run.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
import stat
from collections.abc import Sequence
from pathlib import Path

from rlfound.grading.intake import files, notebooks, text

__all__ = [
    "MAX_BYTES",
    "RESERVED",
    "SUFFIXES",
    "Cell",
    "Entry",
    "Scan",
    "Submission",
    "display_path",
    "expand",
    "notebook_cells",
    "notebook_code",
    "path_text",
    "read_entry",
    "read_submission",
    "safe_name",
    "scan",
    "stem_of",
    "unique_names",
]

#: Largest submission file read; anything bigger is reported, not read.
MAX_BYTES = 2 * 1024 * 1024
SUFFIXES = (".py", ".ipynb")
#: Names taken by the class's reports in the output folder.
RESERVED = ("grades.csv", "skipped.csv")
_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


@dataclasses.dataclass(frozen=True)
class Cell:
    """One unit of code the worker runs: ``first_line`` is its first line in the file the
    worker gets (1-based), ``label`` how the feedback names it (``cell 3``)."""

    label: str
    first_line: int
    line_count: int


@dataclasses.dataclass(frozen=True)
class Submission:
    """One submission: its name, where it came from, and its code or why there is none.

    ``cells`` is empty for a ``.py`` file (the worker runs it as one module) and lists the
    code cells of a notebook; ``notes`` are remarks for the student (cells not run).
    ``file_name`` is the entry's original file name (inert and capped).
    """

    name: str
    path: Path | None
    source: str | None
    error: str | None = None
    cells: tuple[Cell, ...] = ()
    notes: tuple[str, ...] = ()
    file_name: str = ""


@dataclasses.dataclass(frozen=True)
class Entry:
    """One entry to grade: its name, its path, and why it cannot be read, if known already."""

    name: str
    path: Path
    file_name: str
    problem: str | None = None
    dir_path: Path | None = None  # the folder it was found in (read relative to it)


@dataclasses.dataclass(frozen=True)
class Scan:
    """What :func:`scan` found: the entries to grade and the entries skipped, with reasons."""

    entries: list[Entry]
    skipped: list[tuple[str, str]]


def safe_name(stem: str) -> str:
    """A file-system-safe name: letters, digits, ``.``, ``_`` and ``-``; no leading dot.

    Examples
    --------
    >>> safe_name("../../etc/passwd")
    'etc_passwd'
    >>> safe_name("Ana María")
    'Ana_Mar_a'
    """
    name = _SAFE.sub("_", stem).strip("._-") or "submission"
    return name[:100]


def stem_of(file_name: str) -> str:
    """A submission file's name without its ``.py`` or ``.ipynb`` suffix (or its last suffix).

    Examples
    --------
    >>> stem_of("alice.ipynb"), stem_of(".py"), stem_of("notes.txt")
    ('alice', '.py', 'notes')
    """
    for suffix in SUFFIXES:
        if file_name.endswith(suffix) and len(file_name) > len(suffix):
            return file_name[: -len(suffix)]
    return Path(file_name).stem or file_name


def path_text(path) -> str:
    """A path (or a name) as text, whatever bytes it holds: undecodable bytes are shown as
    escapes. Not yet inert: see :func:`display_path`.

    Examples
    --------
    >>> path_text(Path(os.fsdecode(b"caf\\xe9.py")))
    'caf\\\\xe9.py'
    """
    return (
        os.fsdecode(os.fspath(path))
        .encode("utf-8", "surrogateescape")
        .decode("utf-8", "backslashreplace")
    )


def display_path(path: Path) -> str:
    """A path as text (:func:`path_text`), inert and capped
    (:data:`rlfound.grading.intake.text.NAME_CHARS`)."""
    return text.clean(path_text(path), text.NAME_CHARS)


def unique_names(stems: Sequence[str], identities: Sequence[bytes]) -> list[str]:
    """A unique, file-system-safe name for each of several entries (see the module docstring).

    ``stems[i]`` is the name entry ``i`` asks for, ``identities[i]`` what tells it apart
    (its path): a stem that is its own safe name, not reserved and asked for by one entry
    only is kept; every other entry gets ``<safe name>-<hash of its identity>``.

    Examples
    --------
    >>> unique_names(["alice", "alice!", "bob", "bob"], [b"a", b"b", b"c", b"d"])[0]
    'alice'
    >>> unique_names(["alice", "alice!"], [b"a", b"b"])[1].startswith("alice-")
    True
    """
    own: dict[str, list[int]] = {}
    for index, stem in enumerate(stems):
        if safe_name(stem) == stem and stem.lower() not in RESERVED:
            own.setdefault(stem, []).append(index)
    names: dict[int, str] = {}
    for stem, holders in own.items():
        if len(holders) == 1:
            names[holders[0]] = stem
    taken = set(names.values())
    for index, stem in enumerate(stems):
        if index in names:
            continue
        digest = hashlib.sha256(identities[index]).hexdigest()
        base = safe_name(stem)[:80]
        for width in (8, 16, 32, 64):
            candidate = f"{base}-{digest[:width]}"
            if candidate not in taken:
                break
        else:  # the same identity twice (the same path twice on the command line)
            counter = 2
            while f"{candidate}-{counter}" in taken:
                counter += 1
            candidate = f"{candidate}-{counter}"
        names[index] = candidate
        taken.add(candidate)
    return [names[index] for index in range(len(stems))]


def _assign_names(found: list[tuple[str, Path, str, str | None, Path | None]]) -> list[Entry]:
    """Give each entry its name (see the module docstring)."""
    names = unique_names([item[0] for item in found], [bytes(item[1]) for item in found])
    return [
        Entry(name, path, shown, problem, folder)
        for name, (_, path, shown, problem, folder) in zip(names, found, strict=True)
    ]


def scan(paths: Sequence[str | Path]) -> Scan:
    """Turn command-line paths into the entries to grade and the entries skipped.

    A folder contributes its ``.py`` and ``.ipynb`` entries (not recursively); each must be a
    regular file to be read. A path named on the command line is graded whatever its name,
    but it must be a regular file or a folder, not a link to one. A path that does not exist
    is kept, so that it is reported as missing.
    """
    found: list[tuple[str, Path, str, str | None, Path | None]] = []
    skipped: list[tuple[str, str]] = []
    for raw in paths:
        path = Path(raw)
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            found.append((stem_of(path.name), path, display_path(path), "not found", None))
            continue
        except OSError as error:
            problem = f"could not be read ({error.strerror})"
            found.append((stem_of(path.name), path, display_path(path), problem, None))
            continue
        if stat.S_ISDIR(info.st_mode):
            found += _scan_folder(path, skipped)
        elif stat.S_ISREG(info.st_mode):
            found.append((stem_of(path.name), path, display_path(path), None, None))
        else:
            problem = f"{files.kind_of(info.st_mode)}, not a regular file: not read"
            found.append((stem_of(path.name), path, display_path(path), problem, None))
    return Scan(_assign_names(found), skipped)


def _scan_folder(folder: Path, skipped: list[tuple[str, str]]):
    found = []
    try:
        descriptor = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as error:
        skipped.append((display_path(folder), f"the folder could not be read ({error.strerror})"))
        return found
    try:
        with os.scandir(descriptor) as listing:
            names = sorted(entry.name for entry in listing)
        for name in names:
            path = folder / name
            shown = display_path(path)
            try:
                info = os.lstat(name, dir_fd=descriptor)
            except OSError as error:
                skipped.append((shown, f"could not be examined ({error.strerror})"))
                continue
            submission_like = stem_of(name) != name and name.endswith(SUFFIXES)
            kind = files.kind_of(info.st_mode)
            if stat.S_ISREG(info.st_mode):
                if submission_like:
                    found.append((stem_of(name), path, shown, None, folder))
                else:
                    skipped.append((shown, "not a .py or .ipynb file"))
            elif submission_like:
                problem = f"{kind}, not a regular file: not read"
                found.append((stem_of(name), path, shown, problem, None))
            elif stat.S_ISDIR(info.st_mode):
                skipped.append((shown, "a folder: submissions folders are read one level deep"))
            else:
                skipped.append((shown, f"{kind}: not read"))
    finally:
        os.close(descriptor)
    return found


def expand(paths: list[str | Path]) -> list[tuple[str, Path]]:
    """``(name, path)`` of every entry :func:`scan` grades (see there)."""
    return [(entry.name, entry.path) for entry in scan(paths).entries]


# ---------------------------------------------------------------- notebooks


def notebook_cells(data: str) -> tuple[list[tuple[str, str]], list[str]]:
    """The code cells of a notebook as Python, and notes on the cells not run.

    Returns ``(cells, notes)`` with ``cells`` a list of ``(label, code)``. The conversion
    runs in a child process under limits (:func:`rlfound.grading.intake.notebooks.convert`).

    Raises
    ------
    ValueError
        If the text is not a readable notebook, or its conversion went past a limit.
    OSError
        If the converter cannot be started.
    """
    return notebooks.convert(data)


def notebook_code(data: str) -> str:
    """The code cells of a notebook as one Python text (see :func:`notebook_cells`).

    Raises
    ------
    ValueError
        If the text is not a readable notebook.
    """
    cells, _ = notebook_cells(data)
    return _join(cells)[0]


def _join(cells: list[tuple[str, str]]) -> tuple[str, tuple[Cell, ...]]:
    lines, layout = [], []
    for label, code in cells:
        body = code.split("\n")
        if body and body[-1] == "":
            body.pop()
        lines.append(f"# ---- {label}")
        layout.append(Cell(label, len(lines) + 1, len(body)))
        lines += body
    return "\n".join(lines) + "\n", tuple(layout)


# ---------------------------------------------------------------- reading


def read_entry(entry: Entry, limit: int = MAX_BYTES) -> bytes:
    """At most ``limit + 1`` bytes of an entry's file, never through a link (relative to the
    folder it was found in, when it has one).

    Raises
    ------
    rlfound.grading.intake.files.NotRegular
        If the entry is a link, a folder, a FIFO, a socket or a device.
    OSError
        If it cannot be read.
    """
    if entry.dir_path is None:
        return files.read_regular(entry.path, limit)
    folder_fd = os.open(entry.dir_path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        return files.read_regular(entry.path.name, limit, dir_fd=folder_fd)
    finally:
        os.close(folder_fd)


def read_submission(path, name: str | None = None, *, entry: Entry | None = None) -> Submission:
    """Read one submission file; a problem becomes the submission's ``error``, not an
    exception. A link, a folder, a FIFO or a device is never opened for reading.

    A notebook whose conversion to Python goes past its limits is such a problem too.

    Raises
    ------
    OSError
        Only if the notebook converter cannot be started at all (the grader's failure, not
        the student's).
    """
    path = Path(path)
    if entry is None:
        entry = Entry(name or safe_name(stem_of(path.name)), path, display_path(path))
    name = entry.name
    if entry.problem is not None:
        return Submission(
            name, path, None, f"submission {entry.problem}", file_name=entry.file_name
        )
    try:
        data = read_entry(entry)
    except files.NotRegular as error:
        return Submission(
            name,
            path,
            None,
            f"submission is {error.kind}, not a regular file: not read",
            file_name=entry.file_name,
        )
    except FileNotFoundError:
        return Submission(name, path, None, "submission not found", file_name=entry.file_name)
    except OSError as error:
        return Submission(
            name,
            path,
            None,
            f"submission could not be read ({error.strerror or error})",
            file_name=entry.file_name,
        )
    if len(data) > MAX_BYTES:
        return Submission(
            name,
            path,
            None,
            f"submission is larger than {MAX_BYTES} bytes",
            file_name=entry.file_name,
        )
    try:
        decoded = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return Submission(
            name, path, None, "submission is not UTF-8 text", file_name=entry.file_name
        )
    if path.suffix != ".ipynb":
        return Submission(name, path, decoded, file_name=entry.file_name)
    try:
        cells, notes = notebook_cells(decoded)
    except ValueError as error:  # not a notebook, or its conversion went past a limit
        return Submission(
            name, path, None, f"submission could not be read: {error}", file_name=entry.file_name
        )
    source, layout = _join(cells)
    notes = tuple(text.clean(note, text.NOTE_CHARS) for note in notes[: text.MAX_NOTES])
    return Submission(name, path, source, None, layout, notes, entry.file_name)
