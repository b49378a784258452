"""Write what grading found: Gradescope ``results.json``, ``feedback.md`` and ``grades.csv``.

Every function takes what it reports on (the exercise, the results, the names of the checks),
never the grader, and every file is written atomically (:mod:`rlfound.grading.atomic`).
Nothing here depends on timing or temporary paths: the same seed produces byte-identical
reports.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from pathlib import Path

from rlfound.grading.atomic import write_atomic
from rlfound.grading.results import SubmissionResult
from rlfound.grading.spec import Exercise

_OUTPUT_CHARS = 2000


def _number(x: float) -> float | int:
    return int(x) if float(x).is_integer() else round(float(x), 6)


def results_json(exercise: Exercise, result: SubmissionResult) -> dict:
    """The submission's results in Gradescope's schema.

    Public checks are ``visible``; graded-only checks are ``after_published`` (students see
    them once the instructor publishes grades). Parts graded by hand appear as tests worth 0
    automatic points whose output says so.
    """
    tests = []
    for check in result.checks:
        tests.append(
            {
                "name": f"{check.name}: {check.description}" if check.description else check.name,
                "score": _number(check.score),
                "max_score": _number(check.max_score),
                "status": "passed" if check.passed else "failed",
                "output": check.message,
                "visibility": "visible" if check.public else "after_published",
            }
        )
    for part in exercise.manual:
        tests.append(
            {
                "name": f"{part.name} (graded by hand): {part.description}",
                "score": 0,
                "max_score": 0,
                "output": f"Graded by hand by your instructor: {_number(part.points)} point(s).",
                "visibility": "visible",
            }
        )
    summary = f"{exercise.title}: {_number(result.score)} / {_number(result.max_score)} points"
    if exercise.manual:
        summary += f" from automatic checks, plus {_number(exercise.manual_points)} graded by hand"
    if result.error:
        summary += f"\n\n{result.error}"
    return {
        "score": _number(result.score),
        "output": summary,
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": tests,
    }


def _fence(text: str) -> str:
    """A Markdown code block that the text cannot close early."""
    longest = max((len(run) for run in text.split("\n") if set(run) == {"`"}), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{text.replace(fence, '')}\n{fence}"


def feedback_markdown(exercise: Exercise, result: SubmissionResult) -> str:
    """A readable report for the student: score, each check, manual parts, their output."""
    lines = [
        f"# {exercise.title} — feedback for {result.name}",
        "",
        f"Exercise `{exercise.id}` (chapter {exercise.chapter}, {'★' * exercise.stars}).",
        "",
        f"**Automatic score: {_number(result.score)} / {_number(result.max_score)}**",
        "",
        "| check | kind | points | result |",
        "| --- | --- | --- | --- |",
    ]
    for check in result.checks:
        kind = "public" if check.public else "graded-only"
        verdict = "passed" if check.passed else "**failed**"
        points = f"{_number(check.score)} / {_number(check.max_score)}"
        lines.append(f"| `{check.name}` | {kind} | {points} | {verdict} |")
    failed = [check for check in result.checks if not check.passed]
    if failed:
        lines += ["", "## What failed", ""]
        for check in failed:
            lines += [f"### `{check.name}`", "", check.description, "", _fence(check.message), ""]
    if exercise.manual:
        lines += [
            "",
            "## Graded by hand",
            "",
            f"These parts ({_number(exercise.manual_points)} points) are not graded "
            "automatically; your instructor grades them.",
            "",
        ]
        for part in exercise.manual:
            lines.append(f"- `{part.name}` ({_number(part.points)} points): {part.description}")
    if result.output:
        lines += [
            "",
            f"## Your code's output (first {_OUTPUT_CHARS} characters)",
            "",
            _fence(result.output[:_OUTPUT_CHARS]),
        ]
    return "\n".join(lines).rstrip() + "\n"


def results_text(exercise: Exercise, result: SubmissionResult) -> str:
    """``results.json`` as the text written to disk."""
    return json.dumps(results_json(exercise, result), indent=2, ensure_ascii=False) + "\n"


def write_submission(folder: Path, exercise: Exercise, result: SubmissionResult) -> None:
    """Write ``results.json`` and ``feedback.md`` of one submission."""
    write_atomic(Path(folder) / "results.json", results_text(exercise, result))
    write_atomic(Path(folder) / "feedback.md", feedback_markdown(exercise, result))


def grades_csv(names: Sequence[str], results: Sequence[SubmissionResult]) -> str:
    """The class's grade sheet: submission, score, max_score, then the points of each check.

    ``names`` are the checks graded, in order (a check a result lacks scores 0).
    """
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["submission", "score", "max_score", *names])
    for result in results:
        scores = {check.name: _number(check.score) for check in result.checks}
        writer.writerow(
            [
                result.name,
                _number(result.score),
                _number(result.max_score),
                *(scores.get(n, 0) for n in names),
            ]
        )
    return buffer.getvalue()


def write_grades(path: Path, names: Sequence[str], results: Sequence[SubmissionResult]) -> None:
    """Write the class's ``grades.csv`` (see :func:`grades_csv`)."""
    write_atomic(path, grades_csv(names, results))
