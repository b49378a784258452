"""What grading found: the result of each check and of each submission.

Plain data, made by the grader (:mod:`rlfound.grading.scoring.grader`) and written by the reports
(:mod:`rlfound.grading.output.report`); neither needs the other, so both import these types from
here.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from rlfound.grading.authoring.spec import Check

__all__ = ["CheckResult", "StudentTest", "SubmissionResult"]


@dataclasses.dataclass(frozen=True)
class CheckResult:
    """The result of one check for one submission."""

    name: str
    score: float
    max_score: float
    passed: bool
    message: str
    public: bool
    description: str

    @classmethod
    def failed(cls, check: Check, message: str | None) -> CheckResult:
        """A zero-score result of ``check`` with ``message``."""
        return cls(
            check.name,
            0.0,
            check.points,
            False,
            message or "failed",
            check.public,
            check.description,
        )


@dataclasses.dataclass(frozen=True)
class StudentTest:
    """The run of one of the student's own test functions (worth no automatic points: the
    teaching team grades it by hand, and this tells them, and the student, whether it ran).

    ``message`` is why it failed (an ``AssertionError`` and where), or ``""``.
    """

    name: str
    passed: bool
    message: str = ""


@dataclasses.dataclass(frozen=True)
class SubmissionResult:
    """All check results of one submission, plus what it printed.

    ``error`` is why the submission could not be run at all (missing, unreadable, failed to
    import); ``grader_error`` is set when the grader itself failed (its worker could not start,
    a temporary folder could not be removed), which is not the student's doing. ``notes`` are
    remarks for the student (a notebook cell that raised or was skipped), ``file_name`` the
    entry's original file name. ``student_tests`` are the runs of the student's own test
    functions, where the exercise asks for one. Every string is inert and capped
    (:mod:`rlfound.grading.intake.text`).
    """

    name: str
    path: Path | None
    checks: list[CheckResult]
    error: str | None = None
    output: str = ""
    grader_error: str | None = None
    notes: tuple[str, ...] = ()
    file_name: str = ""
    student_tests: tuple[StudentTest, ...] = ()

    @property
    def score(self) -> float:
        return float(sum(check.score for check in self.checks))

    @property
    def max_score(self) -> float:
        return float(sum(check.max_score for check in self.checks))
