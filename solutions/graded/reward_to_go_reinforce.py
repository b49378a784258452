"""Graded-only checks of the book exercise ``reward-to-go-reinforce``.

Instructor material, never in the students' wheel. ``load_exercises``
(:mod:`rlfound.grading.authoring.spec`) appends them to the public checks of the
specification of the same file name in ``rlfound/grading/authoring/exercises/``. Their inputs
come from the course's grading seed.
"""

from rlfound.grading.authoring.exercises.reward_to_go_reinforce import (
    enumerated_cases,
    is_unbiased,
    random_batches,
)
from rlfound.grading.authoring.spec import (
    Compare,
    Property,
)


def long_batches(rng):
    return random_batches(rng, longest=30)


CHECKS = [
    Compare(
        name="graded-batches",
        function="reinforce_estimates",
        inputs=long_batches,
        public=False,
        description="The reference on longer batches the student has not seen.",
    ),
    Property(
        name="graded-unbiased",
        function="reinforce_estimates",
        inputs=enumerated_cases,
        holds=is_unbiased,
        public=False,
        description="Unbiasedness at logits the student has not seen.",
    ),
]
