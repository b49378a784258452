"""Graded-only checks of the book exercise ``gae-timeouts``.

Instructor material, never in the students' wheel. ``load_exercises``
(:mod:`rlfound.grading.authoring.spec`) appends them to the public checks of the
specification of the same file name in ``rlfound/grading/authoring/exercises/``. Their inputs
come from the course's grading seed.
"""

from rlfound.grading.authoring.exercises.gae_timeouts import (
    batch_shapes,
    edge_cases,
    folded_pairs,
    packed_case,
    rows_agree,
)
from rlfound.grading.authoring.spec import (
    Compare,
    Property,
)


def long_batches(rng):
    """Larger batches the student has not seen."""
    return [packed_case(rng, (16, horizon)) for horizon in (1, 64, 200)]


CHECKS = [
    Compare(
        name="graded-long-batches",
        function="gae_with_timeouts",
        inputs=long_batches,
        points=2,
        public=False,
        description="Larger batches with random boundaries the student has not seen.",
    ),
    Compare(
        name="graded-batch-shapes",
        function="gae_with_timeouts",
        inputs=batch_shapes,
        public=False,
        description="Batch shapes on inputs the student has not seen.",
    ),
    Compare(
        name="graded-edge-cases",
        function="gae_with_timeouts",
        inputs=edge_cases,
        public=False,
        description="The edge cases on inputs the student has not seen.",
    ),
    Property(
        name="graded-folding-identity",
        function="gae_with_timeouts",
        inputs=folded_pairs,
        holds=rows_agree,
        public=False,
        description="The folding identity on inputs the student has not seen.",
    ),
]
