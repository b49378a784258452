"""Graded-only checks of the book exercise ``gae-recursion``.

Instructor material, never in the students' wheel. ``load_exercises``
(:mod:`rlfound.grading.authoring.spec`) appends them to the public checks of the
specification of the same file name in ``rlfound/grading/authoring/exercises/``. Their inputs
come from the course's grading seed.
"""

from rlfound.grading.authoring.exercises.gae_recursion import random_trajectories
from rlfound.grading.authoring.spec import (
    Compare,
)


def long_trajectories(rng):
    """Longer trajectories the student has not seen."""
    return random_trajectories(rng, longest=200)


CHECKS = [
    Compare(
        name="graded-recursive",
        function="gae_recursive",
        inputs=long_trajectories,
        public=False,
        description="gae_recursive on longer trajectories the student has not seen.",
    ),
    Compare(
        name="graded-explicit",
        function="gae_explicit",
        inputs=long_trajectories,
        public=False,
        description="gae_explicit on longer trajectories the student has not seen.",
    ),
]
