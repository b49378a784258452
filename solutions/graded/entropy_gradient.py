"""Graded-only checks of the book exercise ``entropy-gradient``.

Instructor material, never in the students' wheel. ``load_exercises``
(:mod:`rlfound.grading.authoring.spec`) appends them to the public checks of the
specification of the same file name in ``rlfound/grading/authoring/exercises/``. Their inputs
come from the course's grading seed.
"""

import numpy as np

from rlfound.grading.authoring.exercises.entropy_gradient import total_entropy
from rlfound.grading.authoring.spec import (
    Compare,
    Gradient,
)


def unseen_cases(rng):
    """Larger batches and vocabularies the student has not seen."""
    shapes = ((50,), (8, 30), (2, 5, 3), (16, 2))
    return [{"logits": float(rng.uniform(0.5, 6.0)) * rng.normal(size=shape)} for shape in shapes]


def unseen_extreme_cases(rng):
    """Batches of rows with a huge favorite (up to 1e300) or two huge, close favorites."""
    cases = []
    for shape in ((6, 4), (3, 2, 6)):
        logits = rng.normal(size=shape)
        for index in np.ndindex(shape[:-1]):
            first, second = rng.choice(shape[-1], size=2, replace=False)
            if rng.random() < 0.5:
                big = float(rng.uniform(1e3, 1e6))
                logits[(*index, int(first))] = big
                logits[(*index, int(second))] = big + float(rng.uniform(-2.0, 2.0))
            else:
                logits[(*index, int(first))] = float(rng.uniform(1e3, 1e300))
        cases.append({"logits": logits})
    return cases


CHECKS = [
    Compare(
        name="graded-entropy",
        function="softmax_entropy",
        inputs=unseen_cases,
        public=False,
        description="The entropy on logits the student has not seen.",
    ),
    Compare(
        name="graded-gradient",
        function="softmax_entropy_gradient",
        inputs=unseen_cases,
        points=2,
        public=False,
        description="The gradient on logits the student has not seen.",
    ),
    Gradient(
        name="graded-finite-differences",
        function="softmax_entropy_gradient",
        objective=total_entropy,
        wrt="logits",
        inputs=unseen_cases,
        public=False,
        description="Finite differences on logits the student has not seen.",
    ),
    Compare(
        name="graded-extreme-entropy",
        function="softmax_entropy",
        inputs=unseen_extreme_cases,
        public=False,
        description="Huge logits at unseen positions: the entropy.",
    ),
    Compare(
        name="graded-extreme-gradient",
        function="softmax_entropy_gradient",
        inputs=unseen_extreme_cases,
        points=2,
        public=False,
        description="Huge logits at unseen positions: the gradient.",
    ),
]
