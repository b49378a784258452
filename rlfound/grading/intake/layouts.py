"""Every layout a course's hand-ins arrive in, read as one hand-in per student.

:func:`collect` takes what the teaching team has, and finds each student's hand-in in it:

* **a file** (``alice.py``) or **a notebook** (``alice.ipynb``) named directly: one hand-in;
* **a folder of hand-ins** (a class folder). In it, each entry is one student's hand-in: a
  ``.py`` file, a notebook, a **per-student folder** (every ``.py`` and ``.ipynb`` in it, at any
  depth up to :data:`MAX_DEPTH` folders), a **per-student zip** (extracted safely, see
  :mod:`~rlfound.grading.intake.archives`), or **Canvas's bulk-download files**
  (``smithjane_4321_98765_gae_recursion.py``, ``smithjane_late_...``: every file and zip of one
  Canvas user is one hand-in, see :mod:`~rlfound.grading.intake.lms`);
* **Gradescope's export**: a folder (or a zip) with ``submission_metadata.yml`` and one
  ``submission_<id>/`` folder per submission (one hand-in per submitter of each);
* **a zip named directly**: the class's archive (Canvas's download, Gradescope's export, a
  zipped class folder), read like the folder it holds, when it holds Gradescope's metadata,
  a Canvas-named file, a zip, or two folders and no loose ``.py``/``.ipynb``; otherwise it is
  one student's zip (a zip of loose files, or of one folder of them). A zip inside a student's
  zip is not opened (it is listed as skipped).

Hidden entries (``.git``, ``.ipynb_checkpoints``, macOS's ``__MACOSX`` and ``._`` files) are
never part of a hand-in. Links, FIFOs, sockets and devices are not followed or opened: one named
like a hand-in (``.py``, ``.ipynb``, ``.zip``) is that student's failure with the reason, and
any other is listed as skipped. A folder named like a file (``bob.py/``) is such a failure too.

**The row key** (:attr:`HandIn.student`) is the folder name, the file or zip's stem, Canvas's
``lastfirst``, or Gradescope's submitter (the student id, else the e-mail, else the name).
It depends on the hand-in alone, never on how many files it holds, so it does not change when
a student's folder, zip or Canvas submission gains a second file. Keys are unique: one whose
text is its own safe name (:func:`~rlfound.grading.intake.submissions.unique_names`) and that
no other hand-in asks for keeps it; every other gets ``<safe name>-<hash>``, the hash of where it
came from (its path, Canvas's user id, Gradescope's submitter), so a look-alike (``alice!/``
beside ``alice/``) can never take a classmate's row.

Extracted archives live in a private temporary folder that is removed when the last hand-in
that needs it is garbage-collected, or when the process exits.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import os
import stat
import tempfile
import weakref
from collections.abc import Iterable
from pathlib import Path

from rlfound.grading.intake import archives, files, lms, submissions, text
from rlfound.grading.intake.submissions import Entry

__all__ = [
    "LAYOUTS",
    "MAX_DEPTH",
    "MAX_FILES",
    "MAX_SKIPPED",
    "Collected",
    "HandIn",
    "collect",
    "collect_all",
    "exercise_entry",
    "find_exercise_file",
]

LAYOUTS = ("file", "notebook", "folder", "zip", "canvas", "gradescope")
#: Folders a per-student folder is read down to (the same cap as a student's zip).
MAX_DEPTH = archives.HAND_IN.max_depth
#: ``.py`` and ``.ipynb`` files of one hand-in read; the rest are listed as skipped.
MAX_FILES = archives.HAND_IN.max_files
#: Entries of one per-student folder looked at.
MAX_ENTRIES = archives.HAND_IN.max_members
#: Skipped entries listed per hand-in (and for the class); the rest are counted.
MAX_SKIPPED = 50

_ZIP = ".zip"
_NOT_CODE = "not a .py or .ipynb file"


@dataclasses.dataclass(frozen=True)
class HandIn:
    """One student's hand-in, whatever layout it came in (see the module docstring).

    ``files`` are the hand-in's ``.py`` and ``.ipynb`` files; each :class:`Entry` carries the
    row key as its ``name`` and its path inside the hand-in (inert, capped) as its
    ``file_name``, so a submission read from it reports under the student's row.
    ``submitted_at`` comes only from the layout's metadata (Gradescope's), never from a file's
    modification time; ``late_mark`` is Canvas's mark in the file names (None when the layout
    has none). ``problem`` says why the hand-in cannot be read at all (a refused zip); it is a
    failure of this student only. ``skipped`` lists ``(name, reason)`` of what was left out;
    ``source`` is where the hand-in is (its folder, zip or first file; inert, capped).
    """

    student: str
    layout: str
    files: tuple[Entry, ...]
    lms_id: str | None = None
    submitted_at: datetime.datetime | None = None
    late_mark: bool | None = None
    problem: str | None = None
    skipped: tuple[tuple[str, str], ...] = ()
    source: str = ""
    # Keeps the folder its archive was extracted to alive as long as the hand-in is.
    workspace: object = dataclasses.field(default=None, repr=False, compare=False)


class Collected(list):
    """The hand-ins :func:`collect` found (a list, sorted by key), with ``skipped``:
    ``(entry, reason)`` of every entry of the class's folders that is no hand-in."""

    skipped: list[tuple[str, str]]


