"""The ``rlfound`` command's arguments (:mod:`rlfound.cli`): one parser per subcommand."""

from __future__ import annotations

import argparse

__all__ = ["build_parser"]

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
