"""Graded-only checks of the book exercise ``action-values``.

Instructor material, never in the students' wheel. ``load_exercises``
(:mod:`rlfound.grading.authoring.spec`) appends them to the public checks of the
specification of the same file name in ``rlfound/grading/authoring/exercises/``. Their inputs
come from the course's grading seed.
"""

from rlfound.grading.authoring.exercises.action_values import (
    random_discounted,
    random_episodic,
    satisfies_bellman_q,
)
from rlfound.grading.authoring.spec import (
    Compare,
    Property,
)

CHECKS = [
    Compare(
        name="graded-discounted",
        function="q_values",
        inputs=random_discounted,
        public=False,
        description="The reference on discounted MDPs the student has not seen.",
    ),
    Compare(
        name="graded-episodic",
        function="q_values",
        inputs=random_episodic,
        public=False,
        description="The reference on episodic MDPs the student has not seen.",
    ),
    Property(
        name="graded-bellman-q",
        function="q_values",
        inputs=random_episodic,
        holds=satisfies_bellman_q,
        public=False,
        description="The Bellman equation for q on MDPs the student has not seen.",
    ),
]
