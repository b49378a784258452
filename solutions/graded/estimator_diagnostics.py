"""Graded-only checks of the book exercise ``estimator-diagnostics``.

Instructor material, never in the students' wheel. ``load_exercises``
(:mod:`rlfound.grading.authoring.spec`) appends them to the public checks of the
specification of the same file name in ``rlfound/grading/authoring/exercises/``. Their inputs
come from the course's grading seed.
"""

from rlfound.grading.authoring.exercises.estimator_diagnostics import (
    critic_cases,
    group_cases,
    huge_weights,
    weight_cases,
)
from rlfound.grading.authoring.spec import (
    Compare,
)

CHECKS = [
    Compare(
        name="graded-ev",
        function="explained_variance",
        inputs=lambda rng: critic_cases(rng, ((40,), (6, 9), (1, 2)), (0.1, 2.0, 0.5)),
        points=2,
        public=False,
        description="Explained variance on inputs the student has not seen.",
    ),
    Compare(
        name="graded-ess",
        function="effective_sample_size",
        inputs=lambda rng: weight_cases(rng, (3, 17, 200)) + huge_weights(rng),
        points=2,
        public=False,
        description="ESS on inputs the student has not seen, including huge weights.",
    ),
    Compare(
        name="graded-all-equal",
        function="fraction_all_equal",
        inputs=lambda rng: group_cases(rng, ((9, 2), (64, 8), (3, 5))),
        points=2,
        public=False,
        description="Fraction of all-equal groups on inputs the student has not seen.",
    ),
]
