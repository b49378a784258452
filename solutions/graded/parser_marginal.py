"""Graded-only checks of the book exercise ``parser-marginal``.

Instructor material, never in the students' wheel. ``load_exercises``
(:mod:`rlfound.grading.authoring.spec`) appends them to the public checks of the
specification of the same file name in ``rlfound/grading/authoring/exercises/``. Their inputs
come from the course's grading seed.
"""

from rlfound.grading.authoring.exercises.parser_marginal import (
    matches_forward_recursion,
    random_models,
)
from rlfound.grading.authoring.spec import (
    Compare,
    Property,
)


def larger_models(rng):
    """Larger vocabularies and longer responses the student has not seen."""
    return random_models(rng, sizes=((6, 4), (3, 6), (5, 4), (2, 8)))


CHECKS = [
    Compare(
        name="graded-models",
        function="action_probabilities",
        inputs=larger_models,
        public=False,
        points=2,
        description="The reference on larger models the student has not seen.",
    ),
    Property(
        name="graded-forward-recursion",
        function="action_probabilities",
        inputs=larger_models,
        holds=matches_forward_recursion,
        public=False,
        description="The forward recursion on models the student has not seen.",
    ),
]
