"""Write what grading found: Gradescope ``results.json``, ``feedback.md``, ``grades.csv`` and
``skipped.csv``.

Every function takes what it reports on (the exercise, the results, the names of the checks),
never the grader, and every file is written atomically (:mod:`rlfound.grading.output.atomic`).
Nothing here depends on timing or temporary paths: the same seed produces byte-identical
reports.

Every string is made inert once more as it is written (:func:`rlfound.grading.intake.text.inert`:
control characters and lone surrogates become visible escapes), so any string encodes, and
student text was capped before it got here: :func:`max_report_bytes` is the largest
``results.json`` or ``feedback.md`` an exercise can produce, whatever a submission does.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Sequence
from pathlib import Path

from rlfound.grading.authoring.spec import Exercise
from rlfound.grading.intake import text
from rlfound.grading.output.atomic import write_atomic
from rlfound.grading.scoring import student_tests
from rlfound.grading.scoring.results import SubmissionResult

__all__ = [
    "NOTE_CHARS",
    "feedback_markdown",
    "fence",
    "grades_csv",
    "max_report_bytes",
    "results_json",
    "results_text",
    "skipped_csv",
    "write_grades",
    "write_skipped",
    "write_submission",
]

_OUTPUT_CHARS = 2000
#: Characters of the ``note`` column of ``grades.csv``.
NOTE_CHARS = 300


def _number(x: float) -> float | int:
    return int(x) if float(x).is_integer() else round(float(x), 6)


def _inert(value: str | None) -> str:
    return text.inert(value or "")


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
                "output": _inert(check.message),
                "visibility": "visible" if check.public else "after_published",
            }
        )
    for run in result.student_tests:
        tests.append(
            {
                "name": f"your {run.name}() (run, not scored automatically)",
                "score": 0,
                "max_score": 0,
                "status": "passed" if run.passed else "failed",
                "output": "it ran without an error" if run.passed else _inert(run.message),
                "visibility": "visible",
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
        summary += f"\n\n{_inert(result.error)}"
    if result.notes:
        summary += "\n\n" + "\n".join(f"Note: {_inert(note)}" for note in result.notes)
    return {
        "score": _number(result.score),
        "output": summary,
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": tests,
    }


def fence(body: str) -> str:
    """A Markdown code block that the text cannot close early, and that shows it unchanged.

    The fence is one backtick longer than the longest run of backticks anywhere in the text
    (at least three), so no line of the text can close it, whatever its spaces or info
    string (CommonMark closes a fence only with a run of backticks at least as long).

    Examples
    --------
    >>> print(fence("```\\n<b>hi</b>"))
    ````text
    ```
    <b>hi</b>
    ````
    """
    longest = max((len(run) for run in re.findall(r"`+", body)), default=0)
    marks = "`" * max(3, longest + 1)
    return f"{marks}text\n{body}\n{marks}"


def feedback_markdown(exercise: Exercise, result: SubmissionResult) -> str:
    """A readable report for the student: score, each check, manual parts, their output."""
    lines = [
        f"# {exercise.title} — feedback for {_inert(result.name)}",
        "",
        f"Exercise `{exercise.id}` (chapter {exercise.chapter}, {'★' * exercise.stars}).",
        "",
        f"**Automatic score: {_number(result.score)} / {_number(result.max_score)}**",
        "",
    ]
    if result.error:
        lines += ["Your code could not be graded:", "", fence(_inert(result.error)), ""]
    lines += ["| check | kind | points | result |", "| --- | --- | --- | --- |"]
    for check in result.checks:
        kind = "public" if check.public else "graded-only"
        verdict = "passed" if check.passed else "**failed**"
        points = f"{_number(check.score)} / {_number(check.max_score)}"
        lines.append(f"| `{check.name}` | {kind} | {points} | {verdict} |")
    if result.notes:
        lines += ["", "## Notes on your notebook", ""]
        lines += [f"- {_inert(note)}".replace("\n", " ") for note in result.notes]
    failed = [check for check in result.checks if not check.passed]
    if failed:
        lines += ["", "## What failed", ""]
        for check in failed:
            lines += [
                f"### `{check.name}`",
                "",
                check.description,
                "",
                fence(_inert(check.message)),
                "",
            ]
    if result.student_tests:
        lines += [
            "",
            "## Your test functions",
            "",
            "The grader ran them after the checks; they earn no automatic points (your "
            "instructor grades the test by hand), but a test that fails is worth a look.",
            "",
        ]
        for run in result.student_tests:
            if run.passed:
                lines.append(f"- `{run.name}()`: passed")
            else:
                lines += [f"- `{run.name}()`: **failed**", "", fence(_inert(run.message)), ""]
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
            fence(_inert(result.output[:_OUTPUT_CHARS])),
        ]
    return "\n".join(lines).rstrip() + "\n"


