"""Graded-only checks of the book exercise ``ppo-clip``.

Instructor material, never in the students' wheel. ``load_exercises``
(:mod:`rlfound.grading.authoring.spec`) appends them to the public checks of the
specification of the same file name in ``rlfound/grading/authoring/exercises/``. Their inputs
come from the course's grading seed.
"""

from rlfound.grading.authoring.exercises.ppo_clip import case, surrogate_sum
from rlfound.grading.authoring.spec import (
    Compare,
    Gradient,
)


def unseen_batches(rng):
    """Larger batches and clip ranges the student has not seen."""
    return [
        case(rng, (64, 32), float(rng.uniform(0.05, 0.3)), float(rng.uniform(0.05, 0.5))),
        case(rng, (500,), 0.2, 0.28),
    ]


CHECKS = [
    Compare(
        name="graded-surrogate-values",
        function="clipped_surrogate",
        inputs=unseen_batches,
        public=False,
        description="The objective on batches the student has not seen.",
    ),
    Gradient(
        name="graded-finite-differences",
        function="clipped_surrogate_grad",
        objective=surrogate_sum,
        wrt="log_ratio",
        inputs=unseen_batches,
        points=2,
        public=False,
        description="Central differences on batches the student has not seen.",
    ),
    Compare(
        name="graded-gradient-values",
        function="clipped_surrogate_grad",
        inputs=unseen_batches,
        public=False,
        description="The derivative on batches the student has not seen.",
    ),
]
