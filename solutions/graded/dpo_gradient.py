"""Graded-only checks of the book exercise ``dpo-gradient``.

Instructor material, never in the students' wheel. ``load_exercises``
(:mod:`rlfound.grading.authoring.spec`) appends them to the public checks of the
specification of the same file name in ``rlfound/grading/authoring/exercises/``. Their inputs
come from the course's grading seed.
"""

from rlfound.grading.authoring.exercises.dpo_gradient import (
    dpo_case,
    dpo_objective,
    large_logits,
    partial_coverage,
    unpaired_get_zero,
)
from rlfound.grading.authoring.spec import (
    Compare,
    Gradient,
    Property,
)


def unseen_cases(rng):
    """Larger policies and data sets the student has not seen."""
    return [dpo_case(rng, size, pairs) for size, pairs in ((12, 40), (30, 100), (7, 1))]


CHECKS = [
    Compare(
        name="graded-loss",
        function="dpo_loss",
        inputs=unseen_cases,
        public=False,
        description="The loss on policies and data sets the student has not seen.",
    ),
    Compare(
        name="graded-gradient",
        function="dpo_logit_gradient",
        inputs=unseen_cases,
        points=2,
        public=False,
        description="The gradient on policies and data sets the student has not seen.",
    ),
    Gradient(
        name="graded-finite-differences",
        function="dpo_logit_gradient",
        objective=dpo_objective,
        wrt="logits",
        inputs=unseen_cases,
        public=False,
        description="Finite differences on inputs the student has not seen.",
    ),
    Property(
        name="graded-unpaired-responses",
        function="dpo_logit_gradient",
        inputs=partial_coverage,
        holds=unpaired_get_zero,
        public=False,
        description=(
            "Exactly zero gradient for unpaired responses (finite differences for the "
            "others), on unseen inputs."
        ),
    ),
    Compare(
        name="graded-large-logits",
        function="dpo_logit_gradient",
        inputs=large_logits,
        public=False,
        description="Huge logits and margins, on unseen inputs.",
    ),
]
