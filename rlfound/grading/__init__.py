"""The rlfound grader: exercise specifications, starters, self-check and batch grading.

Student code is untrusted. The grader never imports it: a worker process runs it
(:mod:`rlfound.grading.sandbox`) and returns plain numbers and arrays over a strict wire
format; this process alone computes the reference outputs, compares and scores, and writes
the reports. The package is laid out by phase, each importing only the phases before it:

``authoring``
    The exercise format (:mod:`~rlfound.grading.authoring.spec`), starters made from
    reference solutions, :mod:`~rlfound.grading.authoring.verify`, and the book's exercises.
``intake``
    Finding submissions, reading files without following links, student text made bounded
    and inert.
``sandbox``
    Modes, the worker's life cycle and watchdog, process tracking, control groups, worker
    users, the private root, stopping on a signal; ``sandbox/inside/`` holds the only files
    copied into the sandbox (standard library only).
``scoring``
    The tolerance comparison, the :class:`Grader`, its results, :func:`grade_batch`.
``output``
    ``results.json``, ``feedback.md``, ``grades.csv`` and atomic writes.
``course``
    Assignments of several exercises, rosters, the late policy, points graded by hand,
    regrades that replace the output whole, the Canvas export.
``distribution``
    The Gradescope autograder bundle and the class pack.

The ``rlfound`` command is :mod:`rlfound.cli`.
"""

from rlfound.grading.authoring.spec import Exercise, load_exercises
from rlfound.grading.sandbox import Limits
from rlfound.grading.scoring.batch import grade_batch
from rlfound.grading.scoring.grader import Grader
from rlfound.grading.scoring.results import CheckResult, SubmissionResult

__all__ = [
    "CheckResult",
    "Exercise",
    "Grader",
    "Limits",
    "SubmissionResult",
    "grade_batch",
    "load_exercises",
]
