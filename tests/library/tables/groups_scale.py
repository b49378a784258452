"""Convention and bad-input rows for the parts of rlfound.groups added in chapter 7.

The rows of the chapter-3 functions (leave_one_out_advantages, enumerate_group_gradient and
group_normalized_advantages without ``scale``) live in tests/library/test_conventions.py and
tests/library/test_bad_input.py; these add the ``scale`` argument and group_gradient_moments.
"""

from __future__ import annotations

import numpy as np

from rlfound import groups
from tests.library.tables.kinds import ARRAY, FLOAT, Example, case

REWARDS = np.array([[1.0, 0.5, -1.0, 2.0], [0.0, 1.0, 1.0, 0.5]])
PROBS = np.array([0.5, 0.3, 0.2])
OUTCOME_REWARDS = np.array([1.0, 0.0, 0.5])
SCORES = np.array([[0.5, -0.5], [-0.3, 0.3], [0.1, -0.1]])

EXAMPLES = [
    Example(groups.group_normalized_advantages, {"rewards": REWARDS, "scale": "batch"}, ARRAY),
    Example(groups.group_normalized_advantages, {"rewards": REWARDS, "scale": None}, ARRAY),
    Example(
        groups.group_gradient_moments,
        {
            "probs": PROBS,
            "outcome_rewards": OUTCOME_REWARDS,
            "scores": SCORES,
            "group_size": 2,
            "advantage_fn": groups.leave_one_out_advantages,
        },
        (ARRAY, FLOAT, FLOAT),
    ),
]

VALID = {
    groups.group_gradient_moments: {
        "probs": [0.5, 0.5],
        "outcome_rewards": [1.0, 0.0],
        "scores": [[0.5, -0.5], [-0.5, 0.5]],
        "group_size": 2,
        "advantage_fn": groups.leave_one_out_advantages,
    },
}

CASES = [
    # group_normalized_advantages: the scale argument, and the checks that depend on it
    case(
        groups.group_normalized_advantages,
        "scale",
        "scale must be 'group', 'batch' or None; got 'std'",
        scale="std",
    ),
    case(
        groups.group_normalized_advantages,
        "scale",
        "scale must be 'group', 'batch' or None; got 'none'",
        scale="none",
    ),
    case(
        groups.group_normalized_advantages,
        "rewards",
        "rewards must have at least 2 members per group on the last axis; got shape (3, 1)",
        rewards=np.ones((3, 1)),
        scale=None,
    ),
    case(
        groups.group_normalized_advantages,
        "rewards",
        "rewards must be finite; got nan at index (1,)",
        rewards=[1.0, np.nan],
    ),
    case(
        groups.group_normalized_advantages,
        "ddof",
        "ddof must be smaller than the number of rewards in the batch (4); got 4",
        rewards=[[1.0, 2.0], [3.0, 4.0]],
        ddof=4,
        scale="batch",
    ),
    case(
        groups.group_normalized_advantages,
        "eps",
        "eps must be a non-negative finite number; got -0.1",
        eps=-0.1,
        scale="batch",
    ),
    # group_gradient_moments
    case(
        groups.group_gradient_moments,
        "probs",
        "probs must sum to 1",
        probs=[0.5, 0.6],
    ),
    case(
        groups.group_gradient_moments,
        "probs",
        "probs must be a 1-D array; got shape (1, 2)",
        probs=[[0.5, 0.5]],
    ),
    case(
        groups.group_gradient_moments,
        "outcome_rewards",
        "outcome_rewards must have one entry per outcome, shape (2,); got shape (3,)",
        outcome_rewards=[1.0, 0.0, 2.0],
    ),
    case(
        groups.group_gradient_moments,
        "outcome_rewards",
        "outcome_rewards must be finite; got inf at index (0,)",
        outcome_rewards=[np.inf, 0.0],
    ),
    case(
        groups.group_gradient_moments,
        "scores",
        "scores must have one row per outcome, shape (2, ...); got shape (3, 2)",
        scores=np.zeros((3, 2)),
    ),
    case(
        groups.group_gradient_moments,
        "scores",
        "scores must be finite; got nan at index (0, 1)",
        scores=[[0.5, np.nan], [-0.5, 0.5]],
    ),
    case(
        groups.group_gradient_moments,
        "group_size",
        "group_size must be a positive integer; got 0",
        group_size=0,
    ),
    case(
        groups.group_gradient_moments,
        "group_size",
        "group_size must keep the exact enumeration to at most",
        probs=np.full(10, 0.1),
        outcome_rewards=np.zeros(10),
        scores=np.zeros((10, 2)),
        group_size=7,
    ),
    case(
        groups.group_gradient_moments,
        "advantage_fn",
        "advantage_fn must be callable; got 'rloo'",
        advantage_fn="rloo",
    ),
    case(
        groups.group_gradient_moments,
        "advantage_fn",
        "advantage_fn must return 2 finite numbers, shape (2,); got array(",
        advantage_fn=np.sum,
    ),
]
