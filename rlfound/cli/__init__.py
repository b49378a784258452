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

import sys

from rlfound.cli._commands import run
from rlfound.cli._parser import build_parser

__all__ = ["build_parser", "main"]


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
            return run(args.command_parser, args)
        except stopping.Stopped as stop:
            print(f"stopped by {stop.name}", file=sys.stderr)
            return stop.status
