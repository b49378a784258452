"""Where the teaching team's material is: reference solutions, worked solutions, graded-only
checks.

rlfound ships as two distributions built from one repository. The ``rlfound`` wheel is what
students install: the library, the chapters, every starter and ``rlfound check``, which runs
the public checks from expected values recorded when the wheel was built
(:mod:`rlfound.grading.authoring.public`). Nothing in it holds a reference solution, a worked
solution or a graded-only check. The teaching team installs ``rlfound-instructor`` beside it
(``make instructor-wheel``): the package ``rlfound_instructor`` is the repository's
``solutions/`` folder, whose ``graded/`` subfolder holds each book exercise's graded-only
checks. ``grade``, ``verify``, ``gradescope`` and ``classpack --with-solutions`` need it.

A source checkout is the instructor's side too: there ``solutions/`` sits next to the package.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

__all__ = [
    "CHECKOUT_SOLUTIONS",
    "DISTRIBUTION",
    "GRADED",
    "PACKAGE",
    "InstructorMissing",
    "instructor_folder",
    "require_instructor",
]

#: The teaching team's distribution (pip's name) and its import package.
DISTRIBUTION = "rlfound-instructor"
PACKAGE = "rlfound_instructor"
#: Subfolder of the instructor material holding graded-only checks, one file per exercise.
GRADED = "graded"
#: The checkout's folder: rlfound/grading/authoring/instructor.py -> the repository root.
CHECKOUT_SOLUTIONS = Path(__file__).resolve().parents[3] / "solutions"


class InstructorMissing(ValueError):
    """The instructor material is needed and not installed; the message says how to get it."""

    def __init__(self, what: str):
        super().__init__(
            f"{what} needs the teaching team's package {DISTRIBUTION} (reference solutions and "
            f"graded-only checks), which is not installed here. Build it from the rlfound "
            f"repository with `make instructor-wheel` and install it beside rlfound: "
            f"pip install dist/{PACKAGE}-*.whl. Students only ever get the rlfound wheel."
        )


def instructor_folder() -> Path | None:
    """The folder of reference solutions (``*.py``), worked solutions (``*.md``) and
    graded-only checks (``graded/``), or None where only the student distribution is here."""
    found = importlib.util.find_spec(PACKAGE)
    if found is not None and found.submodule_search_locations:
        return Path(next(iter(found.submodule_search_locations))).resolve()
    if (CHECKOUT_SOLUTIONS / GRADED).is_dir():
        return CHECKOUT_SOLUTIONS
    return None


def require_instructor(what: str) -> Path:
    """:func:`instructor_folder`, or :class:`InstructorMissing` naming ``what`` needs it."""
    folder = instructor_folder()
    if folder is None:
        raise InstructorMissing(what)
    return folder
