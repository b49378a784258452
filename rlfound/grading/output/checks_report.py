"""Item analysis for the teaching team: how each check fared across the class (``checks.csv``).

Every function takes the graded results of one or more exercises as a mapping from the
exercise id to that exercise's :class:`~rlfound.grading.scoring.results.SubmissionResult` list
(one per student), so the single-exercise ``rlfound grade`` and an assignment of several
exercises share them. Nothing here changes a score.

A failure message holds numbers that differ from student to student (the worst index, the
error), so messages are grouped by their *pattern*: the first line with every number written
``N`` (:func:`failure_pattern`). Each failure also has a *kind* (:func:`failure_kind`), a
coarse class such as "wrong values" or "time limit" that :mod:`~rlfound.grading.output.summary`
counts.
"""

from __future__ import annotations

import collections
import csv
import dataclasses
import io
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from rlfound.grading.intake import text
from rlfound.grading.output.atomic import write_atomic
from rlfound.grading.scoring.results import SubmissionResult

__all__ = [
    "CHECKS_COLUMNS",
    "FAILURE_KINDS",
    "CheckStats",
    "check_stats",
    "checks_csv",
    "failure_kind",
    "failure_pattern",
    "write_checks",
]

#: Columns of ``checks.csv``.
CHECKS_COLUMNS = (
    "exercise",
    "check",
    "public",
    "students",
    "passed",
    "mean_points",
    "max_points",
    "most_common_failure",
    "failure_count",
)

#: Kinds of failure, each with the phrases of the grader's messages that mark it, tried in
#: this order (the first that matches names the kind); anything else is "other".
FAILURE_KINDS = (
    ("grader error", ("the grader failed", "could not prepare a worker")),
    ("not imported", ("could not be imported", "could not be graded", "no submission")),
    ("time limit", ("cpu time", "wall-clock", "timed out", "total budget")),
    ("did not raise", ("should raise",)),
    ("raised an exception", (" raised\n", " raised ")),
    ("wrong shape", ("expected shape",)),
    ("non-finite value", ("non-finite",)),
    ("property violated", ("property does not hold",)),
    ("wrong values", ("max abs error", "differs from finite differences")),
    ("no numbers returned", ("cannot use", "returned none", "returned no numbers")),
)
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_PATTERN_CHARS = 200


def failure_pattern(message: str) -> str:
    """The pattern a failure message is grouped by: its first line (with the exception's line
    when the first says only that a function raised), every number as ``N``.

    Examples
    --------
    >>> failure_pattern("case 1 of 2 (x=1): f raised\\n  mine.py, line 4, in f\\nKeyError: 'a'")
    "case N of N (x=N): f raised KeyError: 'a'"
    >>> failure_pattern("case 2 of 5 (gamma=0.9): max abs error 0.5, worst at index 3\\nmore")
    'case N of N (gamma=N): max abs error N, worst at index N'
    """
    lines = (message or "failed").strip().split("\n")
    first = lines[0]
    if first.endswith(" raised"):
        # The exception is the first line after the traceback's indented "file, line" lines.
        raised = next((line for line in lines[1:] if line and not line[0].isspace()), "")
        first = f"{first} {raised}".rstrip()
    return text.clean(_NUMBER.sub("N", first), _PATTERN_CHARS)


def _head(message: str) -> str:
    """The message without the reproduction hint the grader appends after a blank line."""
    for mark in ("\n\nTo reproduce, call:", "\n\nThe inputs ("):
        message = message.split(mark, 1)[0]
    return message


def failure_kind(message: str) -> str:
    """The coarse kind of a failure message (one of :data:`FAILURE_KINDS`, or ``"other"``).

    Examples
    --------
    >>> failure_kind("case 1 of 3 (x of shape (4,)): expected shape (4,), got shape (3,)")
    'wrong shape'
    >>> failure_kind("not run: timed out earlier (f used more than 10 s of CPU time)")
    'time limit'
    """
    lowered = _head(message or "").lower()
    for kind, phrases in FAILURE_KINDS:
        if any(phrase in lowered for phrase in phrases):
            return kind
    return "other"


