"""What the ``rlfound`` command's subcommands do (:mod:`rlfound.cli` parses their arguments)."""

from __future__ import annotations

import sys
from pathlib import Path

from rlfound.cli._subcommands import exercise_of_file, manual

__all__ = ["run"]

#: Skipped entries named in the summary (all are in skipped.csv).
_SHOWN = 20


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
        exercise = exercise_of_file(
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


def run(parser, args) -> int:
    """Run the subcommand ``args`` name (``parser`` is its own, for its errors)."""
    if args.command == "secret":
        return _secret(parser, args)
    if args.command == "manual":
        return manual(parser, args, shown=_SHOWN)
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
