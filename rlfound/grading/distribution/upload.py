"""Find the file to grade in a student's Gradescope upload, whatever the upload holds.

An upload is data the student controls (a GitHub repository can hold links, a zip can hold
anything): the search looks at it without following a link or opening anything but a regular
file, and it is bounded, so that no upload can make it fail or take long:

* it never goes more than :data:`MAX_DEPTH` folders down, and looks at :data:`MAX_ENTRIES`
  entries at most (breadth first, so the files nearest the top are seen first);
* it keeps no recursion and no open folder (each folder is listed, then closed);
* it opens at most :data:`MAX_EXAMINED` candidate files, :data:`~.submissions.MAX_BYTES`
  each, to rank them;
* a folder it cannot list, a name that is not UTF-8, a FIFO named ``answer.py`` are noted
  for the student, never an error.

Hidden folders and files (``.git``, ``.ipynb_checkpoints``, macOS's ``._`` copies),
``__MACOSX`` and ``__pycache__`` are not searched: they hold copies, not the student's work.

The candidates are the ``.py`` and ``.ipynb`` regular files; when there are several, the one
graded is the first by: names this exercise in its ``# rlfound exercise:`` header (the
starter's first line), names no other exercise there, defines every function the exercise
declares, has the starter's file name, is nearer the top, comes first in name order. The
student is told which file was graded, why, and which were not.
"""

from __future__ import annotations

import collections
import dataclasses
import os
import re
import stat
from pathlib import Path

from rlfound.grading.authoring import spec
from rlfound.grading.authoring.starter import exercise_of
from rlfound.grading.intake import files, submissions, text

__all__ = ["MAX_DEPTH", "MAX_ENTRIES", "MAX_EXAMINED", "Choice", "choose_submission"]

#: Folders searched below the upload's own (a file at ``a/b/c.py`` is 2 folders down).
MAX_DEPTH = 16
#: Entries (files, folders, anything) looked at in the whole upload.
MAX_ENTRIES = 10_000
#: Candidate files opened to rank them (the others are ranked by name and place only).
MAX_EXAMINED = 20
#: Files named in the message (not graded, not read, folders not searched).
_NAMED = 10
_SKIPPED_FOLDERS = {"__MACOSX", "__pycache__"}
#: The header as it appears in a notebook's JSON (a cell's source is a JSON string).
_NOTEBOOK_MARKER = re.compile(r"# rlfound exercise: (?P<id>[a-z0-9-]+)")


@dataclasses.dataclass(frozen=True)
class Choice:
    """The file of an upload to grade (None when there is none) and what the student is told:
    which file was graded and why, the other candidates, and what was not searched."""

    path: Path | None
    message: str


@dataclasses.dataclass(frozen=True)
class _Candidate:
    path: Path
    relative: str  # as the student is shown it, inert
    depth: int


def _shown(relative: Path) -> str:
    """A path of the upload as text, whatever bytes it holds (undecodable bytes as escapes)."""
    raw = os.fsencode(relative.as_posix())
    return text.clean(raw.decode("utf-8", "backslashreplace"), text.NAME_CHARS)


def _search(folder: Path) -> tuple[list[_Candidate], list[str]]:
    """The candidate files of an upload, and notes on what was not searched or not read."""
    candidates: list[_Candidate] = []
    not_read: list[str] = []
    unlisted: list[str] = []
    deep: list[str] = []
    seen = 0
    full = False
    pending = collections.deque([(folder, 0)])
    while pending and not full:
        directory, depth = pending.popleft()
        relative = directory.relative_to(folder)
        entries = []
        try:
            with os.scandir(directory) as listing:
                for entry in listing:
                    seen += 1
                    if seen > MAX_ENTRIES:
                        full = True
                        break
                    entries.append(entry)
        except OSError as error:
            unlisted.append(f"{_shown(relative)} ({error.strerror or type(error).__name__})")
            continue
        for entry in sorted(entries, key=lambda e: e.name):
            name = entry.name
            if name.startswith("."):
                continue
            try:
                mode = entry.stat(follow_symlinks=False).st_mode
            except OSError:
                continue  # gone, or its path is too long to be examined
            if stat.S_ISDIR(mode):
                if name in _SKIPPED_FOLDERS:
                    continue
                if depth + 1 > MAX_DEPTH:
                    deep.append(_shown(relative / name))
                else:
                    pending.append((directory / name, depth + 1))
            elif name.endswith(submissions.SUFFIXES) and Path(name).stem:
                shown = _shown(relative / name)
                if stat.S_ISREG(mode):
                    candidates.append(_Candidate(directory / name, shown, depth))
                else:
                    not_read.append(f"{shown} is {files.kind_of(mode)}")
    notes = []
    if full:
        notes.append(
            f"the upload holds more than {MAX_ENTRIES} entries: only the first {MAX_ENTRIES} "
            "were searched"
        )
    if deep:
        notes.append(f"folders more than {MAX_DEPTH} levels down were not searched: {_names(deep)}")
    if unlisted:
        notes.append(f"folders that could not be read: {_names(unlisted)}")
    if not_read:
        notes.append(f"not read, since only regular files are: {_names(not_read)}")
    return candidates, notes


