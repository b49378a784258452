"""Graded-only checks of the book exercise ``importance-sampling``.

Instructor material, never in the students' wheel. ``load_exercises``
(:mod:`rlfound.grading.authoring.spec`) appends them to the public checks of the
specification of the same file name in ``rlfound/grading/authoring/exercises/``. Their inputs
come from the course's grading seed.
"""

from rlfound.grading.authoring.exercises.importance_sampling import random_policies
from rlfound.grading.authoring.spec import (
    Compare,
)

CHECKS = [
    Compare(
        name="graded-policies",
        function="importance_sampling_value",
        inputs=random_policies,
        public=False,
        description="The reference on policies the student has not seen.",
    ),
]
