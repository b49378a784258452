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

__all__ = ["assignment_check", "export_canvas", "grade", "read_assignment"]

#: Names shown in a summary before "... and N more".
_SHOWN = 20


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


def grade(args, exercises: Mapping[str, Exercise], graders_for) -> int:
    """``rlfound grade --assignment FILE SUBMISSIONS --out DIR``.

    ``graders_for(assignment)`` makes the graders (the command's seed, mode and limits).
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
    graders = graders_for(assignment)
    outcome = grade_assignment(
        assignment,
        source,
        args.out,
        graders,
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