def results_text(exercise: Exercise, result: SubmissionResult) -> str:
    """``results.json`` as the text written to disk."""
    return json.dumps(results_json(exercise, result), indent=2, ensure_ascii=False) + "\n"


def max_report_bytes(exercise: Exercise) -> int:
    """The largest ``results.json`` or ``feedback.md`` (in bytes) a submission of ``exercise``
    can produce, whatever it does.

    16 KiB of the grader's own words, plus 4 bytes for each character of the exercise's own
    text (its title, the checks' names and descriptions, the parts graded by hand) and of the
    student text a report may carry, each piece capped by :mod:`rlfound.grading.intake.text`: the
    error twice (the summary and the first check), the notes, the first 2000 characters of
    the output, one message per check, the name, and a message for each of the student's own
    test functions (their names are the exercise's). A character is at most 4 bytes of UTF-8,
    and JSON's escapes of the characters left (``\\``, ``"``) take 2.
    """
    own = len(exercise.title) + sum(len(c.description) + len(c.name) + 64 for c in exercise.checks)
    own += sum(len(p.description) + len(p.name) + 64 for p in exercise.manual)
    tests = student_tests.student_test_names(exercise)
    own += sum(len(name) + 64 for name in tests)
    student = (
        2 * text.ERROR_CHARS
        + text.MAX_NOTES * (text.NOTE_CHARS + 8)
        + _OUTPUT_CHARS
        + len(exercise.checks) * text.MESSAGE_CHARS
        + text.NAME_CHARS
        + len(tests) * text.MESSAGE_CHARS
    )
    return 16 * 1024 + 4 * (own + student)


def write_submission(folder: Path, exercise: Exercise, result: SubmissionResult) -> None:
    """Write ``results.json`` and ``feedback.md`` of one submission.

    Raises
    ------
    ValueError
        If a report would exceed :func:`max_report_bytes` (a bug: student text is capped).
    """
    limit = max_report_bytes(exercise)
    for name, body in (
        ("results.json", results_text(exercise, result)),
        ("feedback.md", feedback_markdown(exercise, result)),
    ):
        data = body.encode("utf-8", "backslashreplace")
        if len(data) > limit:
            raise ValueError(f"{name} would be {len(data)} bytes, more than {limit}")
        write_atomic(Path(folder) / name, data.decode("utf-8"))


def _note(result: SubmissionResult) -> str:
    note = result.grader_error or result.error or ""
    if note and result.grader_error and result.grader_error != result.error:
        note = f"grader: {note}"
    return text.csv_cell(" ".join(note.split()), NOTE_CHARS) if note else ""


def grades_csv(names: Sequence[str], results: Sequence[SubmissionResult]) -> str:
    """The class's grade sheet: ``submission, file, score, max_score``, the points of each
    check, then ``note`` (why a submission could not be graded, if it could not).

    ``names`` are the checks graded, in order (a check a result lacks scores 0). ``file`` is
    the entry's original file name, inert, capped and never read as a spreadsheet formula.
    """
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["submission", "file", "score", "max_score", *names, "note"])
    for result in results:
        scores = {check.name: _number(check.score) for check in result.checks}
        writer.writerow(
            [
                text.csv_cell(result.name),
                text.csv_cell(result.file_name or result.name),
                _number(result.score),
                _number(result.max_score),
                *(scores.get(n, 0) for n in names),
                _note(result),
            ]
        )
    return buffer.getvalue()


def write_grades(path: Path, names: Sequence[str], results: Sequence[SubmissionResult]) -> None:
    """Write the class's ``grades.csv`` (see :func:`grades_csv`)."""
    write_atomic(path, grades_csv(names, results))


def skipped_csv(skipped: Sequence[tuple[str, str]]) -> str:
    """``entry, reason`` for every entry of the submissions folders that was not graded."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["entry", "reason"])
    for entry, reason in skipped:
        writer.writerow([text.csv_cell(entry), text.csv_cell(reason, NOTE_CHARS)])
    return buffer.getvalue()


def write_skipped(path: Path, skipped: Sequence[tuple[str, str]]) -> None:
    """Write ``skipped.csv`` (see :func:`skipped_csv`)."""
    write_atomic(path, skipped_csv(skipped))
