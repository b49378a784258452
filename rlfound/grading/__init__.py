"""The rlfound grader: exercise specifications, starters, self-check and batch grading.

Student code is untrusted. The grader never imports it: a worker process
(:mod:`rlfound.grading.worker`, run by :mod:`rlfound.grading.sandbox`) calls the student's
functions and returns plain numbers and arrays (:mod:`rlfound.grading.protocol`); this
process alone computes the reference outputs, compares (:mod:`rlfound.grading.compare`) and
scores (:mod:`rlfound.grading.grader`), and writes the reports
(:mod:`rlfound.grading.report`).

Modules, each importing only modules listed before it: ``compare`` (the tolerance
comparison), ``text`` (student text made bounded and inert), ``spec`` (the exercise format),
``starter`` (starters from reference solutions), ``files`` (reading without following links,
removing what a submission left), ``submissions`` (finding entries and reading ``.py``/
``.ipynb`` files as text), ``protocol`` (the wire format), ``worker`` and ``launcher`` (the
scripts that run student code and start it in a private root), ``cgroups`` (control groups
per submission), ``accounts`` (unprivileged worker users), ``runtime`` (the private root),
``sandbox`` (the process boundary), ``results`` (what grading found), ``grader``, ``atomic``
(atomic file writes), ``report`` (``results.json``, ``feedback.md``, ``grades.csv``,
``skipped.csv``), ``batch`` (grading a class), ``verify`` (checking a specification) and
``gradescope`` (the autograder bundle), ``classpack`` (the notebooks and starters a teacher
hands out). The ``rlfound`` command is :mod:`rlfound.cli`.
"""

from rlfound.grading.batch import grade_batch
from rlfound.grading.grader import Grader
from rlfound.grading.results import CheckResult, SubmissionResult
from rlfound.grading.sandbox import Limits
from rlfound.grading.spec import Exercise, load_exercises

__all__ = [
    "CheckResult",
    "Exercise",
    "Grader",
    "Limits",
    "SubmissionResult",
    "grade_batch",
    "load_exercises",
]
