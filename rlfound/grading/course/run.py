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

``DIR`` holds ``grades.csv``, ``skipped.csv``, the teaching team's ``checks.csv``,
``summary.md`` and ``similarity.csv`` over the whole class (:mod:`rlfound.grading.output.team`;
``--only`` keeps those of the last full run, says so, and heads ``summary.md`` with the students
regraded since), ``course.json`` (what the run used: the
assignment, the roster, the submission times, extensions and points graded by hand given on
the command line, so that ``--only`` can reuse them) and ``DIR/<student>/`` with
``feedback.md`` covering every exercise, ``manual.md`` (the student's answers to every part
graded by hand, which ``rlfound manual DIR`` turns into the ``manual.csv`` template) and
``<exercise>/results.json``.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import dataclasses
import datetime as dt
import json
import os
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path

from rlfound.grading.course import folders, gradebook
from rlfound.grading.course.assignment import Assignment
from rlfound.grading.course.manual import ManualPoints, read_manual
from rlfound.grading.course.tables import Student, read_extensions, read_submitted
from rlfound.grading.output import manual_template, report, team
from rlfound.grading.output.atomic import write_atomic
from rlfound.grading.sandbox import stopping
from rlfound.grading.scoring.batch import grade_one
from rlfound.grading.scoring.grader import Grader
from rlfound.grading.scoring.results import SubmissionResult

__all__ = ["Inputs", "Outcome", "grade_assignment"]

#: What ``DIR/course.json`` is called.
COURSE_FILE = "course.json"
#: Where each exercise's reports are written before they move into the students' folders.
_SCRATCH = ".by-exercise"


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
    the results that failed because of the grader (not the student), and the teaching team's
    reports left out (their optional package missing), in words."""

    rows: list[gradebook.Row]
    missing: list[str]
    skipped: list[tuple[str, str]]
    grader_errors: list[tuple[str, str]]
    left_out: list[str] = dataclasses.field(default_factory=list)


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


@dataclasses.dataclass
class _Graded:
    """One exercise of one student: the result, and the answers to its parts graded by hand
    (None when there was no file to read them from)."""

    result: SubmissionResult
    answers: dict[str, str] | None = None


def _grade_exercise(grader: Grader, hand_in, student: str, stage: Path, sources) -> _Graded:
    """One exercise of one hand-in, inside the batch's failure boundary: whatever goes wrong
    costs this exercise of this student, with the reason, never the batch. Its reports go to
    ``stage/<student>/<exercise>/``."""
    from rlfound.grading import intake

    exercise = grader.exercise
    target = stage / student / exercise.id
    try:
        entry, problem = None, f"the hand-in could not be read: {hand_in.problem}"
        if not hand_in.problem:
            try:
                entry = intake.find_exercise_file(
                    hand_in, exercise.id, exercise.id.replace("-", "_")
                )
            except ValueError as error:  # two files claim the exercise: the student's doing
                problem = str(error)
            else:
                problem = f"no file of {exercise.id} in the hand-in"
        if entry is None:
            result = grader.not_run(student, None, problem)
            report.write_submission(target, exercise, result)
            return _Graded(result)
        # grade_one writes to <its folder>/<entry name>/: one folder per exercise, in which
        # each student's reports are named after the student, then moved into place.
        entry = dataclasses.replace(entry, name=student)
        scratch = stage / _SCRATCH / exercise.id
        result = grade_one(grader, entry, scratch, sources=sources)
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(scratch / student, target)
        answers = None
        if exercise.manual:
            answers = manual_template.answers_of(entry.path, exercise, entry=entry)
        return _Graded(result, answers)
    except Exception as error:  # the failure boundary: this exercise of this student only
        message = f"the grader failed on this exercise ({type(error).__name__}: {error})"
        return _Graded(grader.not_run(student, None, message, grader_error=True))


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
        graded, sources = _grade_all(graders, assignment, todo, stage, jobs, progress)
        results = {s: {e: g.result for e, g in by.items()} for s, by in graded.items()}
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
            # the students regraded alone since the class's reports were written
            "regraded": [] if only is None else sorted({*previous.get("regraded", []), only}),
        }
        write_atomic(stage / COURSE_FILE, json.dumps(record, indent=2, sort_keys=True) + "\n")
        for student, by_exercise in graded.items():
            _manual_page(stage / student, student, assignment, by_exercise)
        left_out = []
        if only is None:  # the class's reports need the whole class: --only keeps the last
            left_out = _teaching_team_reports(stage, assignment, results, sources)
        else:
            left_out = [_mark_reports_stale(stage, record["regraded"])]
        folders.swap_in(stage, out)
    rows.sort(key=lambda r: r.student)
    return Outcome(rows, missing, skipped, grader_errors, left_out)


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


def _manual_page(folder: Path, student: str, assignment: Assignment, by_exercise) -> None:
    """``<student>/manual.md``: every part graded by hand of every exercise, with the
    student's answer (what ``rlfound manual DIR`` reads for its template)."""
    items = [
        (exercise, by_exercise[exercise.id].answers or {})
        for exercise in assignment.exercises
        if exercise.manual
    ]
    if items:
        manual_template.write_manual(folder, student, items)


