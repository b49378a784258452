"""Graded-only checks of the book exercise ``group-advantages``.

Instructor material, never in the students' wheel. ``load_exercises``
(:mod:`rlfound.grading.authoring.spec`) appends them to the public checks of the
specification of the same file name in ``rlfound/grading/authoring/exercises/``. Their inputs
come from the course's grading seed.
"""

from rlfound.grading.authoring.exercises.group_advantages import (
    random_batches,
    rloo_identity,
    scaled_edges,
    with_scale,
)
from rlfound.grading.authoring.spec import (
    Compare,
    Property,
)


def larger_batches(rng):
    return random_batches(rng, shapes=((64, 8), (16, 2), (4, 5, 16)))


def scaled_larger(rng):
    return with_scale(larger_batches(rng), rng)


CHECKS = [
    Compare(
        name="graded-rloo",
        function="rloo_advantages",
        inputs=larger_batches,
        public=False,
        description="Larger batches the student has not seen.",
    ),
    Compare(
        name="graded-dr-grpo",
        function="dr_grpo_advantages",
        inputs=larger_batches,
        public=False,
        description="Larger batches the student has not seen.",
    ),
    Compare(
        name="graded-grpo",
        function="grpo_advantages",
        inputs=scaled_larger,
        points=2,
        public=False,
        description="Larger batches with random eps and ddof.",
    ),
    Compare(
        name="graded-batch",
        function="batch_normalized_advantages",
        inputs=scaled_larger,
        points=2,
        public=False,
        description="Larger batches with random eps and ddof.",
    ),
    Compare(
        name="graded-edges",
        function="grpo_advantages",
        inputs=scaled_edges,
        public=False,
        description="Equal groups and N = 2 on inputs the student has not seen.",
    ),
    Compare(
        name="graded-batch-edges",
        function="batch_normalized_advantages",
        inputs=scaled_edges,
        public=False,
        description="Equal groups and N = 2 on inputs the student has not seen.",
    ),
    Property(
        name="graded-rloo-identity",
        function=("rloo_advantages", "dr_grpo_advantages"),
        inputs=larger_batches,
        holds=rloo_identity,
        public=False,
        description="The RLOO identity on inputs the student has not seen.",
    ),
]
