"""Points graded by hand: ``manual.csv`` merged into the grade sheet.

``manual.csv`` has the columns ``student,exercise,item,points,comment`` (``item`` and
``comment`` may be left out as columns; the template's ``max_points`` and ``answer`` columns
are ignored). ``item`` names one part graded by hand of the
exercise (:class:`~rlfound.grading.authoring.spec.Manual`); it may be blank when the exercise
has exactly one. Blank ``points`` mean "not graded yet": the item counts 0 and the student's
``status`` says how many items wait. A value above the item's maximum, a negative or
non-numeric value, an unknown student, exercise or item, and a second row for the same item
are errors naming the row (``file:line``).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Collection
from pathlib import Path

from rlfound.grading.course.assignment import Assignment
from rlfound.grading.course.tables import read_rows

__all__ = ["ManualPoints", "items", "read_manual"]

#: Columns of ``rlfound manual``'s template that are there for the grader to read (the item's
#: maximum, the student's answer) and that the merge ignores.
_REFERENCE_COLUMNS = ("max_points", "answer")


@dataclasses.dataclass(frozen=True)
class ManualPoints:
    """The points (None: not graded yet) and comment of one item of one student."""

    points: float | None
    comment: str = ""


def items(assignment: Assignment) -> list[tuple[str, str, float]]:
    """Every item graded by hand: ``(exercise id, item name, maximum points)``, in order."""
    return [(e.id, part.name, part.points) for e in assignment.exercises for part in e.manual]


def read_manual(
    path: str | Path, assignment: Assignment, students: Collection[str]
) -> dict[tuple[str, str, str], ManualPoints]:
    """Read ``manual.csv``: ``(student, exercise, item) -> ManualPoints``.

    Parameters
    ----------
    path : path
        The file.
    assignment : Assignment
        Its exercises and their parts graded by hand.
    students : collection of str
        The students it may name (those graded, and the roster's).

    Raises
    ------
    ValueError
        Naming the row (``file:line``) and what is wrong with it.
    """
    parts = {e.id: {part.name: part.points for part in e.manual} for e in assignment.exercises}
    merged: dict[tuple[str, str, str], ManualPoints] = {}
    first: dict[tuple[str, str, str], str] = {}
    optional = ("item", "comment", *_REFERENCE_COLUMNS)
    for where, row in read_rows(path, ("student", "exercise", "points"), optional):
        student, exercise, item = row["student"], row["exercise"], row.get("item", "")
        if student not in students:
            raise ValueError(f"{where}: unknown student {student!r}")
        if exercise not in parts:
            raise ValueError(
                f"{where}: unknown exercise {exercise!r} (the assignment has "
                f"{', '.join(assignment.ids)})"
            )
        known = parts[exercise]
        if not item:
            if len(known) != 1:
                raise ValueError(
                    f"{where}: item is blank, but {exercise} has {len(known)} parts graded by "
                    f"hand ({', '.join(known) or 'none'}): name one"
                )
            item = next(iter(known))
        if item not in known:
            raise ValueError(
                f"{where}: unknown item {item!r} of {exercise} (its parts graded by hand are "
                f"{', '.join(known) or 'none'})"
            )
        key = (student, exercise, item)
        if key in first:
            raise ValueError(
                f"{where}: a second row for {student}, {exercise}, {item} "
                f"(the first is {first[key]})"
            )
        first[key] = where
        merged[key] = ManualPoints(
            _points(where, row["points"], known[item]), row.get("comment", "")
        )
    return merged


def _points(where: str, cell: str, maximum: float) -> float | None:
    if not cell:
        return None
    try:
        points = float(cell)
    except ValueError:
        points = math.nan
    if not math.isfinite(points):
        raise ValueError(f"{where}: points: expected a number; got {cell!r}")
    if points < 0 or points > maximum:
        raise ValueError(f"{where}: points: {cell} is outside [0, {maximum:g}], the item's range")
    return points
