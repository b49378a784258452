"""The parts graded by hand: each student's ``manual.md`` and the class's ``manual.csv``
template.

``DIR/<student>/manual.md`` lists every part graded by hand of every exercise the student
handed in, with its maximum, its prompt and the student's answer
(:func:`rlfound.grading.intake.extract_manual_text`). The answer is student text, so it is
written inside a code fence it cannot close (:func:`rlfound.grading.output.report.fence`):
Markdown, HTML or a forged marker in it renders as plain text and is never read as structure.
A machine-readable comment before each answer, ``<!-- rlfound-manual exercise=ID item=NAME
max=P -->``, lets :func:`read_manual` read the file back.

``rlfound manual DIR -o manual.csv`` (:func:`manual_template_csv`) writes the template the
teaching team fills in: ``student, exercise, item, points, comment``, one row per student and
part, ``points`` and ``comment`` blank, then ``max_points`` and ``answer`` for reference
(columns the merge of ``--manual`` ignores).
"""

from __future__ import annotations

import csv
import dataclasses
import io
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from rlfound.grading.authoring.spec import Exercise
from rlfound.grading.intake import extract_manual_text, files, text
from rlfound.grading.output.atomic import write_atomic
from rlfound.grading.output.report import fence

__all__ = [
    "MANUAL_COLUMNS",
    "ManualItem",
    "answers_of",
    "manual_markdown",
    "manual_template_csv",
    "read_manual",
    "write_manual",
]

#: Columns of the ``manual.csv`` template.
MANUAL_COLUMNS = ("student", "exercise", "item", "points", "comment", "max_points", "answer")
_MARKER = re.compile(
    r"^<!-- rlfound-manual exercise=(?P<exercise>[a-z0-9-]+) item=(?P<item>[a-z0-9-]+) "
    r"max=(?P<max>[0-9.]+) -->$"
)
_FENCE_OPEN = re.compile(r"^(?P<fence>`{3,})text$")
#: Characters of an answer in the CSV template (the whole answer is in manual.md).
_CSV_ANSWER = 2000
_MAX_FILE = 4 * 1024 * 1024


@dataclasses.dataclass(frozen=True)
class ManualItem:
    """One part graded by hand of one student's hand-in, as ``manual.md`` records it."""

    exercise: str
    item: str
    max_points: float
    answer: str