def _teaching_team_reports(stage: Path, assignment: Assignment, results, sources) -> list[str]:
    """``checks.csv``, ``summary.md`` (and ``scores.png``) and ``similarity.csv`` of the whole
    class (:func:`rlfound.grading.output.team.write_team_reports`); the reports left out
    (an optional package missing), in words."""
    by_exercise = {
        e.id: [results[student][e.id] for student in sorted(results)] for e in assignment.exercises
    }
    starters = {e.id: team.starter_code(e) for e in assignment.exercises}
    return team.write_team_reports(stage, by_exercise, sources, starters).left_out


#: The first line of a ``summary.md`` written before a regrade of one student (``--only``).
STALE_MARK = "> **Out of date:** "


def _mark_reports_stale(stage: Path, regraded: list[str]) -> str:
    """Head ``summary.md`` with the students regraded since it was written; the note the
    command prints about the class's reports."""
    names = ", ".join(regraded)
    path = stage / "summary.md"
    if path.is_file():
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        if lines and lines[0].startswith(STALE_MARK):
            lines = lines[2:]  # the mark of an earlier regrade and its blank line
        mark = (
            f"{STALE_MARK}written before the regrade of {names}; their new scores are in "
            "grades.csv, not here. Grade the class again with --force to bring this summary, "
            "checks.csv and similarity.csv up to date.\n"
        )
        write_atomic(path, "".join([mark, "\n", *lines]))
    return (
        f"note: checks.csv, summary.md and similarity.csv are the last full run's, from "
        f"before the regrade of {names}; grade the class again with --force to update them"
    )


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
    """``({student: {exercise id: _Graded}}, {exercise id: {student: code}})`` for every
    hand-in in ``todo``; a progress bar on a terminal (``progress`` True), else one plain line
    per exercise graded."""
    if progress is None:
        progress = sys.stderr.isatty()
    from tqdm import tqdm

    tasks = [(s, h, graders[e.id]) for s, h in todo.items() for e in assignment.exercises]
    bar = tqdm(total=len(tasks), unit="exercise", disable=not progress, file=sys.stderr)
    graded: dict[str, dict[str, _Graded]] = {s: {} for s in todo}
    sources: dict[str, dict[str, str]] = {e.id: {} for e in assignment.exercises}
    with (
        contextlib.closing(bar),
        concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool,
    ):
        futures = {
            pool.submit(
                _grade_exercise, grader, hand_in, student, stage, sources[grader.exercise.id]
            ): (student, grader.exercise.id)
            for student, hand_in, grader in tasks
        }
        try:
            for done, future in enumerate(concurrent.futures.as_completed(futures), 1):
                student, exercise_id = futures[future]
                graded[student][exercise_id] = future.result()
                result = graded[student][exercise_id].result
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
    shutil.rmtree(stage / _SCRATCH, ignore_errors=True)
    return graded, sources