class _Workspace:
    """A private temporary folder for extracted archives, made when first needed."""

    def __init__(self):
        self.root: Path | None = None
        self.count = 0

    def new_folder(self) -> Path:
        if self.root is None:
            self.root = Path(tempfile.mkdtemp(prefix="rlfound-hand-ins-"))
            weakref.finalize(self, files.remove_tree, self.root)
        self.count += 1
        return self.root / f"archive-{self.count}"


@dataclasses.dataclass
class _Found:
    """A hand-in before the keys are given out."""

    stem: str
    identity: bytes
    layout: str
    source: str
    files: list[tuple[Path, str, str | None, Path | None]] = dataclasses.field(default_factory=list)
    skipped: list[tuple[str, str]] = dataclasses.field(default_factory=list)
    lms_id: str | None = None
    submitted_at: datetime.datetime | None = None
    late_mark: bool | None = None
    problem: str | None = None


def _capped(skipped: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """At most :data:`MAX_SKIPPED` entries, each name inert and capped, and a count of the
    rest."""
    kept = [(_shown(name), why) for name, why in skipped[:MAX_SKIPPED]]
    if len(skipped) > MAX_SKIPPED:
        kept.append((f"... and {len(skipped) - MAX_SKIPPED} more", "not listed"))
    return kept


def _shown(raw: str) -> str:
    """A name for a report: inert and capped (the raw text is kept until then, so that a
    path is cut once, at its end)."""
    return text.clean(raw, text.NAME_CHARS)


def _is_code(name: str) -> bool:
    return name.endswith(submissions.SUFFIXES) and submissions.stem_of(name) != name


def _is_zip(name: str) -> bool:
    return name.lower().endswith(_ZIP) and len(name) > len(_ZIP)


def _zip_stem(name: str) -> str:
    return name[: -len(_ZIP)]


def collect(path: str | os.PathLike) -> Collected:
    """Every student's hand-in under ``path`` (see the module docstring for the layouts).

    Parameters
    ----------
    path : path
        A file, a notebook, a folder of hand-ins, a zip of them, a Canvas bulk download or a
        Gradescope export (a folder or its zip).

    Returns
    -------
    Collected
        The hand-ins, sorted by key, and the entries that are no hand-in (``skipped``).

    Raises
    ------
    ValueError
        Naming ``path`` when it does not exist or holds no submission, or when it is a class
        archive or a Gradescope export that cannot be read.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> (folder / "alice").mkdir()
    >>> _ = (folder / "alice" / "gae_recursion.py").write_text("x = 1\\n")
    >>> _ = (folder / "bob.py").write_text("x = 2\\n")
    >>> [(h.student, h.layout, len(h.files)) for h in collect(folder)]
    [('alice', 'folder', 1), ('bob', 'file', 1)]
    """
    return collect_all([path])


def collect_all(paths: Iterable[str | os.PathLike]) -> Collected:
    """The hand-ins under each of ``paths``, with keys unique across all of them (see
    :func:`collect`; each path must hold a submission).

    Raises
    ------
    ValueError
        Naming the first path that does not exist or holds no submission.
    """
    collector = _Collector()
    for raw in paths:
        path = Path(raw)
        before = len(collector.found)
        collector.path(path)
        if not any(item.files or item.problem for item in collector.found[before:]):
            raise ValueError(
                f"submissions path {submissions.display_path(path)} holds no submission "
                "(no .py, .ipynb or .zip file, no student's folder with one)"
            )
    return collector.hand_ins()


class _Collector:
    """Walks the paths given, accumulating hand-ins before their keys are given out."""

    def __init__(self):
        self.workspace = _Workspace()
        self.found: list[_Found] = []
        self.skipped: list[tuple[str, str]] = []

    def hand_ins(self) -> Collected:
        found = self.found
        keys = submissions.unique_names([i.stem for i in found], [i.identity for i in found])
        workspace = self.workspace if self.workspace.root is not None else None
        collected = Collected(
            _hand_in(key, item, workspace) for key, item in zip(keys, found, strict=True)
        )
        collected.sort(key=lambda hand_in: hand_in.student)
        collected.skipped = _capped(self.skipped)
        return collected

    # ------------------------------------------------------------ what was named

    def path(self, path: Path) -> None:
        shown = submissions.path_text(path)
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            raise ValueError(f"submissions path {_shown(shown)} does not exist") from None
        except OSError as error:
            raise ValueError(
                f"submissions path {_shown(shown)} could not be read ({error.strerror})"
            ) from None
        if stat.S_ISDIR(info.st_mode):
            self.class_folder(path, shown)
        elif stat.S_ISREG(info.st_mode) and _is_zip(path.name):
            self.named_zip(path, shown)
        elif stat.S_ISREG(info.st_mode):
            # A file named directly is a hand-in whatever its name (read as Python unless it
            # is a notebook), as `rlfound grade EXERCISE FILE` always did.
            self.loose_file(path, path.name, shown, None, {})
        else:
            self.unreadable(path, path.name, shown, info.st_mode)

    def unreadable(self, path: Path, name: str, shown: str, mode: int) -> None:
        """An entry named like a hand-in that is not a regular file: a row with the reason."""
        stem = _zip_stem(name) if _is_zip(name) else submissions.stem_of(name)
        problem = f"{files.kind_of(mode)}, not a regular file: not read"
        layout = "zip" if _is_zip(name) else "file"
        item = _Found(stem, bytes(path), layout, shown, problem=problem)
        item.files.append((path, shown, problem, None))
        self.found.append(item)

    def named_zip(self, path: Path, shown: str) -> None:
        """A zip named directly: the class's archive, or one student's (module docstring)."""
        try:
            members = archives.read_listing(path, archives.CLASS)
        except archives.ArchiveError as error:
            members, refused = None, error
        if members is None or not _is_class_archive(members):
            item = _Found(_zip_stem(path.name), bytes(path), "zip", shown)
            if members is None:
                item.problem = f"{shown} was not extracted: {refused}"
            else:
                self.add_zip(item, path, shown)
            self.found.append(item)
            return
        destination = self.workspace.new_folder()
        try:
            extracted = archives.extract(path, destination, _choose_for_class, archives.CLASS)
        except archives.ArchiveError as error:
            raise ValueError(f"submissions path {_shown(shown)}: {error}") from None
        self.skipped += [(f"{shown}/{name}", why) for name, why in extracted.skipped]
        root, shown_root = destination, shown
        visible = [name for name in sorted(os.listdir(root)) if not archives.hidden_reason(name)]
        if len(visible) == 1 and (root / visible[0]).is_dir():
            root, shown_root = root / visible[0], f"{shown}/{visible[0]}"
        self.class_folder(root, shown_root, identity_root=shown_root)

    def add_zip(self, item: _Found, path: Path, shown: str) -> None:
        """Extract one student's zip into ``item`` (a refused zip is ``item``'s problem)."""
        destination = self.workspace.new_folder()
        try:
            extracted = archives.extract(path, destination, _choose_for_hand_in, archives.HAND_IN)
        except archives.ArchiveError as error:
            item.problem = f"{shown} was not extracted: {error}"
            return
        for parts in extracted.files:
            target = destination.joinpath(*parts)
            inner = f"{shown}/{'/'.join(parts)}"
            item.files.append((target, inner, None, target.parent))
        item.skipped += [(f"{shown}/{name}", why) for name, why in extracted.skipped]

    # ------------------------------------------------------------ a class folder

    def class_folder(self, folder: Path, shown: str, identity_root: str | None = None) -> None:
        """Each entry of ``folder`` is a hand-in (module docstring); ``identity_root``, for
        an extracted archive, replaces the temporary path in what tells keys apart."""
        names = _listing(folder, shown)
        if lms.METADATA_NAME in names:
            self.gradescope(folder, shown, names)
            return
        visible = [name for name in names if not archives.hidden_reason(name)]
        if len(visible) == 1 and _is_regular(folder / visible[0] / lms.METADATA_NAME):
            inner = folder / visible[0]
            self.gradescope(inner, f"{shown}/{visible[0]}", _listing(inner, shown))
            return
        canvas: dict[tuple[str, str], _Found] = {}
        for name in names:
            path = folder / name
            entry_shown = f"{shown}/{submissions.path_text(name)}"
            identity = bytes(path) if identity_root is None else f"{identity_root}/{name}"
            if isinstance(identity, str):
                identity = identity.encode("utf-8", "surrogateescape")
            hidden = archives.hidden_reason(name)
            if hidden is not None:
                self.skipped.append((entry_shown, hidden))
                continue
            try:
                mode = os.lstat(path).st_mode
            except OSError as error:
                self.skipped.append((entry_shown, f"could not be examined ({error.strerror})"))
                continue
            if stat.S_ISDIR(mode) and not _is_code(name):
                item = _Found(name, identity, "folder", entry_shown)
                self.walk(item, path, entry_shown)
                self.found.append(item)
            elif stat.S_ISREG(mode) and (_is_code(name) or _is_zip(name)):
                self.loose_file(path, name, entry_shown, folder, canvas, identity)
            elif stat.S_ISREG(mode):
                self.skipped.append((entry_shown, "not a .py, .ipynb or .zip file"))
            elif _is_code(name) or _is_zip(name):
                self.unreadable(path, name, entry_shown, mode)
            else:
                self.skipped.append((entry_shown, f"{files.kind_of(mode)}: not read"))

    def loose_file(self, path, name, shown, folder, canvas, identity=None) -> None:
        """A file of a class folder (or named directly): a Canvas file, or a hand-in."""
        parsed = lms.canvas_name(name)
        if parsed is not None:
            item = canvas.get((parsed.student, parsed.user_id))
            if item is None:
                who = f"canvas:{parsed.user_id}:{parsed.student}"
                who = who.encode("utf-8", "surrogateescape")
                item = _Found(parsed.student, who, "canvas", shown)
                item.lms_id, item.late_mark = parsed.user_id, False
                canvas[(parsed.student, parsed.user_id)] = item
                self.found.append(item)
            item.late_mark = item.late_mark or parsed.late
            if _is_zip(name):
                self.add_zip(item, path, shown)
            elif _is_code(name):
                item.files.append((path, shown, None, folder))
            else:
                item.skipped.append((shown, _NOT_CODE))
            return
        identity = bytes(path) if identity is None else identity
        if _is_zip(name):
            item = _Found(_zip_stem(name), identity, "zip", shown)
            self.add_zip(item, path, shown)
        else:
            item = _Found(submissions.stem_of(name), identity, _layout_of(name), shown)
            item.files.append((path, shown, None, folder))
        self.found.append(item)

    # ------------------------------------------------------------ Gradescope

    def gradescope(self, folder: Path, shown: str, names: list[str]) -> None:
        """A Gradescope export: one hand-in per submitter of each ``submission_<id>/``."""
        try:
            data = files.read_regular(folder / lms.METADATA_NAME, lms.MAX_METADATA_BYTES)
            metadata = lms.gradescope_metadata(data)
        except OSError as error:
            raise ValueError(
                f"submissions path {_shown(shown)}: {lms.METADATA_NAME} could not be read "
                f"({error.strerror or error})"
            ) from None
        except ValueError as error:
            raise ValueError(f"submissions path {_shown(shown)}: {error}") from None
        for name in names:
            path = folder / name
            entry_shown = f"{shown}/{submissions.path_text(name)}"
            if name == lms.METADATA_NAME:
                continue
            hidden = archives.hidden_reason(name)
            if hidden is not None or not _is_dir(path):
                why = hidden or "not a submission folder of the Gradescope export"
                self.skipped.append((entry_shown, why))
                continue
            template = _Found(name, f"gradescope:{name}".encode(), "gradescope", entry_shown)
            self.walk(template, path, entry_shown)
            entry = metadata.get(name)
            people = entry.submitters if entry is not None else ()
            for person in people or (None,):
                item = dataclasses.replace(template, files=list(template.files))
                if person is not None:
                    # The LMS's own identifiers: their safe form is the key.
                    item.stem = submissions.safe_name(person.sid or person.email or person.name)
                    item.lms_id = person.sid or person.email or None
                    who = f"gradescope:{person.sid}:{person.email}:{person.name}"
                    item.identity = who.encode("utf-8", "surrogateescape")
                item.submitted_at = entry.created_at if entry is not None else None
                self.found.append(item)

    # ------------------------------------------------------------ a student's folder

    def walk(self, item: _Found, folder: Path, shown: str) -> None:
        """Add every ``.py``/``.ipynb`` under ``folder`` to ``item``, down to the caps; never
        through a link."""
        pending = [(folder, shown, 0)]
        examined = 0
        while pending:
            current, current_shown, depth = pending.pop()
            try:
                with os.scandir(current) as listing:
                    entries = sorted(listing, key=lambda entry: entry.name)
            except OSError as error:
                item.skipped.append((current_shown, f"could not be read ({error.strerror})"))
                continue
            folders: list[tuple[Path, str, int]] = []
            for entry in entries:
                examined += 1
                entry_shown = f"{current_shown}/{submissions.path_text(entry.name)}"
                if examined > MAX_ENTRIES:
                    item.skipped.append(
                        (shown, f"holds more than {MAX_ENTRIES} entries: the rest not examined")
                    )
                    return
                why = self.walk_entry(item, entry, entry_shown, current, depth, folders)
                if why is not None:
                    item.skipped.append((entry_shown, why))
            pending += reversed(folders)  # a folder's files, then its folders in name order

    def walk_entry(self, item, entry, shown, folder, depth, folders) -> str | None:
        """Add or queue one entry of a student's folder; the reason it is skipped, or None."""
        hidden = archives.hidden_reason(entry.name)
        if hidden is not None:
            return hidden
        try:
            mode = entry.stat(follow_symlinks=False).st_mode
        except OSError as error:
            return f"could not be examined ({error.strerror})"
        if stat.S_ISDIR(mode) and not _is_code(entry.name):
            if depth + 1 > MAX_DEPTH:
                return f"nested deeper than {MAX_DEPTH} folders: not examined"
            folders.append((Path(entry.path), shown, depth + 1))
            return None
        if _is_zip(entry.name):
            return "an archive inside a hand-in: not opened"
        if not _is_code(entry.name):
            return _NOT_CODE if stat.S_ISREG(mode) else f"{files.kind_of(mode)}: not read"
        if len(item.files) >= MAX_FILES:
            return f"the hand-in holds more than {MAX_FILES} .py and .ipynb files: not read"
        problem = None
        if not stat.S_ISREG(mode):
            problem = f"{files.kind_of(mode)}, not a regular file: not read"
        item.files.append((Path(entry.path), shown, problem, folder if problem is None else None))
        return None


def _hand_in(key: str, item: _Found, workspace) -> HandIn:
    entries = tuple(
        Entry(key, path, _shown(shown), problem, folder)
        for path, shown, problem, folder in item.files
    )
    problem = None if item.problem is None else text.clean(item.problem, text.ERROR_CHARS)
    return HandIn(
        key,
        item.layout,
        entries,
        item.lms_id,
        item.submitted_at,
        item.late_mark,
        problem,
        tuple(_capped(item.skipped)),
        _shown(item.source),
        workspace,
    )


def _layout_of(name: str) -> str:
    return "notebook" if name.endswith(".ipynb") else "file"


def _listing(folder: Path, shown: str) -> list[str]:
    try:
        return sorted(os.listdir(folder))
    except OSError as error:
        raise ValueError(
            f"submissions path {_shown(shown)} could not be read ({error.strerror})"
        ) from None


def _is_regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _is_dir(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _choose_for_hand_in(member: archives.Member) -> int | str:
    name = member.parts[-1]
    if _is_zip(name):
        return "an archive inside an archive: not opened"
    if _is_code(name):
        return submissions.MAX_BYTES
    return _NOT_CODE


def _choose_for_class(member: archives.Member) -> int | str:
    name = member.parts[-1]
    if name == lms.METADATA_NAME:
        return lms.MAX_METADATA_BYTES
    if _is_zip(name):
        return archives.HAND_IN.max_archive_bytes
    if _is_code(name):
        return submissions.MAX_BYTES
    return "not a .py, .ipynb or .zip file"


def _is_class_archive(members: list[archives.Member]) -> bool:
    """Whether a zip named directly holds a class (see the module docstring)."""
    paths = [
        m.parts for m in members if not m.is_dir and not any(map(archives.hidden_reason, m.parts))
    ]
    tops = {parts[0] for parts in paths}
    if len(tops) == 1 and all(len(parts) > 1 for parts in paths):
        paths = [parts[1:] for parts in paths]  # one folder around everything: look inside
    loose = [parts[0] for parts in paths if len(parts) == 1]
    folders = {parts[0] for parts in paths if len(parts) > 1}
    if any(parts[-1] == lms.METADATA_NAME and len(parts) <= 2 for parts in paths):
        return True
    if any(lms.canvas_name(name) is not None or _is_zip(name) for name in loose):
        return True
    return len(folders) >= 2 and not any(_is_code(name) for name in loose)


# ---------------------------------------------------------------- which file answers what


def _declared_exercises(entry: Entry) -> frozenset[str]:
    """The exercises a file's ``# rlfound exercise:`` headers name (in a notebook: in its code
    cells); empty when it has none or cannot be read."""
    from rlfound.grading.authoring.starter import MARKER

    if entry.problem is not None:
        return frozenset()
    try:
        data = submissions.read_entry(entry)
    except OSError:
        return frozenset()
    if len(data) > submissions.MAX_BYTES:
        return frozenset()
    source = data.decode("utf-8-sig", errors="replace")
    if entry.path.name.endswith(".ipynb"):
        try:
            notebook = json.loads(source)
        except (ValueError, RecursionError):
            return frozenset()
        cells = notebook.get("cells") if isinstance(notebook, dict) else None
        texts = []
        for cell in cells if isinstance(cells, list) else []:
            if isinstance(cell, dict) and cell.get("cell_type") == "code":
                lines = cell.get("source")
                if isinstance(lines, list):
                    lines = "".join(line for line in lines if isinstance(line, str))
                texts.append(lines if isinstance(lines, str) else "")
        source = "\n".join(texts)
    return frozenset(match["id"] for match in MARKER.finditer(source))


def _plain_stem(entry: Entry, hand_in: HandIn) -> str:
    """The stem a file was handed in under, for matching a module name."""
    name = entry.path.name
    if hand_in.layout == "canvas":
        parsed = lms.canvas_name(name)
        if parsed is not None:
            name = lms.without_resubmission_suffix(parsed.file_name)
    return submissions.stem_of(name).lower().replace("-", "_")


def find_exercise_file(hand_in: HandIn, exercise: str, module: str) -> Entry | None:
    """The file of ``hand_in`` that answers ``exercise``.

    By the starter's header (``# rlfound exercise: <exercise>``, in a notebook in a code
    cell), else by file name (``<module>.py`` or ``.ipynb``, ``-`` and ``_`` alike, case
    ignored, Canvas's ``-N`` resubmission suffix dropped), else the hand-in's only file if it
    names no other exercise. A file whose header names another exercise never answers this
    one.

    Parameters
    ----------
    hand_in : HandIn
        One student's hand-in, from :func:`collect`.
    exercise : str
        The exercise id, e.g. ``"gae-recursion"``.
    module : str
        The starter's module name, e.g. ``"gae_recursion"``.

    Returns
    -------
    Entry or None
        The file, or None when the hand-in holds none for this exercise.

    Raises
    ------
    ValueError
        If two files claim the exercise the same way (the message names both).
    """
    declared = [_declared_exercises(entry) for entry in hand_in.files]
    by_header = [e for e, d in zip(hand_in.files, declared, strict=True) if exercise in d]
    unclaimed = [e for e, d in zip(hand_in.files, declared, strict=True) if not d]
    wanted = {module.lower().replace("-", "_"), exercise.lower().replace("-", "_")}
    by_name = [e for e in unclaimed if _plain_stem(e, hand_in) in wanted]
    for how, candidates in (("its header", by_header), ("their names", by_name)):
        if len(candidates) > 1:
            first, second = candidates[0].file_name, candidates[1].file_name
            raise ValueError(
                f"{hand_in.student}: two files claim exercise {exercise} by {how}: "
                f"{first} and {second}"
            )
        if candidates:
            return candidates[0]
    if len(hand_in.files) == 1 and unclaimed:
        return unclaimed[0]
    return None


def exercise_entry(hand_in: HandIn, exercise: str, module: str | None = None) -> Entry:
    """The entry to grade for ``exercise`` in ``hand_in``: the file that answers it
    (:func:`find_exercise_file`), or an entry whose ``problem`` says why there is none (the
    hand-in was refused, holds no file for it, or two files claim it).

    ``module`` defaults to the exercise id with ``_`` for ``-`` (the starter's file name).
    """
    module = module or exercise.replace("-", "_")
    anchor = hand_in.files[0].path if hand_in.files else Path(hand_in.source or hand_in.student)
    shown = hand_in.source or hand_in.student

    def failed(problem: str) -> Entry:
        return Entry(hand_in.student, anchor, shown, text.clean(problem, text.ERROR_CHARS))

    if hand_in.problem is not None:
        return failed(hand_in.problem)
    try:
        found = find_exercise_file(hand_in, exercise, module)
    except ValueError as error:
        return failed(f"not graded: {error}")
    if found is None:
        return failed(
            f"has no file for {exercise}: none has its '# rlfound exercise: {exercise}' header "
            f"or is named {module}.py or {module}.ipynb"
        )
    return found
