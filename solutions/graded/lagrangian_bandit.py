"""Graded-only checks of the book exercise ``lagrangian-bandit``.

Instructor material, never in the students' wheel. ``load_exercises``
(:mod:`rlfound.grading.authoring.spec`) appends them to the public checks of the
specification of the same file name in ``rlfound/grading/authoring/exercises/``. Their inputs
come from the course's grading seed.
"""

from rlfound.grading.authoring.exercises.lagrangian_bandit import (
    bandit_case,
    lagrangian_objective,
    large_logits,
    update_case,
)
from rlfound.grading.authoring.spec import (
    Compare,
    Gradient,
)


def unseen_bandits(rng):
    """Larger bandits and multipliers the student has not seen."""
    return [bandit_case(rng, size, multiplier=float(rng.uniform(10, 100))) for size in (3, 20, 50)]


def unseen_updates(rng):
    return [update_case(rng) for _ in range(12)]


CHECKS = [
    Compare(
        name="graded-gradient",
        function="bandit_lagrangian_gradient",
        inputs=unseen_bandits,
        points=2,
        public=False,
        description="The gradient on bandits the student has not seen.",
    ),
    Gradient(
        name="graded-finite-differences",
        function="bandit_lagrangian_gradient",
        objective=lagrangian_objective,
        wrt="logits",
        inputs=unseen_bandits,
        public=False,
        description="Finite differences on bandits the student has not seen.",
    ),
    Compare(
        name="graded-lagrangian",
        function="bandit_lagrangian",
        inputs=unseen_bandits,
        public=False,
        description="The Lagrangian on bandits the student has not seen.",
    ),
    Compare(
        name="graded-update",
        function="projected_multiplier_update",
        inputs=unseen_updates,
        public=False,
        description="The projected update on inputs the student has not seen.",
    ),
    Compare(
        name="graded-large-logits",
        function="bandit_lagrangian",
        inputs=large_logits,
        public=False,
        description="The Lagrangian for logits in the hundreds, on unseen inputs.",
    ),
]
