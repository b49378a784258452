"""Grade an assignment: every exercise of every student's hand-in, into one output folder.

``rlfound grade --assignment hw1.toml SUBMISSIONS --out DIR`` calls :func:`grade_assignment`.
The hand-ins come from :func:`rlfound.grading.intake.collect` (per-student files, folders,
zips, LMS downloads); each exercise's file in a hand-in is found by
:func:`rlfound.grading.intake.find_exercise_file`, and graded by the exercise's
:class:`~rlfound.grading.scoring.grader.Grader` inside the batch's failure boundary
(:func:`~rlfound.grading.scoring.batch.grade_one`). Then the points graded by hand and the
late policy make each student's row.

The row key is the student: with a roster, the roster's ``student`` of the hand-in (matched
by ``student``, else by the LMS id against the roster's ``id``); without one, the hand-in's own
name. A hand-in that matches no roster row is graded all the same, under its own name, and its
status says "not in the roster"; ``rlfound export canvas`` refuses such a row, naming it, since
Canvas could not place it. A roster student with no hand-in gets a row of zeros with the status
"no submission". Two hand-ins of one student: the first (by name) is graded, the other is
listed in ``skipped.csv``.

``DIR`` holds ``grades.csv``, ``skipped.csv``, ``course.json`` (what the run used: the
assignment, the roster, the submission times, extensions and points graded by hand given on
the command line, so that ``--only`` can reuse them) and ``DIR/<student>/`` with
``feedback.md`` covering every exercise and ``<exercise>/results.json``.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import dataclasses
import datetime as dt
import json
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path

from rlfound.grading.course import folders, gradebook
from rlfound.grading.course.assignment import Assignment
from rlfound.grading.course.manual import ManualPoints, read_manual
from rlfound.grading.course.tables import Student, read_extensions, read_submitted
from rlfound.grading.output import report
from rlfound.grading.output.atomic import write_atomic
from rlfound.grading.sandbox import stopping
from rlfound.grading.scoring.batch import grade_one
from rlfound.grading.scoring.grader import Grader
from rlfound.grading.scoring.results import SubmissionResult

__all__ = ["Inputs", "Outcome", "grade_assignment"]

#: What ``DIR/course.json`` is called.
COURSE_FILE = "course.json"


@dataclasses.dataclass(frozen=True)
class Inputs:
    """The command line's files (None: not given)."""

    roster: Mapping[str, Student] | None = None
    submitted: Path | None = None
    extensions: Path | None = None
    manual: Path | None = None


@dataclasses.dataclass
class Outcome:
    """What a run did: the rows, the roster students with no hand-in, the skipped entries,
    and the results that failed because of the grader (not the student)."""

    rows: list[gradebook.Row]
    missing: list[str]
    skipped: list[tuple[str, str]]
    grader_errors: list[tuple[str, str]]


def _keys(hand_ins, roster) -> tuple[dict[str, object], list[tuple[str, str]], set[str]]:
    """Hand-ins by row key, the duplicates skipped, and the keys not in the roster."""
    by_id = {s.id: s.student for s in (roster or {}).values()}
    keyed: dict[str, object] = {}
    skipped, strangers = [], set()
    for hand_in in sorted(hand_ins, key=lambda h: h.student):
        key = hand_in.student
        if roster is not None and key not in roster:
            if hand_in.lms_id is not None and str(hand_in.lms_id) in by_id:
                key = by_id[str(hand_in.lms_id)]
            else:
                strangers.add(key)
        if key in keyed:
            skipped.append((hand_in.student, f"another hand-in of {key} is graded"))
            continue
        keyed[key] = hand_in
    return keyed, skipped, strangers