def answers_of(path: Path, exercise: Exercise, *, entry=None) -> dict[str, str]:
    """The by-hand answers in one submission file (every part ``""`` if it cannot be read).

    The file is read as the grader reads it: a regular file only, never through a link, at
    most the intake's size limit (``entry``'s folder, when given, is where its name is
    looked up).
    """
    from rlfound.grading.intake.submissions import MAX_BYTES

    empty = {part.name: "" for part in exercise.manual}
    path = Path(path)
    try:
        if entry is not None and entry.dir_path is not None:
            import os

            folder = os.open(entry.dir_path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            try:
                data = files.read_regular(path.name, MAX_BYTES, dir_fd=folder)
            finally:
                os.close(folder)
        else:
            data = files.read_regular(path, MAX_BYTES)
        source = data.decode("utf-8-sig")
    except (OSError, files.NotRegular, UnicodeDecodeError):
        return empty
    return extract_manual_text(source, path.suffix == ".ipynb", exercise)


def _g(x: float) -> str:
    return f"{x:g}"


def manual_markdown(student: str, items: Sequence[tuple[Exercise, Mapping[str, str]]]) -> str:
    """The text of a student's ``manual.md``.

    Parameters
    ----------
    student : str
        The student's row key.
    items : sequence of (Exercise, mapping of str to str)
        Each exercise of the hand-in and the student's answers of its by-hand parts (a part
        missing from the mapping has no answer).

    Examples
    --------
    >>> from rlfound.grading.authoring.spec import load_exercises
    >>> exercise = load_exercises()["gae-recursion"]
    >>> answers = {"k-step-telescoping": "<script>x</script>"}
    >>> text = manual_markdown("ann", [(exercise, answers)])
    >>> "```text\\n<script>x</script>\\n```" in text
    True
    """
    name = text.clean(student, text.NAME_CHARS).replace("`", "'")
    lines = [f"# Parts graded by hand: `{name}`", ""]
    for exercise, answers in items:
        if not exercise.manual:
            continue
        lines += [f"## `{exercise.id}`: {exercise.title}", ""]
        for part in exercise.manual:
            answer = text.inert(answers.get(part.name, "") or "")
            lines += [
                f"### `{part.name}` ({_g(part.points)} points)",
                "",
                f"<!-- rlfound-manual exercise={exercise.id} item={part.name} "
                f"max={_g(part.points)} -->",
                "",
                *(f"> {line}".rstrip() for line in part.description.splitlines()),
                "",
            ]
            if answer.strip():
                lines += [fence(answer), ""]
            else:
                lines += ["*No answer found under this part's heading.*", ""]
    return "\n".join(lines).rstrip() + "\n"


def write_manual(
    folder: str | Path, student: str, items: Sequence[tuple[Exercise, Mapping[str, str]]]
) -> None:
    """Write ``folder/manual.md`` (see :func:`manual_markdown`) atomically."""
    write_atomic(Path(folder) / "manual.md", manual_markdown(student, items))


def read_manual(markdown: str) -> list[ManualItem]:
    """The parts recorded in a ``manual.md``, in order, each with its answer.

    A marker counts only outside a code fence, so no answer can add, hide or change a part.

    Examples
    --------
    >>> page = "<!-- rlfound-manual exercise=demo item=proof max=2 -->\\n```text\\nok\\n```\\n"
    >>> read_manual(page)
    [ManualItem(exercise='demo', item='proof', max_points=2.0, answer='ok')]
    """
    items: list[ManualItem] = []
    lines = markdown.splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        opening = _FENCE_OPEN.match(line)
        if opening is not None:
            try:
                closing = lines.index(opening["fence"], index + 1)
            except ValueError:  # never closed: the rest is its body
                closing = len(lines)
            body = "\n".join(lines[index + 1 : closing])
            if items and not items[-1].answer:
                items[-1] = dataclasses.replace(items[-1], answer=body)
            index = closing + 1
            continue
        marker = _MARKER.match(line)
        if marker is not None:
            items.append(ManualItem(marker["exercise"], marker["item"], float(marker["max"]), ""))
        index += 1
    return items


def _students(grades: str) -> list[str]:
    rows = list(csv.DictReader(io.StringIO(grades)))
    if not rows:
        return []
    key = "student" if "student" in rows[0] else "submission"
    if key not in rows[0]:
        raise ValueError("DIR: its grades.csv has no 'student' or 'submission' column")
    return [row[key] for row in rows]


def manual_template_csv(out_dir: str | Path) -> tuple[str, list[str]]:
    """The ``manual.csv`` template of a graded folder, and the students without a
    ``manual.md``.

    Reads ``out_dir/grades.csv`` for the students (its ``student`` column, or the
    single-exercise ``submission``) and each ``out_dir/<student>/manual.md`` for the parts.

    Raises
    ------
    ValueError
        If ``out_dir`` is not a graded folder (no ``grades.csv``).
    """
    out_dir = Path(out_dir)
    try:
        grades = files.read_regular(out_dir / "grades.csv", _MAX_FILE).decode("utf-8")
    except (OSError, files.NotRegular, UnicodeDecodeError):
        raise ValueError(f"DIR: {out_dir} has no readable grades.csv; grade it first") from None
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(MANUAL_COLUMNS)
    missing = []
    for student in _students(grades):
        # The name came from grades.csv, a file anyone may have edited: a plain folder name.
        plain = student.lstrip("'")
        if not plain or plain in (".", "..") or "/" in plain or "\\" in plain:
            missing.append(student)
            continue
        try:
            page = files.read_regular(out_dir / plain / "manual.md", _MAX_FILE).decode("utf-8")
        except (OSError, files.NotRegular, UnicodeDecodeError):
            missing.append(student)
            continue
        for item in read_manual(page):
            writer.writerow(
                [
                    text.csv_cell(plain),
                    item.exercise,
                    item.item,
                    "",
                    "",
                    _g(item.max_points),
                    text.csv_cell(item.answer, _CSV_ANSWER),
                ]
            )
    return buffer.getvalue(), missing
