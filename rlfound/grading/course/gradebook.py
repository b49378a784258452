"""The assignment's grade sheet: one row per student, and the student's feedback.

``grades.csv`` has exactly the columns ``student``, one per exercise (its automatic points),
``manual``, ``late_days``, ``penalty``, ``total``, ``max_total``, ``status``, one row per
student sorted by ``student``. ``penalty`` is the points the late policy took:
``total = (automatic + manual) - penalty``. ``status`` says, in words, everything that is not
a plain on-time, fully graded hand-in ("graded" when there is nothing to say).
"""

from __future__ import annotations

import csv
import dataclasses
import io
from collections.abc import Mapping, Sequence
from pathlib import Path

from rlfound.grading.course import late
from rlfound.grading.course.assignment import Assignment
from rlfound.grading.course.manual import ManualPoints, items
from rlfound.grading.intake import text
from rlfound.grading.output import report
from rlfound.grading.scoring.results import SubmissionResult

__all__ = [
    "Lateness",
    "Row",
    "columns",
    "feedback_markdown",
    "grades_csv",
    "lateness",
    "make_row",
    "number",
    "read_grades",
]

#: What a Canvas ``late`` mark with no submission time counts as.
LATE_MARK_DAYS = 1


def number(x: float) -> str:
    """A number as the grade sheet writes it: an integer without ``.0``, else rounded to 6
    decimals.

    Examples
    --------
    >>> number(17.0), number(2 / 3), number(-0.0)
    ('17', '0.666667', '0')
    """
    x = round(float(x), 6) + 0.0  # + 0.0 turns -0.0 into 0.0
    return str(int(x)) if x.is_integer() else repr(x)


def columns(assignment: Assignment) -> list[str]:
    """The header of ``grades.csv``."""
    return [
        "student",
        *assignment.ids,
        "manual",
        "late_days",
        "penalty",
        "total",
        "max_total",
        "status",
    ]


@dataclasses.dataclass(frozen=True)
class Lateness:
    """How late a hand-in is and why: the days and the words for ``status`` (or "")."""

    days: int
    note: str


def lateness(
    assignment: Assignment,
    submitted,
    late_mark: bool | None,
    extension_days: float,
) -> Lateness:
    """The late days of one hand-in and what ``status`` says about them.

    ``submitted`` is the aware submission time (from ``--submitted`` or the layout's own
    metadata) or None. With no time, a Canvas ``late`` mark counts as
    :data:`LATE_MARK_DAYS` day (0 when the student has an extension: Canvas marks late
    against the original due date, so the mark says nothing about the extended one); no time
    and no mark counts as on time, and ``status`` says the time was unknown, unless the late
    policy costs nothing (no penalty, no limit on late days), where the time cannot matter.
    File modification times are never used: a copy or an unzip changes them.
    """
    extension = f"extension {number(extension_days)} day(s)" if extension_days else ""
    notes = [extension] if extension else []
    if submitted is not None:
        days = late.late_days(assignment, submitted, extension_days)
        if days:
            notes.insert(0, f"late {days} day(s)")
    elif late_mark:
        days = 0 if extension_days else LATE_MARK_DAYS
        notes.insert(
            0,
            f"marked late by the LMS, no submission time: counted as {days} late day(s)"
            + ("" if days else " (the mark is against the original due date)"),
        )
    else:
        days = 0
        if assignment.late_penalty_per_day or assignment.max_late_days is not None:
            notes.insert(0, "submission time unknown: counted on time")
    return Lateness(days, "; ".join(notes))


@dataclasses.dataclass(frozen=True)
class Row:
    """One row of ``grades.csv``: the cells as text, by column."""

    student: str
    cells: dict[str, str]


