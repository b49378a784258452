"""Graded-only checks of the book exercise ``target-action-mask``.

Instructor material, never in the students' wheel. ``load_exercises``
(:mod:`rlfound.grading.authoring.spec`) appends them to the public checks of the
specification of the same file name in ``rlfound/grading/authoring/exercises/``. Their inputs
come from the course's grading seed.
"""

from rlfound.grading.authoring.exercises.target_action_mask import agree, episode, middle_offsets
from rlfound.grading.authoring.spec import (
    Compare,
    Property,
)


def long_episodes(rng):
    return [episode(rng, max_segments=30, max_tokens=20) for _ in range(8)]


def shifted_pairs(rng):
    """Pairs of one episode placed at offsets k and k + 1 of the same row."""
    cases = []
    for _ in range(6):
        case = episode(rng, extra=int(rng.integers(1, 4)), left=False)
        total = int(case["lengths"].sum())
        case["offset"] = int(rng.integers(0, case["length"] - total))
        cases.append(case)
    return cases


CHECKS = [
    Compare(
        name="graded-long-episodes",
        function="target_action_mask",
        inputs=long_episodes,
        points=2,
        public=False,
        description="Long episodes with many segments, on inputs the student has not seen.",
    ),
    Compare(
        name="graded-long-turns",
        function="target_turn_ids",
        inputs=long_episodes,
        points=2,
        public=False,
        description="Turn ids of long episodes, on inputs the student has not seen.",
    ),
    Compare(
        name="graded-middle-offsets",
        function="target_turn_ids",
        inputs=middle_offsets,
        public=False,
        description="Turn ids with the episode anywhere in the row.",
    ),
    Property(
        name="graded-shift",
        function=("target_action_mask", "target_turn_ids"),
        inputs=shifted_pairs,
        holds=agree,
        public=False,
        description="The mask and the turn ids agree on episodes placed mid-row.",
    ),
]
