"""The grade sheet in a learning-management system's import format: Canvas.

Canvas's gradebook import reads a CSV whose first columns are ``Student, ID, SIS User ID,
SIS Login ID, Section`` and whose other columns are assignments; its own export puts a second
row ``"    Points Possible"`` holding each assignment's maximum, and its importer recognizes that
row as not a student (instructure/canvas-lms, ``lib/gradebook_exporter.rb`` at 433333ee and
``lib/gradebook_importer.rb`` at 00b222d7, ``check_for_non_student_row``). Canvas matches
students by ``ID`` (or the SIS ids), so the roster must give them; an assignment column whose
title names no existing assignment creates one with the points of that row.

Every roster student gets a row: one with no hand-in scores 0 and is named in the command's
summary. A graded student whom the roster does not know is an error naming them, and nothing
is written, since Canvas could place that grade nowhere.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping
from pathlib import Path

from rlfound.grading.course.gradebook import number, read_grades
from rlfound.grading.course.run import COURSE_FILE
from rlfound.grading.course.tables import Student
from rlfound.grading.intake import text

__all__ = ["CANVAS_COLUMNS", "POINTS_POSSIBLE", "canvas_csv"]

CANVAS_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
#: The first cell of Canvas's points row, spaces included, as Canvas writes it.
POINTS_POSSIBLE = "    Points Possible"


def canvas_csv(out_dir: str | Path, roster: Mapping[str, Student]) -> tuple[str, list[str]]:
    """The Canvas import file of a graded assignment, and the roster students with no hand-in.

    Parameters
    ----------
    out_dir : path
        The output folder of ``rlfound grade --assignment`` (its ``grades.csv`` and
        ``course.json``).
    roster : mapping of str to Student
        :func:`~rlfound.grading.course.tables.read_roster`.

    Raises
    ------
    ValueError
        If ``out_dir`` is not an assignment's output, or a graded student is not in the roster
        (naming them).
    """
    out_dir = Path(out_dir)
    try:
        course = json.loads((out_dir / COURSE_FILE).read_text(encoding="utf-8"))
        name, max_total = str(course["assignment"]), float(course["max_total"])
    except (OSError, ValueError, KeyError, TypeError):
        raise ValueError(
            f"{out_dir} is not the output of `rlfound grade --assignment` (no readable "
            f"{COURSE_FILE})"
        ) from None
    rows = {row.student: row for row in read_grades(out_dir / "grades.csv")}
    strangers = sorted(set(rows) - set(roster))
    if strangers:
        shown = ", ".join(strangers[:10]) + (" ..." if len(strangers) > 10 else "")
        raise ValueError(
            f"{len(strangers)} graded student(s) not in the roster: {shown}; add them to the "
            "roster (or remove their hand-ins) and grade again"
        )
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([*CANVAS_COLUMNS, text.csv_cell(name)])
    writer.writerow([POINTS_POSSIBLE, "", "", "", "", number(max_total)])
    missing = []
    for student in roster.values():
        row = rows.get(student.student)
        if row is None or row.cells["status"].startswith("no submission"):
            missing.append(student.student)
            score = "0"
        else:
            score = row.cells["total"]
        writer.writerow(
            [
                text.csv_cell(student.name or student.student),
                text.csv_cell(student.id),
                text.csv_cell(student.sis_user_id),
                text.csv_cell(student.sis_login_id),
                text.csv_cell(student.section),
                score,
            ]
        )
    return buffer.getvalue(), missing
