"""Graded-only checks of the book exercise ``behavior-kl``.

Instructor material, never in the students' wheel. ``load_exercises``
(:mod:`rlfound.grading.authoring.spec`) appends them to the public checks of the
specification of the same file name in ``rlfound/grading/authoring/exercises/``. Their inputs
come from the course's grading seed.
"""

import numpy as np

from rlfound.grading.authoring.exercises.behavior_kl import (
    random_distributions,
    token_case,
    weighted_is_the_target_kl,
)
from rlfound.grading.authoring.spec import (
    Compare,
    Property,
)


def graded_token_batches(rng):
    return [token_case(rng, shape) for shape in ((16, 40), (3, 1), (5, 2, 9))]


def graded_distributions(rng):
    cases = random_distributions(rng)
    cases.append(  # a behavior policy far from the current one: large weights
        {
            "probs": np.array([0.7, 0.2, 0.1]),
            "behavior_probs": np.array([0.02, 0.08, 0.9]),
            "ref_probs": rng.dirichlet(np.ones(3)),
        }
    )
    return cases


CHECKS = [
    Compare(
        name="graded-token-batches",
        function="weighted_kl_tokens",
        inputs=graded_token_batches,
        points=2,
        public=False,
        description="Larger batches the student has not seen.",
    ),
    Compare(
        name="graded-distributions",
        function="behavior_kl_expectations",
        inputs=graded_distributions,
        points=2,
        public=False,
        description="Distributions the student has not seen, one with large weights.",
    ),
    Property(
        name="graded-weighted-is-target-kl",
        function="behavior_kl_expectations",
        inputs=graded_distributions,
        holds=weighted_is_the_target_kl,
        public=False,
        description="The weighted expectations equal KL(pi || ref) on unseen inputs.",
    ),
]
