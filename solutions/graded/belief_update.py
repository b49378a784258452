"""Graded-only checks of the book exercise ``belief-update``.

Instructor material, never in the students' wheel. ``load_exercises``
(:mod:`rlfound.grading.authoring.spec`) appends them to the public checks of the
specification of the same file name in ``rlfound/grading/authoring/exercises/``. Their inputs
come from the course's grading seed.
"""

from rlfound.grading.authoring.exercises.belief_update import bayes_over_state_pairs, random_pomdps
from rlfound.grading.authoring.spec import (
    Compare,
    Property,
)


def larger_pomdps(rng):
    """Larger POMDPs the student has not seen."""
    return random_pomdps(rng, shapes=((6, 3, 5), (8, 2, 3), (3, 4, 6)))


CHECKS = [
    Compare(
        name="graded-pomdps",
        function="belief_update",
        inputs=larger_pomdps,
        public=False,
        points=2,
        description="The reference on POMDPs the student has not seen.",
    ),
    Property(
        name="graded-bayes-rule",
        function="belief_update",
        inputs=larger_pomdps,
        holds=bayes_over_state_pairs,
        public=False,
        description="Bayes' rule on POMDPs the student has not seen.",
    ),
]