def _names(names: list[str]) -> str:
    shown = ", ".join(names[:_NAMED])
    return shown + (f" and {len(names) - _NAMED} more" if len(names) > _NAMED else "")


def _examine(candidate: _Candidate, exercise: spec.Exercise) -> tuple[str | None, bool]:
    """The exercise a candidate's header names, and whether it defines every declared
    function; (None, False) when it cannot be read."""
    try:
        data = files.read_regular(candidate.path, submissions.MAX_BYTES)
    except OSError:
        return None, False
    source = data.decode("utf-8", "replace")
    if candidate.path.suffix == ".ipynb":
        match = _NOTEBOOK_MARKER.search(source)
        named = match["id"] if match else None
    else:
        named = exercise_of(source)
    return named, all(f"def {f.name}(" in source for f in exercise.functions)


def choose_submission(folder: Path, exercise: spec.Exercise) -> Choice:
    """The file to grade among a student's upload in ``folder`` (see the module docstring).

    Only regular files count: a link in the upload (which could point at the reference
    solution next to the grader) is never followed. Never raises for anything the upload
    holds.
    """
    folder = Path(folder)
    try:
        info = os.lstat(folder)
    except OSError as error:
        return Choice(None, f"The upload folder could not be read ({error.strerror}).")
    if not stat.S_ISDIR(info.st_mode):
        return Choice(None, f"The upload is {files.kind_of(info.st_mode)}, not a folder.")
    candidates, notes = _search(folder)
    suffixes = " or ".join(submissions.SUFFIXES)
    tail = "".join(f"\nNote: {note}." for note in notes)
    if not candidates:
        return Choice(None, f"Nothing to grade: no {suffixes} file was found in the upload.{tail}")
    if len(candidates) == 1:
        only = candidates[0]
        return Choice(only.path, f"Graded {only.relative}, the only {suffixes} file.{tail}")
    starter = exercise.id.replace("-", "_")
    candidates.sort(key=lambda c: (c.depth, c.relative))
    facts = {}
    for index, candidate in enumerate(candidates):
        named, defines = _examine(candidate, exercise) if index < MAX_EXAMINED else (None, False)
        facts[candidate.path] = (named, defines, Path(candidate.path.name).stem == starter)

    def rank(candidate: _Candidate) -> tuple:
        named, defines, starter_name = facts[candidate.path]
        another = named is not None and named != exercise.id
        ours = named == exercise.id
        return (
            not ours,
            another,
            not defines,
            not starter_name,
            candidate.depth,
            candidate.relative,
        )

    ordered = sorted(candidates, key=rank)
    chosen, runner_up = ordered[0], ordered[1]
    named, defines, starter_name = facts[chosen.path]
    if named == exercise.id:
        why = f"it names this exercise ({exercise.id}) in its '# rlfound exercise:' header"
    elif defines:
        why = f"it defines {', '.join(f.name for f in exercise.functions)}"
    elif starter_name:
        why = "it has the starter's name"
    else:
        why = (
            "no file names this exercise in a '# rlfound exercise:' header, defines its "
            "functions or has the starter's name, and it is the nearest the top, first by name"
        )
    if rank(runner_up)[:4] == rank(chosen)[:4] and (
        named == exercise.id or defines or starter_name
    ):
        # Another file has the same reason: say what broke the tie.
        how = "is nearer the top" if chosen.depth < runner_up.depth else "comes first by name"
        why += f"; so does {runner_up.relative}, but this one {how}"
    if len(candidates) > MAX_EXAMINED:
        why += f" (only the first {MAX_EXAMINED} files were opened)"
    others = _names([c.relative for c in ordered[1:]])
    message = (
        f"Graded {chosen.relative}, one of {len(candidates)} {suffixes} files in the upload, "
        f"because {why}. Not graded: {others}. To be sure which file is graded, upload only "
        f"that one.{tail}"
    )
    return Choice(chosen.path, message)
