"""The CSV files a course hands the grader: roster, submission times, extensions.

Each is read whole and checked before anything is graded; a bad row is a :class:`ValueError`
that names it as ``file:line`` (the line a spreadsheet shows, the header being line 1), so the
command can exit with status 2 before it spends an hour grading.

* roster: ``student,id`` required; ``name,sis_user_id,sis_login_id,section`` optional. The
  ``student`` is the row key of every report and the name of the student's folder, so it is a
  safe name (letters, digits, ``.``, ``_``, ``-``); ``id`` is the LMS's user id, which a
  Canvas download names its files by.
* submission times: ``student,submitted_at`` (ISO 8601 with an offset).
* extensions: ``student,days`` (a number of days >= 0 added to the due date).
"""

from __future__ import annotations

import csv
import dataclasses
import datetime as dt
import math
import re
from collections.abc import Iterator, Sequence
from pathlib import Path

from rlfound.grading.course.assignment import parse_time

__all__ = [
    "Student",
    "read_extensions",
    "read_roster",
    "read_rows",
    "read_submitted",
]

_SAFE = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]*")
_ROSTER_OPTIONAL = ("name", "sis_user_id", "sis_login_id", "section")
#: Names of the class's own files in the output folder, which no student's folder may take.
_TAKEN = ("grades.csv", "skipped.csv", "course.json")


@dataclasses.dataclass(frozen=True)
class Student:
    """One roster row."""

    student: str
    id: str
    name: str = ""
    sis_user_id: str = ""
    sis_login_id: str = ""
    section: str = ""


def read_rows(
    path: str | Path, required: Sequence[str], optional: Sequence[str] = ()
) -> Iterator[tuple[str, dict[str, str]]]:
    """The rows of a CSV file as ``("file:line", {column: stripped text})``.

    Raises
    ------
    ValueError
        If the file cannot be read, lacks a required column or has one not in ``required``
        or ``optional``.
    """
    path = Path(path)
    try:
        content = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise ValueError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ValueError(f"{path}: could not be read ({error})") from None
    reader = csv.reader(content.splitlines())
    header = [cell.strip() for cell in next(reader, [])]
    missing = [column for column in required if column not in header]
    if missing:
        raise ValueError(f"{path}:1: missing column {missing[0]!r} (the header has {header})")
    extra = [c for c in header if c not in (*required, *optional)]
    if extra:
        known = ", ".join((*required, *optional))
        raise ValueError(f"{path}:1: unknown column {extra[0]!r} (the columns are {known})")
    for cells in reader:
        where = f"{path}:{reader.line_num}"
        if not any(cell.strip() for cell in cells):
            continue  # a blank line a spreadsheet left
        if len(cells) > len(header):
            raise ValueError(f"{where}: {len(cells)} cells, more than the header's {len(header)}")
        cells = [cell.strip() for cell in cells] + [""] * (len(header) - len(cells))
        yield where, dict(zip(header, cells, strict=True))


def _key(where: str, row: dict[str, str], seen: dict[str, str], column: str = "student") -> str:
    value = row[column]
    if not value:
        raise ValueError(f"{where}: {column} is empty")
    if value in seen:
        raise ValueError(f"{where}: {column} {value!r} is listed twice (first at {seen[value]})")
    seen[value] = where
    return value


def read_roster(path: str | Path) -> dict[str, Student]:
    """The roster: :class:`Student` by ``student``, in the file's order.

    Raises
    ------
    ValueError
        Naming the row: an empty or repeated ``student`` or ``id``, a ``student`` that is not
        a safe name.
    """
    roster: dict[str, Student] = {}
    students: dict[str, str] = {}
    ids: dict[str, str] = {}
    for where, row in read_rows(path, ("student", "id"), _ROSTER_OPTIONAL):
        student = _key(where, row, students)
        if not _SAFE.fullmatch(student) or student.lower() in _TAKEN:
            raise ValueError(
                f"{where}: student {student!r} cannot name a folder of reports (letters, "
                "digits, '.', '_', '-', not first '.', and none of grades.csv, skipped.csv, "
                "course.json)"
            )
        _key(where, row, ids, "id")
        roster[student] = Student(
            student, row["id"], **{c: row.get(c, "") for c in _ROSTER_OPTIONAL}
        )
    return roster


def read_submitted(path: str | Path) -> dict[str, tuple[dt.datetime, str]]:
    """Submission times: ``student -> (aware time, "file:line")``.

    Raises
    ------
    ValueError
        Naming the row: a repeated student, a time that is not ISO 8601 with an offset.
    """
    times: dict[str, tuple[dt.datetime, str]] = {}
    seen: dict[str, str] = {}
    for where, row in read_rows(path, ("student", "submitted_at")):
        student = _key(where, row, seen)
        times[student] = (parse_time(row["submitted_at"], f"{where}: submitted_at"), where)
    return times


def read_extensions(path: str | Path) -> dict[str, tuple[float, str]]:
    """Extensions: ``student -> (days, "file:line")``.

    Raises
    ------
    ValueError
        Naming the row: a repeated student, days that are not a number >= 0.
    """
    extensions: dict[str, tuple[float, str]] = {}
    seen: dict[str, str] = {}
    for where, row in read_rows(path, ("student", "days")):
        student = _key(where, row, seen)
        try:
            days = float(row["days"])
        except ValueError:
            days = math.nan
        if not (math.isfinite(days) and days >= 0):
            raise ValueError(f"{where}: days: expected a number >= 0; got {row['days']!r}")
        extensions[student] = (days, where)
    return extensions
