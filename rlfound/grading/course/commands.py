"""The course's subcommands of ``rlfound`` (:mod:`rlfound.cli` parses, these run).

* ``rlfound assignment check hw1.toml`` — read the assignment file and say what it means;
* ``rlfound grade --assignment hw1.toml SUBMISSIONS --out DIR`` — grade it
  (:func:`~rlfound.grading.course.run.grade_assignment`);
* ``rlfound export canvas DIR --roster roster.csv -o canvas.csv`` — the Canvas import file.

Bad input raises :class:`ValueError` whose message starts with ``argument X:``; the command
turns it into its usage and exit status 2.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path

from rlfound.grading.authoring.spec import Exercise
from rlfound.grading.course.assignment import Assignment, load_assignment
from rlfound.grading.course.export import canvas_csv
from rlfound.grading.course.run import Inputs, grade_assignment
from rlfound.grading.course.tables import read_roster
from rlfound.grading.output.atomic import write_atomic

#: Options of ``grade`` that only an assignment has.
_ASSIGNMENT_ONLY = ("roster", "submitted", "extensions", "manual", "force", "only")

__all__ = [
    "add_options",
    "assignment_check",
    "export_canvas",
    "grade",
    "graders",
    "read_assignment",
]

#: Names shown in a summary before "... and N more".
_SHOWN = 20


def add_options(grade, commands, common) -> None:
    """Add the course's options to the ``grade`` parser and the ``assignment`` and ``export``
    subcommands to ``commands`` (``common``: the options every subcommand has)."""
    course = grade.add_argument_group("an assignment (see `rlfound assignment check`)")
    course.add_argument("--assignment", metavar="FILE", help="the assignment file (TOML)")
    course.add_argument(
        "--roster", metavar="FILE", help="CSV: student,id[,name,sis_user_id,sis_login_id,section]"
    )
    course.add_argument("--submitted", metavar="FILE", help="CSV: student,submitted_at")
    course.add_argument("--extensions", metavar="FILE", help="CSV: student,days")
    course.add_argument(
        "--manual", metavar="FILE", help="CSV: student,exercise,item,points,comment"
    )
    course.add_argument(
        "--force", action="store_true", help="replace an --out folder that is not empty"
    )
    course.add_argument(
        "--only", metavar="STUDENT", help="regrade one student, keeping every other row"
    )
    assignment = commands.add_parser(
        "assignment", parents=[common], help="check an assignment file"
    )
    actions = assignment.add_subparsers(dest="action", required=True, metavar="ACTION")
    check = actions.add_parser(
        "check", parents=[common], help="read an assignment file and say what it means"
    )
    check.add_argument("file", metavar="FILE", help="the assignment file (TOML)")
    # Errors print the usage of the subcommand that failed (rlfound.cli reads command_parser).
    check.set_defaults(command_parser=check)
    export = commands.add_parser("export", help="export grades to a learning-management system")
    formats = export.add_subparsers(dest="format", required=True, metavar="FORMAT")
    canvas = formats.add_parser("canvas", parents=[common], help="Canvas's gradebook import CSV")
    canvas.add_argument("dir", metavar="DIR", help="the --out folder of grade --assignment")
    canvas.add_argument("--roster", metavar="FILE", required=True, help="the course roster")
    canvas.add_argument("-o", "--output", metavar="FILE", required=True, help="the CSV to write")
    canvas.set_defaults(command_parser=canvas)


def graders(args, assignment: Assignment, limits) -> dict:
    """One :class:`~rlfound.grading.scoring.grader.Grader` per exercise, with the command's
    seed (:func:`~rlfound.grading.authoring.secret.resolve_seed`), mode and ``limits``."""
    from rlfound.grading.authoring.instructor import InstructorMissing
    from rlfound.grading.authoring.secret import resolve_seed
    from rlfound.grading.sandbox import describe_mode
    from rlfound.grading.scoring.grader import Grader

    if not all(exercise.complete for exercise in assignment.exercises):
        raise InstructorMissing("rlfound grade")
    seed, origin = resolve_seed(args.seed, public_seed=args.public_seed)
    made = {e.id: Grader(e, seed=seed, mode=args.mode, limits=limits) for e in assignment.exercises}
    print(describe_mode(next(iter(made.values())).mode), file=sys.stderr)
    print(f"graded-only inputs from {origin}", file=sys.stderr)
    return made


def run(args, exercises: Mapping[str, Exercise], limits) -> int:
    """Run ``assignment check``, ``export canvas`` or ``grade --assignment``."""
    if args.command == "assignment":
        return assignment_check(args, exercises)
    if args.command == "export":
        return export_canvas(args)
    return grade(args, exercises, limits)


def single_exercise(args) -> str:
    """The exercise id of ``rlfound grade EXERCISE SUBMISSION...`` (no ``--assignment``).

    Raises
    ------
    ValueError
        ``argument --roster: needs --assignment FILE`` (and so on) for an option only an
        assignment has; a missing SUBMISSION.
    """
    given = [name for name in _ASSIGNMENT_ONLY if getattr(args, name)]
    if given:
        raise ValueError(f"argument --{given[0]}: needs --assignment FILE")
    if len(args.targets) < 2:
        raise ValueError("the following arguments are required: SUBMISSION")
    return args.targets[0]


def read_assignment(path: str, exercises: Mapping[str, Exercise], argument: str) -> Assignment:
    """:func:`load_assignment`, its error naming ``argument``."""
    try:
        return load_assignment(path, exercises)
    except ValueError as error:
        raise ValueError(f"argument {argument}: {error}") from None


def assignment_check(args, exercises: Mapping[str, Exercise]) -> int:
    """``rlfound assignment check FILE``: print what the file means; 0 when it is valid."""
    assignment = read_assignment(args.file, exercises, "FILE")
    sys.stdout.write(assignment.describe())
    missing = [e.id for e in assignment.exercises if not e.complete]
    if missing:
        print(
            f"note: {', '.join(missing)} can be graded only where the teaching team's package "
            "rlfound-instructor is installed"
        )
    return 0


def _roster(path: str | None, argument: str = "--roster"):
    if path is None:
        return None
    try:
        return read_roster(path)
    except ValueError as error:
        raise ValueError(f"argument {argument}: {error}") from None


def _names(names: list[str]) -> str:
    shown = ", ".join(names[:_SHOWN])
    return shown + (f" ... and {len(names) - _SHOWN} more" if len(names) > _SHOWN else "")


def grade(args, exercises: Mapping[str, Exercise], limits) -> int:
    """``rlfound grade --assignment FILE SUBMISSIONS --out DIR`` (``limits``: the workers').

    Returns 0 when every hand-in was graded, 1 when the grader itself failed on some.
    """
    assignment = read_assignment(args.assignment, exercises, "--assignment")
    if len(args.targets) != 1:
        raise ValueError(
            f"argument SUBMISSIONS: with --assignment, give one folder (or zip) of hand-ins; "
            f"got {len(args.targets)} paths"
        )
    source = Path(args.targets[0])
    inputs = Inputs(
        roster=_roster(args.roster),
        submitted=_path(args.submitted),
        extensions=_path(args.extensions),
        manual=_path(args.manual),
    )
    outcome = grade_assignment(
        assignment,
        source,
        args.out,
        graders(args, assignment, limits),
        inputs,
        force=args.force,
        only=args.only,
        jobs=args.jobs,
        progress=False if args.no_progress else None,
    )
    graded = [row for row in outcome.rows if row.student not in outcome.missing]
    what = f"regraded {args.only}" if args.only else f"graded {len(graded)} student(s)"
    print(
        f"{what} on {assignment.name} ({', '.join(assignment.ids)}); grades in "
        f"{Path(args.out) / 'grades.csv'}",
        file=sys.stderr,
    )
    if outcome.missing:
        print(
            f"no hand-in from {len(outcome.missing)} roster student(s) (0 points): "
            f"{_names(outcome.missing)}",
            file=sys.stderr,
        )
    for sentence in outcome.left_out:
        print(sentence, file=sys.stderr)
    if outcome.skipped:
        print(f"skipped {len(outcome.skipped)} entr(ies), listed in skipped.csv", file=sys.stderr)
    if outcome.grader_errors:
        where, reason = outcome.grader_errors[0]
        print(
            f"error: the grader failed on {len(outcome.grader_errors)} exercise(s) (not the "
            f"students' fault; each scores 0 with the reason): first: {where}: {reason}",
            file=sys.stderr,
        )
        return 1
    return 0


def _path(value: str | None) -> Path | None:
    return None if value is None else Path(value)


def export_canvas(args) -> int:
    """``rlfound export canvas DIR --roster FILE -o FILE``."""
    roster = _roster(args.roster)
    try:
        body, missing = canvas_csv(args.dir, roster)
    except ValueError as error:
        raise ValueError(f"argument DIR: {error}") from None
    write_atomic(args.output, body)
    print(f"wrote {args.output}: {len(roster)} student(s)", file=sys.stderr)
    if missing:
        print(
            f"{len(missing)} roster student(s) handed nothing in and get 0: {_names(missing)}",
            file=sys.stderr,
        )
    return 0