def _load_previous(out: Path) -> dict:
    try:
        return json.loads((out / COURSE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def _manual_rows(merged: Mapping[tuple[str, str, str], ManualPoints]) -> list[list]:
    return [[*key, m.points, m.comment] for key, m in sorted(merged.items())]


def _grade_exercise(grader: Grader, hand_in, student: str, folder: Path) -> SubmissionResult:
    """One exercise of one hand-in, inside the batch's failure boundary: whatever goes wrong
    costs this exercise of this student, with the reason, never the batch."""
    from rlfound.grading import intake

    exercise = grader.exercise
    try:
        if hand_in.problem:
            message = f"the hand-in could not be read: {hand_in.problem}"
            result = grader.not_run(student, None, message)
        else:
            try:
                entry = intake.find_exercise_file(
                    hand_in, exercise.id, exercise.id.replace("-", "_")
                )
            except ValueError as error:  # two files claim the exercise: the student's doing
                entry, problem = None, str(error)
            else:
                problem = f"no file of {exercise.id} in the hand-in"
            if entry is None:
                result = grader.not_run(student, None, problem)
            else:
                # Reports go to <student>/<exercise>/; the result is named after the student.
                entry = dataclasses.replace(entry, name=exercise.id)
                result = dataclasses.replace(grade_one(grader, entry, folder), name=student)
        report.write_submission(folder / exercise.id, exercise, result)
    except Exception as error:  # the failure boundary: this exercise of this student only
        message = f"the grader failed on this exercise ({type(error).__name__}: {error})"
        result = grader.not_run(student, None, message, grader_error=True)
    return result


def grade_assignment(
    assignment: Assignment,
    submissions_path: str | Path,
    out: str | Path,
    graders: Mapping[str, Grader],
    inputs: Inputs = Inputs(),
    *,
    force: bool = False,
    only: str | None = None,
    jobs: int = 1,
    progress: bool | None = None,
) -> Outcome:
    """Grade an assignment and write ``out`` whole (see the module docstring).

    Parameters
    ----------
    assignment : Assignment
    submissions_path : path
        What :func:`rlfound.grading.intake.collect` reads.
    out : path
        The output folder; replaced atomically (:mod:`~rlfound.grading.course.folders`).
    graders : mapping of exercise id to Grader
        One per exercise of the assignment, all with the same seed.
    inputs : Inputs
        The roster and the paths of the submission times, extensions and manual points.
    force : bool
        Replace an ``out`` that is not empty.
    only : str, optional
        Regrade this student only; every other row of ``out/grades.csv`` and every point
        graded by hand are kept (the files of ``course.json`` are reused when not given).
    jobs : int
        Exercises graded at the same time.
    progress : bool or None
        A progress bar; None shows it when stderr is a terminal.

    Raises
    ------
    ValueError
        Naming the argument (``argument --out: ...``, ``argument --manual: file:line: ...``)
        for bad input, before anything is graded.
    stopping.Stopped
        If a signal stopped it: ``out`` is left as it was.
    """
    from rlfound.grading import intake

    # Absolute, so that "." has a parent to stage the new output in.
    out = Path(out).absolute()
    folders.check_out(out, force=force, only=only)
    try:
        hand_ins = intake.collect(submissions_path)
    except ValueError as error:
        raise ValueError(f"argument SUBMISSIONS: {error}") from None
    previous = _load_previous(out) if only is not None else {}
    roster = inputs.roster
    if roster is None and previous.get("roster") is not None:
        roster = {row["student"]: Student(**row) for row in previous["roster"]}
    keyed, skipped, strangers = _keys(hand_ins, roster)
    skipped = [*hand_ins.skipped, *skipped]
    known = set(keyed) | set(roster or {})
    if only is not None:
        try:
            rows = gradebook.read_grades(out / "grades.csv", assignment)
        except ValueError as error:
            raise ValueError(f"argument --only: {error}") from None
        if only not in keyed:
            raise ValueError(f"argument --only: no hand-in of {only!r} in {submissions_path}")
        kept = [row for row in rows if row.student != only]
    submitted_times, extension_days, merged = _tables(assignment, inputs, known, previous)
    todo = {only: keyed[only]} if only is not None else keyed
    with folders.staging(out) as stage:
        if only is not None:
            shutil.copytree(out, stage, dirs_exist_ok=True, ignore=_ignore_student(out, only))
        results = _grade_all(graders, assignment, todo, stage, jobs, progress)
        rows, grader_errors = [], []
        for student, hand_in in todo.items():
            timing = gradebook.lateness(
                assignment,
                submitted_times.get(student, hand_in.submitted_at),
                hand_in.late_mark,
                extension_days.get(student, 0.0),
            )
            ordered = {e: results[student][e] for e in assignment.ids}
            notes = _notes(student, hand_in, ordered, student in strangers, grader_errors)
            rows.append(
                gradebook.make_row(assignment, student, results[student], merged, timing, notes)
            )
        missing = []
        if only is None:
            missing = sorted(set(roster or {}) - set(keyed))
            for student in missing:
                rows.append(
                    gradebook.make_row(assignment, student, None, merged, gradebook.Lateness(0, ""))
                )
        else:
            rows += kept
        for row in rows:
            if row.student in todo or row.student in missing:
                body = gradebook.feedback_markdown(
                    assignment, row, results.get(row.student), merged
                )
                write_atomic(stage / row.student / "feedback.md", body)
        for hand_in in todo.values():
            skipped += [(f"{hand_in.student}/{e}", r) for e, r in hand_in.skipped]
        write_atomic(stage / "grades.csv", gradebook.grades_csv(assignment, rows))
        if only is None:
            report.write_skipped(stage / "skipped.csv", skipped)
        record = {
            "assignment": assignment.name,
            "exercises": assignment.ids,
            "max_total": assignment.max_automatic + assignment.max_manual,
            "submitted": {s: t.isoformat() for s, t in sorted(submitted_times.items())},
            "extensions": dict(sorted(extension_days.items())),
            "manual": _manual_rows(merged),
            "roster": None if roster is None else [dataclasses.asdict(s) for s in roster.values()],
        }
        write_atomic(stage / COURSE_FILE, json.dumps(record, indent=2, sort_keys=True) + "\n")
        _teaching_team_reports(stage, assignment, results)
        folders.swap_in(stage, out)
    return Outcome(sorted(rows, key=lambda r: r.student), missing, skipped, grader_errors)


def _tables(assignment, inputs: Inputs, known, previous):
    """Submission times, extension days and points graded by hand, each from its file when
    given, else (for ``--only``) from the previous run's ``course.json``."""
    if inputs.submitted is not None:
        times = _named(read_submitted, inputs.submitted, "--submitted", known)
        submitted = {s: t for s, (t, _) in times.items()}
    else:
        recorded = previous.get("submitted", {})
        submitted = {s: dt.datetime.fromisoformat(t) for s, t in recorded.items()}
    if inputs.extensions is not None:
        days = _named(read_extensions, inputs.extensions, "--extensions", known)
        extensions = {s: d for s, (d, _) in days.items()}
    else:
        extensions = dict(previous.get("extensions", {}))
    if inputs.manual is not None:
        try:
            merged = read_manual(inputs.manual, assignment, known)
        except ValueError as error:
            raise ValueError(f"argument --manual: {error}") from None
    else:
        merged = {(s, e, i): ManualPoints(p, c) for s, e, i, p, c in previous.get("manual", [])}
    return submitted, extensions, merged


def _notes(student, hand_in, results, stranger: bool, grader_errors: list) -> list[str]:
    """What ``status`` says about a hand-in besides lateness and manual points, exercise by
    exercise in the order of ``results`` (the assignment's: grading ends in any order, and
    the sheet must not); the grader's own failures are added to ``grader_errors``."""
    notes = ["not in the roster"] if stranger else []
    if hand_in.problem:
        notes.append(f"the hand-in could not be read: {hand_in.problem}")
    for exercise_id, result in results.items():
        if result.grader_error:
            grader_errors.append((f"{student}/{exercise_id}", result.grader_error))
            notes.append(f"{exercise_id}: the grader failed (regrade)")
        elif result.error and not hand_in.problem:
            notes.append(f"{exercise_id}: {result.error.splitlines()[0]}")
    return notes


def _teaching_team_reports(stage: Path, assignment: Assignment, results) -> None:
    """Call site of the teaching team's reports of the whole class (``checks.csv``,
    ``summary.md``, ``similarity.csv``), which another branch of issue 22 writes; until they
    are merged there is nothing to call here."""


def _named(reader, path, argument, known):
    if path is None:
        return {}
    try:
        table = reader(path)
    except ValueError as error:
        raise ValueError(f"argument {argument}: {error}") from None
    for student, (_, where) in table.items():
        if student not in known:
            raise ValueError(f"argument {argument}: {where}: unknown student {student!r}")
    return table


def _ignore_student(out: Path, student: str):
    def ignore(folder, names):
        return [student] if Path(folder) == out else []

    return ignore


def _grade_all(graders, assignment, todo, stage, jobs, progress):
    """``{student: {exercise id: result}}`` for every hand-in in ``todo``; a progress bar on a
    terminal (``progress`` True), else one plain line per exercise graded."""
    if progress is None:
        progress = sys.stderr.isatty()
    from tqdm import tqdm

    tasks = [(s, h, graders[e.id]) for s, h in todo.items() for e in assignment.exercises]
    bar = tqdm(total=len(tasks), unit="exercise", disable=not progress, file=sys.stderr)
    results: dict[str, dict[str, SubmissionResult]] = {s: {} for s in todo}
    with (
        contextlib.closing(bar),
        concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool,
    ):
        futures = {
            pool.submit(_grade_exercise, grader, hand_in, student, stage / student): (
                student,
                grader.exercise.id,
            )
            for student, hand_in, grader in tasks
        }
        try:
            for done, future in enumerate(concurrent.futures.as_completed(futures), 1):
                student, exercise_id = futures[future]
                result = results[student][exercise_id] = future.result()
                bar.update()
                if not progress:
                    print(
                        f"[{done}/{len(tasks)}] {student} {exercise_id}: "
                        f"{result.score:g} / {result.max_score:g}",
                        file=sys.stderr,
                        flush=True,
                    )
        except BaseException:
            with stopping.stop_workers():
                pool.shutdown(wait=True, cancel_futures=True)
            raise
    return results
