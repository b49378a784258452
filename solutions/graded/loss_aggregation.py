"""Graded-only checks of the book exercise ``loss-aggregation``.

Instructor material, never in the students' wheel. ``load_exercises``
(:mod:`rlfound.grading.authoring.spec`) appends them to the public checks of the
specification of the same file name in ``rlfound/grading/authoring/exercises/``. Their inputs
come from the course's grading seed.
"""

import numpy as np

from rlfound.grading.authoring.exercises.loss_aggregation import (
    CONSTANT,
    PLAIN,
    compare,
    constant_aware,
    empty_rows,
    padded,
    padding_changes_nothing,
    random_batches,
    slug,
    with_max_length,
)
from rlfound.grading.authoring.spec import Property


def padded_larger(rng):
    return padded(rng, shapes=((16, 20), (4, 64)))


def larger_batches(rng):
    return random_batches(rng, shapes=((32, 40), (8, 200), (64, 7)))


def all_masked(rng):
    """No token at all: 0 for the per-sequence and constant reductions, never NaN; then the
    same batch with one token unmasked, whose loss alone makes the result (so that a function
    returning 0 whatever the batch fails)."""
    loss = np.full((3, 4), np.nan)
    mask = np.zeros((3, 4), dtype=bool)
    one_loss, one_mask = loss.copy(), mask.copy()
    row, column = int(rng.integers(0, 3)), int(rng.integers(0, 4))
    one_loss[row, column] = float(rng.choice([-1.0, 1.0]) * rng.uniform(0.5, 3.0))
    one_mask[row, column] = True
    return [{"loss": loss, "mask": mask}, {"loss": one_loss, "mask": one_mask}]


def graded_per_function_checks():
    """The graded Compare checks of every function, on inputs the student has not seen."""
    checks = []
    for function in PLAIN + CONSTANT:
        checks += [
            compare(
                f"graded-{slug(function)}-random",
                function,
                constant_aware(function, larger_batches),
                points=1.5,
                public=False,
                description="Larger random batches the student has not seen.",
            ),
            compare(
                f"graded-{slug(function)}-empty-rows",
                function,
                constant_aware(function, empty_rows),
                public=False,
                description="Mostly empty rows on inputs the student has not seen.",
            ),
        ]
        if function != "token_mean":
            checks.append(
                compare(
                    f"graded-{slug(function)}-all-masked",
                    function,
                    constant_aware(function, all_masked),
                    public=False,
                    description=(
                        "A batch without tokens gives 0, not NaN; with one token, its share."
                    ),
                )
            )
    return checks


CHECKS = [
    *graded_per_function_checks(),
    Property(
        name="graded-padding-invariance",
        function=PLAIN,
        inputs=padded_larger,
        holds=padding_changes_nothing,
        points=2,
        public=False,
        description="Padding invariance on inputs the student has not seen.",
    ),
    Property(
        name="graded-padding-invariance-constant",
        function=CONSTANT,
        inputs=lambda rng: with_max_length(padded_larger(rng), rng),
        holds=padding_changes_nothing,
        points=2,
        public=False,
        description="Padding invariance of the constant reductions, unseen inputs.",
    ),
]