def make_row(
    assignment: Assignment,
    student: str,
    results: Mapping[str, SubmissionResult] | None,
    manual: Mapping[tuple[str, str, str], ManualPoints],
    timing: Lateness,
    notes: Sequence[str] = (),
) -> Row:
    """The row of one student.

    Parameters
    ----------
    assignment : Assignment
    student : str
    results : mapping of exercise id to SubmissionResult, or None
        The automatic results; None when the student handed nothing in (every score 0).
    manual : mapping
        The points graded by hand (:func:`~rlfound.grading.course.manual.read_manual`).
    timing : Lateness
        From :func:`lateness`.
    notes : sequence of str
        More for ``status`` (a hand-in that could not be read, an exercise with no file).
    """
    automatic = {
        e.id: (results[e.id].score if results is not None else 0.0) for e in assignment.exercises
    }
    graded = [manual.get((student, e, i)) for e, i, _ in items(assignment)]
    by_hand = sum(m.points for m in graded if m is not None and m.points is not None)
    waiting = sum(1 for m in graded if m is None or m.points is None)
    raw = sum(automatic.values()) + by_hand
    total = raw * late.multiplier(assignment, timing.days)
    status = [*notes]
    if results is None:
        status.insert(0, "no submission")
    else:
        if timing.note:
            status.append(timing.note)
        if waiting:
            status.append(f"by hand: {waiting} of {len(graded)} item(s) not graded yet")
    cells = {"student": student}
    cells.update({exercise: number(points) for exercise, points in automatic.items()})
    cells.update(
        manual=number(by_hand),
        late_days=str(timing.days if results is not None else 0),
        penalty=number(raw - total),
        total=number(total),
        max_total=number(assignment.max_automatic + assignment.max_manual),
        status=text.csv_cell("; ".join(status) or "graded", report.NOTE_CHARS),
    )
    return Row(student, cells)


def grades_csv(assignment: Assignment, rows: Sequence[Row]) -> str:
    """The text of ``grades.csv``, rows sorted by student."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    header = columns(assignment)
    writer.writerow(header)
    for row in sorted(rows, key=lambda r: r.student):
        writer.writerow([row.cells[column] for column in header])
    return buffer.getvalue()


def read_grades(path: str | Path, assignment: Assignment | None = None) -> list[Row]:
    """Read a ``grades.csv`` this module wrote.

    Raises
    ------
    ValueError
        If it is missing or its header is not that of an assignment's grade sheet (of
        ``assignment``, when given).
    """
    path = Path(path)
    try:
        content = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ValueError(f"{path} not found: grade the assignment first") from None
    reader = csv.reader(content.splitlines())
    header = next(reader, [])
    expected = columns(assignment) if assignment is not None else None
    tail = ["manual", "late_days", "penalty", "total", "max_total", "status"]
    if header[:1] != ["student"] or header[-6:] != tail or (expected and header != expected):
        raise ValueError(f"{path} is not the grade sheet of this assignment (header {header})")
    return [Row(cells[0], dict(zip(header, cells, strict=True))) for cells in reader if cells]


def feedback_markdown(
    assignment: Assignment,
    row: Row,
    results: Mapping[str, SubmissionResult] | None,
    manual: Mapping[tuple[str, str, str], ManualPoints],
) -> str:
    """The student's ``feedback.md``: the totals, the points graded by hand with the
    grader's comments, then each exercise's own feedback."""
    cells = row.cells
    lines = [
        f"# {text.inert(assignment.name)} — feedback for {row.student}",
        "",
        "| exercise | automatic | by hand |",
        "| --- | --- | --- |",
    ]
    for exercise in assignment.exercises:
        got = sum(
            m.points or 0
            for (s, e, _), m in manual.items()
            if s == row.student and e == exercise.id
        )
        lines.append(
            f"| `{exercise.id}` | {cells[exercise.id]} / {number(exercise.max_score)} | "
            f"{number(got)} / {number(exercise.manual_points)} |"
        )
    lines += ["", f"Late days: {cells['late_days']}; late penalty: {cells['penalty']} point(s)."]
    lines += ["", f"**Total: {cells['total']} / {cells['max_total']}**", ""]
    lines += [f"Status: {text.inert(cells['status'])}", ""]
    if items(assignment):
        lines += ["## Graded by hand", ""]
        for exercise, item, maximum in items(assignment):
            given = manual.get((row.student, exercise, item))
            if given is None or given.points is None:
                lines.append(f"- `{exercise}` / `{item}`: not graded yet (of {number(maximum)})")
                continue
            comment = " ".join(text.inert(given.comment).split())
            lines.append(
                f"- `{exercise}` / `{item}`: {number(given.points)} / {number(maximum)}"
                + (f" — {comment}" if comment else "")
            )
        lines.append("")
    for exercise in assignment.exercises:
        lines += ["---", ""]
        if results is None:
            lines += [f"# {exercise.title}", "", "Nothing was handed in.", ""]
        else:
            lines.append(report.feedback_markdown(exercise, results[exercise.id]))
    return "\n".join(lines).rstrip() + "\n"
