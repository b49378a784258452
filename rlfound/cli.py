"""The ``rlfound`` command: hand out exercises, self-check them, grade a class.

::

    rlfound exercises                               list the exercises
    rlfound starter EXERCISE [-o FILE] [--notebook] write a student starter
    rlfound check FILE [--exercise ID]              run the public checks (students)
    rlfound grade EXERCISE SUBMISSION... --out DIR  grade a class (instructors)
    rlfound grade --assignment hw1.toml SUBMISSIONS --out DIR [--roster R] [--manual M]
                                                    grade an assignment of several exercises
    rlfound assignment check hw1.toml               check an assignment file
    rlfound export canvas DIR --roster R -o FILE    the grades in Canvas's import format
    rlfound manual DIR [-o manual.csv]              the template of the points graded by hand
    rlfound gradescope EXERCISE -o autograder.zip   build a Gradescope autograder
    rlfound gradescope --assignment hw1.toml -o hw1.zip   one autograder for an assignment
    rlfound verify SPEC_OR_ID                       check an exercise specification
    rlfound classpack --out DIR [--with-solutions]  the chapters and starters for a course
    rlfound secret                                  create the course's grading secret

``grade``, ``gradescope``, ``verify`` of a book exercise and ``classpack --with-solutions``
need the teaching team's package ``rlfound-instructor`` beside ``rlfound``
(:mod:`rlfound.grading.authoring.instructor`); where it is missing they exit with status 2 and
say how to get it. ``grade`` and ``gradescope`` take the graded-only checks' seed from
``--seed``, ``RLFOUND_SEED`` or the course secret, and refuse the public default unless
``--public-seed`` is given (:mod:`rlfound.grading.authoring.secret`).

Every subcommand accepts ``--exercises DIR`` (repeatable) to add an instructor's own
exercise specifications. Exit status: 0 on success (``grade`` returns 0 whenever the batch was
graded, whatever the scores), 1 when ``check`` finds a failing check, ``verify`` finds a
problem in the specification, or the grader itself failed on a submission (its worker could
not start or be cleaned up; that submission has a zero and the reason, every other row is
graded), 2 for bad arguments, 128 + N when stopped by signal N (130 for SIGINT, 143 for
SIGTERM), after the clean-up of a normal exit. ``grade`` and ``gradescope``'s runner print
which sandbox mode they use and what it protects against.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rlfound import _subcommands

#: Skipped entries named in the summary (all are in skipped.csv).
_SHOWN = 20
_DESCRIPTION = "Exercises of RL Foundations: starters, self-check and a sandboxed batch grader."


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a positive integer; got {text!r}"
        ) from None
    if value < 1:
        raise argparse.ArgumentTypeError(
            f"expected a positive integer; got {value}"
        )
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a positive number; got {text!r}"
        ) from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(
            f"expected a positive number; got {text}"
        )
    return value


def _seed(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a non-negative integer; got {text!r}"
        ) from None
    if value < 0:
        raise argparse.ArgumentTypeError(
            f"expected a non-negative integer; got {value}"
        )
    return value


def _seed_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--seed",
        type=_seed,
        default=None,
        metavar="S",
        help="seed of the graded-only inputs; keep it private (default: $RLFOUND_SEED, else "
        "the course secret that `rlfound secret` creates)",
    )
    parser.add_argument(
        "--public-seed",
        action="store_true",
        help="grade with the public default seed, which anyone with the repository can "
        "reproduce (practice runs, not credit)",
    )


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``rlfound`` command."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--exercises",
        metavar="DIR",
        action="append",
        default=[],
        help="also load exercise specifications from DIR (repeatable)",
    )
    sandbox = argparse.ArgumentParser(add_help=False)
    sandbox.add_argument(
        "--timeout",
        type=_positive_float,
        default=10.0,
        metavar="SECONDS",
        help="CPU time of one check (of each function it calls), all the submission's "
        "processes together (default: 10; "
        "a check also ends after 3 times that plus 5 seconds of wall-clock time, not counting "
        "waits for a busy CPU; a function that times out is not called again)",
    )
    sandbox.add_argument(
        "--total-timeout",
        type=_positive_float,
        default=None,
        metavar="SECONDS",
        help="CPU time of a whole submission, all its checks and imports together; the checks "
        "left when it is spent fail unrun (default: 10 times --timeout)",
    )
    sandbox.add_argument(
        "--memory",
        type=_positive_int,
        default=2048,
        metavar="MIB",
        help="memory of all of a submission's processes together, in MiB (default: 2048)",
    )
    sandbox.add_argument(
        "--mode",
        choices=("auto", "strong", "user", "default"),
        default="auto",
        help="sandbox: strong uses bubblewrap; user (the grader is root) runs each submission "
        "as an unprivileged user in a private root; default has no kernel isolation; auto "
        "(default) picks the strongest that works here",
    )

    parser = argparse.ArgumentParser(
        prog="rlfound", description=_DESCRIPTION
    )
    commands = parser.add_subparsers(
        dest="command", required=True, metavar="COMMAND"
    )

    commands.add_parser(
        "exercises",
        parents=[common],
        help="list the exercises with ids, chapters, stars, points",
    )

    starter = commands.add_parser(
        "starter",
        parents=[common],
        help="write the student starter of an exercise",
    )
    starter.add_argument(
        "exercise",
        metavar="EXERCISE",
        help="exercise id, e.g. gae-recursion",
    )
    starter.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="where to write it (default: <exercise>.py or .ipynb here; '-' for stdout)",
    )
    starter.add_argument(
        "--notebook", action="store_true", help="write a Jupyter notebook"
    )
    starter.add_argument(
        "--force", action="store_true", help="overwrite an existing file"
    )

    check = commands.add_parser(
        "check",
        parents=[common, sandbox],
        help="run the public checks on your solution",
    )
    check.add_argument(
        "file", metavar="FILE", help="your .py or .ipynb file"
    )
    check.add_argument(
        "--exercise",
        metavar="ID",
        help="exercise id (default: the file's '# rlfound exercise:' header, else the "
        "exercise its file name names, such as gae_recursion.py)",
    )

    grade = commands.add_parser(
        "grade",
        parents=[common, sandbox],
        help="grade submissions (instructors)",
        usage="rlfound grade EXERCISE SUBMISSION... --out DIR [options]\n"
        "       rlfound grade --assignment FILE SUBMISSIONS --out DIR [options]",
    )
    grade.add_argument(
        "targets",
        metavar="EXERCISE SUBMISSION",
        nargs="+",
        help="an exercise id, then hand-ins (.py, .ipynb, .zip) or a class's folder or zip of "
        "them (per-student folders and zips, a Canvas bulk download, a Gradescope export); "
        "with --assignment, only the class's folder or zip",
    )
    grade.add_argument(
        "--out", metavar="DIR", required=True, help="folder for the reports"
    )
    grade.add_argument(
        "--jobs",
        type=_positive_int,
        default=1,
        metavar="N",
        help="submissions graded at once",
    )
    _seed_options(grade)
    grade.add_argument(
        "--no-progress",
        action="store_true",
        help="never show a progress bar: one plain line per submission, as off a terminal",
    )
    from rlfound.grading.course import commands as course

    course.add_options(grade, commands, common)

    manual = commands.add_parser(
        "manual",
        help="write manual.csv: every student and part graded by hand, with the student's "
        "answer, points blank for the teaching team",
    )
    manual.add_argument(
        "dir", metavar="DIR", help="a folder that rlfound grade wrote"
    )
    manual.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        default="manual.csv",
        help="(default: manual.csv)",
    )
    manual.add_argument(
        "--force", action="store_true", help="overwrite an existing file"
    )

    gradescope = commands.add_parser(
        "gradescope",
        parents=[common],
        help="build a Gradescope autograder zip",
    )
    gradescope.add_argument(
        "exercise", metavar="EXERCISE", nargs="?", help="exercise id"
    )
    gradescope.add_argument(
        "--assignment",
        metavar="FILE",
        help="one autograder for every exercise of an assignment",
    )
    gradescope.add_argument(
        "-o", "--output", metavar="FILE", default="autograder.zip"
    )
    _seed_options(gradescope)
    gradescope.add_argument(
        "--timeout", type=_positive_float, default=10.0, metavar="SECONDS"
    )

    verify = commands.add_parser(
        "verify",
        parents=[common, sandbox],
        help="check a specification: reference full marks, starter zero, signatures, "
        "reproducible inputs",
    )
    verify.add_argument(
        "spec",
        metavar="SPEC_OR_ID",
        help="a specification file (.py) or an exercise id",
    )
    verify.add_argument(
        "--seed",
        type=_seed,
        default=0,
        metavar="S",
        help="grading seed of the graded-only checks (default: 0)",
    )
    secret = commands.add_parser(
        "secret",
        help="create the course secret: the seed of the graded-only checks (once per course)",
    )
    secret.add_argument(
        "--path",
        metavar="FILE",
        help="where to write it (default: the course secret file)",
    )
    secret.add_argument(
        "--force",
        action="store_true",
        help="replace an existing secret (changes every input)",
    )
    classpack = commands.add_parser(
        "classpack",
        parents=[common],
        help="write a class pack: every chapter as a notebook, every starter, a README",
    )
    classpack.add_argument(
        "--out", metavar="DIR", required=True, help="folder of the pack"
    )
    classpack.add_argument(
        "--with-solutions",
        action="store_true",
        help="add the worked solutions and reference code, for the teaching team, in "
        "solutions-teaching-team-only/",
    )
    classpack.add_argument(
        "--force",
        action="store_true",
        help="write into a folder that is not empty, replacing the pack's README.md, "
        "chapters/, exercises/ and solutions-teaching-team-only/ (nothing else in it)",
    )
    # Each subcommand's errors print that subcommand's usage, not the top-level one.
    for name, command in commands.choices.items():
        command.set_defaults(command_parser=command)
        command.prog = f"rlfound {name}"
    return parser


def _classpack(parser, args, exercises) -> int:
    from rlfound.grading.authoring.instructor import require_instructor
    from rlfound.grading.distribution import classpack

    if args.with_solutions:
        require_instructor("rlfound classpack --with-solutions")
    try:
        files = classpack.write_pack(
            args.out,
            exercises,
            with_solutions=args.with_solutions,
            force=args.force,
        )
    except FileExistsError as error:
        parser.error(f"argument --out: {error}")
    notebooks = sum(name.endswith(".ipynb") for name in files)
    print(
        f"wrote {len(files)} files ({notebooks} notebooks) to {args.out}; "
        f"students start with {Path(args.out) / classpack.README}",
        file=sys.stderr,
    )
    return 0


def _limits(args):
    from rlfound.grading.sandbox import Limits

    return Limits(
        timeout=args.timeout,
        total_timeout=args.total_timeout,
        memory=args.memory * 2**20,
    )


def _exercise(parser, exercises, exercise_id, argument):
    if exercise_id not in exercises:
        choices = ", ".join(sorted(exercises))
        parser.error(
            f"argument {argument}: unknown exercise {exercise_id!r} (choose from {choices})"
        )
    return exercises[exercise_id]


def _list(exercises) -> int:
    from rlfound.grading.authoring.answers import library_answers

    rows = [
        (
            "id",
            "chapter",
            "stars",
            "points",
            "by hand",
            "in the book",
            "title",
        )
    ]
    answered = 0
    for exercise in sorted(
        exercises.values(), key=lambda e: (e.chapter, e.stars, e.id)
    ):
        try:
            found = len(library_answers(exercise))
        except (
            ValueError
        ):  # an instructor's exercise whose reference is missing or broken
            found = 0
        answered += bool(found)
        rows.append(
            (
                exercise.id,
                str(exercise.chapter),
                "★" * exercise.stars,
                f"{exercise.max_score:g}",
                f"{exercise.manual_points:g}",
                f"{found} of {len(exercise.functions)}" if found else "-",
                exercise.title,
            )
        )
    widths = [
        max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)
    ]
    for row in rows:
        print(
            "  ".join(
                cell.ljust(width)
                for cell, width in zip(row[:-1], widths, strict=True)
            )
            + "  "
            + row[-1]
        )
    if answered:
        print(
            f"\nin the book: {answered} exercise(s) ask for functions that a public rlfound "
            "function already computes (it passes their public checks). Students have the "
            "library, so these are fine for self-study and weak for credit (a submission "
            "cannot import rlfound); `rlfound verify ID` names the functions."
        )
    if not all(exercise.complete for exercise in exercises.values()):
        print(
            "\npoints count the public checks only: the graded-only checks are in the "
            "teaching team's package rlfound-instructor"
        )
    return 0


def _starter(parser, args, exercise) -> int:
    from rlfound.grading.authoring import public
    from rlfound.grading.output.atomic import write_atomic

    if args.notebook:
        text = public.public_starter_notebook(exercise)
    else:
        text = public.public_starter(exercise)
    if args.output == "-":
        sys.stdout.write(text)
        return 0
    suffix = ".ipynb" if args.notebook else ".py"
    output = Path(args.output or exercise.id.replace("-", "_") + suffix)
    if output.exists() and not args.force:
        # Name -o only when it was given: the default file name is no option's fault.
        where = "argument -o/--output: " if args.output else ""
        parser.error(f"{where}{output} exists; pass --force to overwrite it")
    write_atomic(output, text)
    print(
        f"wrote {output}; check it with: rlfound check {output}",
        file=sys.stderr,
    )
    return 0


def _check(parser, args, exercises) -> int:
    from rlfound.grading.intake import submissions
    from rlfound.grading.scoring.compare import FLOAT32_HINT
    from rlfound.grading.scoring.grader import Grader

    submission = submissions.read_submission(Path(args.file))
    if submission.source is None:
        parser.error(f"argument FILE: {submission.error}")
    if args.exercise:
        exercise = _exercise(parser, exercises, args.exercise, "--exercise")
    else:
        exercise = _subcommands.exercise_of_file(
            parser, exercises, Path(args.file), submission.source, _exercise
        )
    from rlfound.grading.sandbox import stopping

    grader = Grader(
        exercise, public_only=True, mode=args.mode, limits=_limits(args)
    )
    # In a thread of its own, so that a signal stops it only where it can close its worker.
    result = stopping.run(grader.grade, submission)
    print(f"{exercise.summary()} — public checks on {args.file}\n")
    for check in result.checks:
        mark = "PASS" if check.passed else "FAIL"
        print(
            f"{mark}  {check.name}  ({check.score:g}/{check.max_score:g})  {check.description}"
        )
        if not check.passed:
            for line in check.message.splitlines():
                print(f"      {line}")
    for run in result.student_tests:
        verdict = "passed" if run.passed else "failed"
        print(
            f"TEST  your {run.name}() {verdict}  (run, not scored automatically)"
        )
        for line in run.message.splitlines():
            print(f"      {line}")
    for note in result.notes:
        print(f"NOTE  {note}".replace("\n", "\n      "))
    print(f"\npublic checks: {result.score:g} / {result.max_score:g} points")
    # The hint is in each such check's message; a line of its own makes it hard to miss.
    in_float32 = [
        c.name
        for c in result.checks
        if not c.passed and FLOAT32_HINT in c.message
    ]
    if in_float32:
        print(f"hint: {', '.join(in_float32)}: {FLOAT32_HINT}")
    hidden = len(exercise.checks) - len(grader.checks)
    if hidden:
        print(f"grading adds {hidden} check(s) on inputs you have not seen")
    elif not exercise.complete:
        print("grading adds checks on inputs you have not seen")
    if exercise.manual:
        print(
            f"graded by hand: {', '.join(p.name for p in exercise.manual)} (write each under "
            "its '### By hand:' heading)"
        )
    return 0 if all(check.passed for check in result.checks) else 1


def _grade(parser, args, exercise) -> int:
    from rlfound.grading.authoring.instructor import InstructorMissing
    from rlfound.grading.authoring.secret import resolve_seed
    from rlfound.grading.sandbox import describe_mode, stopping
    from rlfound.grading.scoring.batch import grade_batch
    from rlfound.grading.scoring.grader import Grader

    if not exercise.complete:
        raise InstructorMissing("rlfound grade")
    seed, origin = resolve_seed(args.seed, public_seed=args.public_seed)
    grader = Grader(
        exercise, seed=seed, mode=args.mode, limits=_limits(args)
    )
    print(describe_mode(grader.mode), file=sys.stderr)
    print(f"graded-only inputs from {origin}", file=sys.stderr)
    progress = False if args.no_progress else None
    done = []
    try:
        results = grade_batch(
            grader,
            args.targets[1:],
            args.out,
            jobs=args.jobs,
            progress=progress,
            on_result=done.append,
        )
    except OSError as error:
        print(
            f"error: the class's grade sheet could not be written: {error}",
            file=sys.stderr,
        )
        return 1
    except stopping.Stopped as stop:
        print(
            f"stopped by {stop.name} after {len(done)} submission(s): their reports are in "
            f"{args.out}; grades.csv and skipped.csv were not written (grade the class again)",
            file=sys.stderr,
        )
        return stop.status
    total = sum(r.score for r in results)
    mean = total / len(results) if results else 0.0
    print(
        f"graded {len(results)} submission(s) of {exercise.id} in {grader.mode} mode; "
        f"mean {mean:.2f} / {grader.max_score:g}; reports in {args.out}",
        file=sys.stderr,
    )
    if results.team_reports is not None:
        pairs = len(results.team_reports.pairs)
        print(
            f"for the teaching team: checks.csv, summary.md, similarity.csv ({pairs} pair(s) "
            "that look alike: a prompt for a human look, not evidence; no score changes)",
            file=sys.stderr,
        )
        for line in results.team_reports.left_out:
            print(f"  {line}", file=sys.stderr)
    if exercise.manual:
        print(
            f"graded by hand: {exercise.manual_points:g} point(s); each student's answers are "
            f"in manual.md; `rlfound manual {args.out}` writes the template to fill in",
            file=sys.stderr,
        )
    if results.skipped:
        count = len(results.skipped)
        print(
            f"skipped {count} other entr{'y' if count == 1 else 'ies'} of the submissions "
            f"folders, each listed with the reason in {Path(args.out) / 'skipped.csv'}:",
            file=sys.stderr,
        )
        for entry, reason in results.skipped[:_SHOWN]:
            print(f"  {entry}: {reason}", file=sys.stderr)
        if count > _SHOWN:
            print(f"  ... and {count - _SHOWN} more", file=sys.stderr)
    broken = [r for r in results if r.grader_error]
    if broken:
        print(
            f"error: the grader failed on {len(broken)} submission(s) (not the students' "
            f"fault; each has a zero and the reason in grades.csv): first: {broken[0].name}: "
            f"{broken[0].grader_error}",
            file=sys.stderr,
        )
        return 1
    return 0


def _verify(parser, args, exercises) -> int:
    from rlfound.grading.authoring import verify
    from rlfound.grading.authoring.instructor import InstructorMissing
    from rlfound.grading.sandbox import resolve_mode

    try:
        mode = resolve_mode(args.mode)
    except ValueError as error:
        parser.error(f"argument --mode: {error}")
    options = {"seed": args.seed, "mode": mode, "limits": _limits(args)}
    path = Path(args.spec)
    if path.is_file():
        verification = verify.verify_file(path, **options)
    else:
        if args.spec not in exercises and (
            path.suffix == ".py" or len(path.parts) > 1
        ):
            parser.error(
                f"argument SPEC_OR_ID: no such specification file: {path}"
            )
        exercise = _exercise(parser, exercises, args.spec, "SPEC_OR_ID")
        if not exercise.complete:
            raise InstructorMissing("rlfound verify of a book exercise")
        verification = verify.verify(exercise, **options)
    print(verification.report(), end="")
    return 0 if verification.ok else 1


def _gradescope(args, exercise) -> int:
    from rlfound.grading.authoring.instructor import InstructorMissing
    from rlfound.grading.authoring.secret import resolve_seed
    from rlfound.grading.distribution.gradescope import build_bundle

    if not exercise.complete:
        raise InstructorMissing("rlfound gradescope")
    seed, origin = resolve_seed(args.seed, public_seed=args.public_seed)
    build_bundle(
        exercise, Path(args.output), seed=seed, timeout=args.timeout
    )
    print(
        f"wrote {args.output} (graded-only inputs from {origin})",
        file=sys.stderr,
    )
    return 0


def _secret(parser, args) -> int:
    from rlfound.grading.authoring.secret import create_secret, secret_path

    path = Path(args.path) if args.path else secret_path()
    try:
        path, _ = create_secret(path, force=args.force)
    except FileExistsError:
        parser.error(
            f"{path} exists; pass --force to replace it (every hidden input changes)"
        )
    except OSError as error:
        parser.error(
            f"the course secret could not be written to {path}: {error}"
        )
    print(
        f"wrote the course secret to {path} (readable by you only). rlfound grade and "
        "rlfound gradescope use it from now on; keep it, and give it to co-instructors "
        "who regrade",
        file=sys.stderr,
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run the ``rlfound`` command; return its exit status.

    SIGTERM and SIGINT stop it with the clean-up of a normal exit (the workers' processes
    killed, the private root and the temporary folders removed) and the status ``128 + N``
    (:mod:`rlfound.grading.sandbox.stopping`).
    """
    args = build_parser().parse_args(argv)
    from rlfound.grading.sandbox import stopping

    with stopping.stop_on_signals():
        try:
            return _run(args.command_parser, args)
        except stopping.Stopped as stop:
            print(f"stopped by {stop.name}", file=sys.stderr)
            return stop.status