@dataclasses.dataclass(frozen=True)
class CheckStats:
    """How one check of one exercise fared across the class.

    ``failures`` counts the failures of each kind; ``most_common_failure`` is the most
    frequent :func:`failure_pattern` (ties broken alphabetically), with ``failure_count``
    students, or ``""`` and 0 when everyone passed.
    """

    exercise: str
    check: str
    public: bool
    students: int
    passed: int
    mean_points: float
    max_points: float
    most_common_failure: str
    failure_count: int
    failures: Mapping[str, int]

    @property
    def pass_rate(self) -> float:
        return self.passed / self.students if self.students else 0.0


def _most_common(counter: collections.Counter) -> tuple[str, int]:
    if not counter:
        return "", 0
    return min(counter.items(), key=lambda item: (-item[1], item[0]))


def check_stats(results_by_exercise: Mapping[str, Sequence[SubmissionResult]]) -> list[CheckStats]:
    """One :class:`CheckStats` per exercise and check, in the exercises' and checks' order.

    Parameters
    ----------
    results_by_exercise : mapping of str to sequence of SubmissionResult
        Each exercise id and its results, one per student. A check a result lacks (a
        regrade with another version of the exercise) counts as failed with 0 points.

    Returns
    -------
    list of CheckStats

    Examples
    --------
    >>> from rlfound.grading.scoring.results import CheckResult, SubmissionResult
    >>> ok = CheckResult("edges", 1.0, 1.0, True, "ok", True, "")
    >>> bad = CheckResult("edges", 0.0, 1.0, False, "expected shape (2,), got shape (3,)",
    ...                   True, "")
    >>> stats = check_stats({"demo": [SubmissionResult("a", None, [ok]),
    ...                               SubmissionResult("b", None, [bad])]})
    >>> stats[0].passed, stats[0].mean_points, dict(stats[0].failures)
    (1, 0.5, {'wrong shape': 1})
    """
    rows = []
    for exercise, results in results_by_exercise.items():
        order: dict[str, tuple[float, bool]] = {}
        for result in results:
            for check in result.checks:
                order.setdefault(check.name, (check.max_score, check.public))
        for name, (max_points, public) in order.items():
            passed = 0
            points = 0.0
            patterns: collections.Counter = collections.Counter()
            kinds: collections.Counter = collections.Counter()
            for result in results:
                found = next((c for c in result.checks if c.name == name), None)
                if found is not None and found.passed:
                    passed += 1
                    points += found.score
                    continue
                message = found.message if found is not None else "not graded"
                points += found.score if found is not None else 0.0
                patterns[failure_pattern(message)] += 1
                kinds[failure_kind(message)] += 1
            common, count = _most_common(patterns)
            rows.append(
                CheckStats(
                    exercise,
                    name,
                    public,
                    len(results),
                    passed,
                    points / len(results) if results else 0.0,
                    max_points,
                    common,
                    count,
                    dict(sorted(kinds.items())),
                )
            )
    return rows


def _number(x: float) -> str:
    return f"{x:.4g}"


def checks_csv(results_by_exercise: Mapping[str, Sequence[SubmissionResult]]) -> str:
    """``checks.csv``: one row per exercise and check (:data:`CHECKS_COLUMNS`).

    ``mean_points`` is rounded to 4 significant digits; ``most_common_failure`` is a
    :func:`failure_pattern`, which may quote a student's exception text, so it is written as
    an inert CSV cell that no spreadsheet reads as a formula.
    """
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CHECKS_COLUMNS)
    for row in check_stats(results_by_exercise):
        writer.writerow(
            [
                row.exercise,
                row.check,
                "yes" if row.public else "no",
                row.students,
                row.passed,
                _number(row.mean_points),
                _number(row.max_points),
                text.csv_cell(row.most_common_failure, _PATTERN_CHARS),
                row.failure_count,
            ]
        )
    return buffer.getvalue()


def write_checks(
    path: str | Path, results_by_exercise: Mapping[str, Sequence[SubmissionResult]]
) -> None:
    """Write ``checks.csv`` (see :func:`checks_csv`) atomically."""
    write_atomic(path, checks_csv(results_by_exercise))
