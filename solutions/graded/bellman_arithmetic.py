"""Graded-only checks of the book exercise ``bellman-arithmetic``.

Instructor material, never in the students' wheel. ``load_exercises``
(:mod:`rlfound.grading.authoring.spec`) appends them to the public checks of the
specification of the same file name in ``rlfound/grading/authoring/exercises/``. Their inputs
come from the course's grading seed.
"""

from rlfound.grading.authoring.exercises.bellman_arithmetic import random_gammas
from rlfound.grading.authoring.spec import Compare

CHECKS = [
    Compare(
        name="graded-gammas",
        function="chain_values",
        inputs=random_gammas,
        public=False,
        description="Random discounts the student has not seen.",
    ),
]
