"""Graded-only checks of the book exercise ``potential-shaping``.

Instructor material, never in the students' wheel. ``load_exercises``
(:mod:`rlfound.grading.authoring.spec`) appends them to the public checks of the
specification of the same file name in ``rlfound/grading/authoring/exercises/``. Their inputs
come from the course's grading seed.
"""

from rlfound.grading.authoring.exercises.potential_shaping import (
    edge_tables,
    episode_case,
    invariance_tables,
    optimal_values_shift_by_the_potential,
    table_case,
)
from rlfound.grading.authoring.spec import (
    Compare,
    Property,
)


def large_tables(rng):
    """Larger tables the student has not seen."""
    return [table_case(rng, 12, 4, num_terminal=3), table_case(rng, 20, 3, num_terminal=2)]


def long_episodes(rng):
    """Longer episodes the student has not seen."""
    return [episode_case(rng, (8, 50)), episode_case(rng, (120,))]


CHECKS = [
    Compare(
        name="graded-large-tables",
        function="shaped_reward",
        inputs=large_tables,
        public=False,
        description="Larger tables the student has not seen.",
    ),
    Property(
        name="graded-optimal-values-shift",
        function="shaped_reward",
        inputs=invariance_tables,
        holds=optimal_values_shift_by_the_potential,
        points=2,
        public=False,
        description="The invariance on tables the student has not seen.",
    ),
    Compare(
        name="graded-long-episodes",
        function="shaped_episode_rewards",
        inputs=long_episodes,
        public=False,
        description="Longer episodes the student has not seen.",
    ),
    Compare(
        name="graded-edge-tables",
        function="shaped_reward",
        inputs=edge_tables,
        public=False,
        description="The edge cases on inputs the student has not seen.",
    ),
]
