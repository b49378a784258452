"""Graded-only checks of the book exercise ``score-function-gradient``.

Instructor material, never in the students' wheel. ``load_exercises``
(:mod:`rlfound.grading.authoring.spec`) appends them to the public checks of the
specification of the same file name in ``rlfound/grading/authoring/exercises/``. Their inputs
come from the course's grading seed.
"""

from rlfound.grading.authoring.exercises.score_function_gradient import (
    bandit_objective,
    random_bandits,
)
from rlfound.grading.authoring.spec import (
    Compare,
    Gradient,
)

CHECKS = [
    Gradient(
        name="graded-finite-differences",
        function="bandit_gradient",
        objective=bandit_objective,
        wrt="logits",
        inputs=random_bandits,
        public=False,
        description="Finite differences on bandits the student has not seen.",
    ),
    Compare(
        name="graded-reference",
        function="bandit_gradient",
        inputs=random_bandits,
        public=False,
        description="The reference on bandits the student has not seen.",
    ),
]