def _run(parser, args) -> int:
    if args.command == "secret":
        return _secret(parser, args)
    if args.command == "manual":
        return _subcommands.manual(parser, args, shown=_SHOWN)
    from rlfound.grading.authoring import spec

    try:
        exercises = spec.load_exercises(args.exercises)
    except ValueError as error:
        parser.error(str(error))
    if args.command == "exercises":
        return _list(exercises)
    try:
        if args.command == "check":
            return _check(parser, args, exercises)
        if args.command == "verify":
            return _verify(parser, args, exercises)
        if args.command == "classpack":
            return _classpack(parser, args, exercises)
        if args.command in ("assignment", "export") or getattr(
            args, "assignment", None
        ):
            return _course(parser, args, exercises)
        if args.command == "grade":
            from rlfound.grading.course.commands import single_exercise

            args.exercise = single_exercise(args)
        if args.exercise is None:
            parser.error(
                "argument EXERCISE: give an exercise id, or --assignment FILE"
            )
        exercise = _exercise(parser, exercises, args.exercise, "EXERCISE")
        if args.command == "starter":
            return _starter(parser, args, exercise)
        if args.command == "grade":
            return _grade(parser, args, exercise)
        return _gradescope(args, exercise)
    except ValueError as error:
        parser.error(str(error))


def _course(parser, args, exercises) -> int:
    from rlfound.grading.course import commands

    if args.command == "gradescope":
        from rlfound.grading.distribution.gradescope import (
            assignment_command,
        )

        return assignment_command(args, exercises)
    # Only grade has the sandbox's options.
    return commands.run(
        args, exercises, _limits(args) if args.command == "grade" else None
    )


if __name__ == "__main__":
    sys.exit(main())
