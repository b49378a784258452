"""The assignment file: several exercises handed in together, a due date and a late policy.

An assignment is a TOML file (read with :mod:`tomllib`)::

    name = "Homework 1"
    exercises = ["gae-recursion", "group-advantages"]
    due = 2026-03-02T23:59:00-05:00      # ISO 8601 with its UTC offset (a string works too)
    late_penalty_per_day = 0.1           # fraction of the score lost per late day (default 0)
    max_late_days = 3                    # later than this scores 0 (default: no limit)
    grace_minutes = 15                   # minutes after the due time still on time (default 0)

Every other key is an error, so that a misspelled ``late_penalty_perday`` cannot silently
mean "no penalty". ``rlfound assignment check hw1.toml`` reads it and says what it found.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
import sys
from collections.abc import Mapping
from pathlib import Path

from rlfound.grading.authoring.spec import Exercise

if sys.version_info >= (3, 11):
    import tomllib
else:  # the same parser, published separately before Python 3.11
    import tomli as tomllib

__all__ = ["Assignment", "load_assignment", "parse_time"]

_KEYS = ("name", "exercises", "due", "late_penalty_per_day", "max_late_days", "grace_minutes")


@dataclasses.dataclass(frozen=True)
class Assignment:
    """One hand-in of several exercises, with its due date and late policy.

    Parameters
    ----------
    name : str
        The assignment's name (the Canvas column is named after it).
    exercises : tuple of Exercise
        The exercises, in the file's order (the order of the grade sheet's columns).
    due : datetime.datetime
        The due time, timezone-aware.
    late_penalty_per_day : float
        Fraction in [0, 1] of the automatic plus manual score lost per late day.
    max_late_days : int or None
        A submission later than this many days scores 0; None means no limit.
    grace_minutes : float
        Minutes after ``due`` that still count as on time.
    """

    name: str
    exercises: tuple[Exercise, ...]
    due: dt.datetime
    late_penalty_per_day: float = 0.0
    max_late_days: int | None = None
    grace_minutes: float = 0.0

    @property
    def ids(self) -> list[str]:
        """The exercise ids, in order."""
        return [exercise.id for exercise in self.exercises]

    @property
    def max_automatic(self) -> float:
        return float(sum(exercise.max_score for exercise in self.exercises))

    @property
    def max_manual(self) -> float:
        return float(sum(exercise.manual_points for exercise in self.exercises))

    def describe(self) -> str:
        """A few lines saying what the file means (what ``assignment check`` prints)."""
        lines = [f"{self.name}: {len(self.exercises)} exercise(s), due {self.due.isoformat()}"]
        for exercise in self.exercises:
            lines.append(
                f"  {exercise.id}: {exercise.max_score:g} automatic point(s), "
                f"{exercise.manual_points:g} by hand"
            )
        late = f"late: {self.late_penalty_per_day:g} of the score lost per day"
        if self.max_late_days is not None:
            late += f", 0 after {self.max_late_days} day(s)"
        if self.grace_minutes:
            late += f", {self.grace_minutes:g} minute(s) of grace"
        lines.append(late)
        lines.append(
            f"maximum: {self.max_automatic:g} automatic + {self.max_manual:g} by hand = "
            f"{self.max_automatic + self.max_manual:g}"
        )
        return "\n".join(lines) + "\n"


def parse_time(value: object, name: str) -> dt.datetime:
    """An ISO 8601 time with its UTC offset, as an aware :class:`~datetime.datetime`.

    Raises
    ------
    ValueError
        Naming ``name``, if ``value`` is not such a time or has no offset.

    Examples
    --------
    >>> parse_time("2026-03-02T23:59:00-05:00", "due").isoformat()
    '2026-03-02T23:59:00-05:00'
    >>> parse_time("2026-03-02T23:59", "due")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: due: a time with its UTC offset is required ...; got '2026-03-02T23:59'
    """
    if isinstance(value, dt.datetime):
        moment = value
    elif isinstance(value, str):
        try:
            moment = dt.datetime.fromisoformat(value.strip())
        except ValueError:
            raise ValueError(f"{name}: not an ISO 8601 time; got {value!r}") from None
    else:
        raise ValueError(f"{name}: not an ISO 8601 time; got {value!r}")
    if moment.tzinfo is None or moment.utcoffset() is None:
        shown = value if isinstance(value, str) else value.isoformat()
        raise ValueError(
            f"{name}: a time with its UTC offset is required "
            f"(e.g. 2026-03-02T23:59:00-05:00 or ...Z); got {shown!r}"
        )
    return moment


def _number(table: Mapping, key: str, default: float, *, low: float, high: float) -> float:
    value = table.get(key, default)
    # bool is an int in Python; `true` is not a number of days.
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{key}: expected a number; got {value!r}")
    if not low <= value <= high:
        where = f"in [{low:g}, {high:g}]" if high < math.inf else f">= {low:g}"
        raise ValueError(f"{key}: expected a number {where}; got {value!r}")
    return float(value)


def load_assignment(path: str | Path, exercises: Mapping[str, Exercise]) -> Assignment:
    """Read and check an assignment file.

    Parameters
    ----------
    path : path
        The TOML file.
    exercises : mapping of str to Exercise
        The exercises it may name (``load_exercises()``).

    Returns
    -------
    Assignment

    Raises
    ------
    ValueError
        ``"<path>: <field>: <what is wrong>"``: a file that is missing or not TOML, an unknown
        key, a missing or empty ``name`` or ``exercises``, an unknown or repeated exercise, a
        ``due`` that is not ISO 8601 with an offset, a penalty outside [0, 1], a negative
        ``max_late_days`` or ``grace_minutes``.
    """
    path = Path(path)
    try:
        table = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ValueError(f"{path}: could not be read ({error})") from None
    except tomllib.TOMLDecodeError as error:
        raise ValueError(f"{path}: not valid TOML ({error})") from None
    try:
        return _assignment(table, exercises)
    except ValueError as error:
        raise ValueError(f"{path}: {error}") from None


def _assignment(table: Mapping, exercises: Mapping[str, Exercise]) -> Assignment:
    unknown = sorted(set(table) - set(_KEYS))
    if unknown:
        raise ValueError(f"{unknown[0]}: unknown key (the keys are {', '.join(_KEYS)})")
    for key in ("name", "exercises", "due"):
        if key not in table:
            raise ValueError(f"{key}: missing")
    name = table["name"]
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"name: expected a non-empty string; got {name!r}")
    ids = table["exercises"]
    if not isinstance(ids, list) or not ids or not all(isinstance(i, str) for i in ids):
        raise ValueError(f"exercises: expected a non-empty list of exercise ids; got {ids!r}")
    for index, exercise_id in enumerate(ids):
        if exercise_id not in exercises:
            choices = ", ".join(sorted(exercises))
            raise ValueError(f"exercises: unknown exercise {exercise_id!r} (choose from {choices})")
        if exercise_id in ids[:index]:
            raise ValueError(f"exercises: {exercise_id!r} is listed twice")
    max_late = table.get("max_late_days")
    if max_late is not None and (
        isinstance(max_late, bool) or not isinstance(max_late, int) or max_late < 0
    ):
        raise ValueError(f"max_late_days: expected an integer >= 0; got {max_late!r}")
    return Assignment(
        name=name.strip(),
        exercises=tuple(exercises[i] for i in ids),
        due=parse_time(table["due"], "due"),
        late_penalty_per_day=_number(table, "late_penalty_per_day", 0.0, low=0.0, high=1.0),
        max_late_days=max_late,
        grace_minutes=_number(table, "grace_minutes", 0.0, low=0.0, high=math.inf),
    )
