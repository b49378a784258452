"""Convention and bad-input tables of :mod:`rlfound.entropy` (see :mod:`tests.library.tables`)."""

from __future__ import annotations

import math

import numpy as np

from rlfound import entropy
from tests.library.tables.kinds import ARRAY, FLOAT, Example, above_zero, case

NAN, INF = math.nan, math.inf

TOKEN_LOGITS = np.linspace(-1.0, 1.0, 24).reshape(2, 3, 4)
MASK = np.array([[True, False, True], [False, True, True]])
LOGPROBS = np.log(np.array([[0.5, 0.25, 0.9], [0.1, 1.0, 0.3]]))
ALLOWED = np.array([[True, False, True, True], [False, True, False, False]])
ACTIONS = np.array([[0, 1, -1, 1], [2, 2, 2, -1]])
REWARDS = np.array([[1.0, 0.0, 1.0, 1.0], [0.5, 0.5, 0.5, 0.0]])

EXAMPLES = [
    Example(entropy.categorical_entropy, {"logits": np.array([0.1, -0.2, 0.3]), "axis": -1}, FLOAT),
    Example(entropy.categorical_entropy, {"logits": np.zeros((2, 3)), "axis": 0}, ARRAY),
    Example(entropy.entropy_logit_gradient, {"logits": TOKEN_LOGITS, "axis": 1}, ARRAY),
    Example(
        entropy.distribution_entropy, {"probs": np.array([[0.5, 0.5, 0.0], [0.2, 0.3, 0.5]])}, ARRAY
    ),
    Example(entropy.distribution_entropy, {"probs": np.array([0.25, 0.75])}, FLOAT),
    Example(entropy.token_entropies, {"logits": TOKEN_LOGITS, "mask": MASK}, ARRAY),
    Example(entropy.mean_token_entropy, {"logits": TOKEN_LOGITS, "mask": MASK}, FLOAT),
    Example(entropy.sampled_token_entropy, {"logprobs": LOGPROBS, "mask": MASK}, FLOAT),
    Example(entropy.constrained_probs, {"logits": TOKEN_LOGITS[0, :2], "allowed": ALLOWED}, ARRAY),
    Example(
        entropy.action_entropy,
        {"actions": ACTIONS, "num_actions": 3, "unparsed": "category"},
        ARRAY,
    ),
    Example(entropy.action_entropy, {"actions": ACTIONS[0], "num_actions": 3}, FLOAT),
    Example(
        entropy.unique_successful_strategies,
        {"strategies": ACTIONS, "rewards": REWARDS, "num_strategies": 3, "threshold": 0.5},
        ARRAY,
    ),
    Example(
        entropy.unique_successful_strategies,
        {"strategies": ACTIONS[0], "rewards": REWARDS[0], "num_strategies": 3},
        FLOAT,
    ),
    Example(entropy.group_reward_variance, {"rewards": REWARDS, "ddof": 1}, ARRAY),
    Example(entropy.group_reward_variance, {"rewards": REWARDS[0]}, FLOAT),
]

L2 = np.zeros((2, 3))
T3 = np.zeros((2, 3, 4))
M3 = np.array([[True, True, False], [True, False, True]])
LP2 = np.log(np.array([0.5, 0.25]))

VALID = {
    entropy.categorical_entropy: {"logits": L2, "axis": -1},
    entropy.entropy_logit_gradient: {"logits": L2, "axis": -1},
    entropy.distribution_entropy: {"probs": [0.25, 0.75]},
    entropy.token_entropies: {"logits": T3, "mask": M3},
    entropy.mean_token_entropy: {"logits": T3, "mask": M3},
    entropy.sampled_token_entropy: {"logprobs": LP2, "mask": [True, False]},
    entropy.constrained_probs: {"logits": [0.0, 1.0, 2.0], "allowed": [True, False, True]},
    entropy.action_entropy: {"actions": [0, 1, -1], "num_actions": 2, "unparsed": "exclude"},
    entropy.unique_successful_strategies: {
        "strategies": [0, 1, -1],
        "rewards": [1.0, 0.0, 1.0],
        "num_strategies": 2,
        "threshold": 1.0,
    },
    entropy.group_reward_variance: {"rewards": [1.0, 0.0, 1.0], "ddof": 0},
}


def _logits_cases(function):
    return [
        case(
            function,
            "logits",
            "logits must be finite; got inf at index (1, 2)",
            logits=np.where(np.arange(6).reshape(2, 3) == 5, INF, 0.0),
        ),
        case(function, "logits", "logits must have at least 1 dimension; got shape ()", logits=0.0),
        case(
            function,
            "logits",
            "logits must have at least one category along axis -1; got shape (2, 0)",
            logits=np.zeros((2, 0)),
        ),
        case(function, "logits", "logits must hold real numbers; got dtype bool", logits=[[True]]),
        case(
            function,
            "axis",
            "axis must be in [-2, 2) for logits of shape (2, 3); got 2",
            axis=2,
        ),
        case(function, "axis", "axis must be an integer; got 1.0", axis=1.0),
    ]


def _token_cases(function):
    return [
        case(
            function,
            "logits",
            "logits must have at least 2 dimensions; got shape (4,)",
            logits=np.zeros(4),
            mask=None,
        ),
        case(
            function,
            "logits",
            "logits must be finite; got nan at index (0, 0, 0)",
            logits=np.full((2, 3, 4), NAN),
        ),
        case(
            function,
            "logits",
            "logits must have at least one category along axis -1; got shape (2, 3, 0)",
            logits=np.zeros((2, 3, 0)),
        ),
        case(
            function, "mask", "mask must have shape (2, 3); got shape (2, 4)", mask=np.ones((2, 4))
        ),
        case(
            function,
            "mask",
            "mask must be a boolean (or 0/1) mask; got 2 at index (0, 1)",
            mask=[[1, 2, 0], [1, 1, 1]],
        ),
    ]


CASES = [
    *_logits_cases(entropy.categorical_entropy),
    *_logits_cases(entropy.entropy_logit_gradient),
    case(
        entropy.distribution_entropy,
        "probs",
        "probs must sum to 1 along the last axis; got sum 0.75",
        probs=[0.5, 0.25],
    ),
    case(
        entropy.distribution_entropy,
        "probs",
        "probs must be non-negative probabilities; got -0.5 at index (1,)",
        probs=[1.5, -0.5],
    ),
    case(
        entropy.distribution_entropy,
        "probs",
        "probs must have at least 1 dimension; got shape ()",
        probs=1.0,
    ),
    case(
        entropy.distribution_entropy,
        "probs",
        "probs must be finite; got nan at index (1,)",
        probs=[0.5, NAN],
    ),
    *_token_cases(entropy.token_entropies),
    *_token_cases(entropy.mean_token_entropy),
    case(
        entropy.mean_token_entropy,
        "mask",
        "mask must select at least one position; got none of shape (2, 3)",
        mask=np.zeros((2, 3), dtype=bool),
    ),
    above_zero(entropy.sampled_token_entropy, "logprobs", [-0.1, 0.5]),
    case(
        entropy.sampled_token_entropy,
        "logprobs",
        "logprobs must have at least 1 dimension; got shape ()",
        logprobs=-1.0,
        mask=None,
    ),
    case(
        entropy.sampled_token_entropy,
        "logprobs",
        "logprobs must be finite; got -inf at index (0,)",
        logprobs=[-INF, -1.0],
    ),
    case(
        entropy.sampled_token_entropy,
        "mask",
        "mask must have shape (2,); got shape (3,)",
        mask=[1, 1, 0],
    ),
    case(
        entropy.sampled_token_entropy,
        "mask",
        "mask must select at least one position; got none of shape (2,)",
        mask=[0, 0],
    ),
    case(
        entropy.sampled_token_entropy,
        "mask",
        "mask must be a boolean (or 0/1) mask; got 0.5 at index (0,)",
        mask=[0.5, 1.0],
    ),
    case(
        entropy.constrained_probs,
        "logits",
        "logits must be finite; got inf at index (0,)",
        logits=[INF, 1.0, 2.0],
    ),
    case(
        entropy.constrained_probs,
        "logits",
        "logits must have at least 1 dimension; got shape ()",
        logits=1.0,
        allowed=True,
    ),
    case(
        entropy.constrained_probs,
        "allowed",
        "allowed must allow at least one token per distribution; got none",
        allowed=[False, False, False],
    ),
    case(
        entropy.constrained_probs,
        "allowed",
        "allowed must allow at least one token per distribution; got none at index (1,)",
        logits=np.zeros((2, 3)),
        allowed=[[True, False, False], [False, False, False]],
    ),
    case(
        entropy.constrained_probs,
        "allowed",
        "allowed must have shape (3,); got shape (2,)",
        allowed=[True, True],
    ),
    case(
        entropy.constrained_probs,
        "allowed",
        "allowed must be a boolean (or 0/1) mask; got 2 at index (0,)",
        allowed=[2, 1, 0],
    ),
    case(
        entropy.action_entropy,
        "actions",
        "actions must be in [-1, 2); got 2 at index (1,)",
        actions=[0, 2],
    ),
    case(
        entropy.action_entropy,
        "actions",
        "actions must be in [-1, 2); got -2 at index (0,)",
        actions=[-2, 1],
    ),
    case(
        entropy.action_entropy,
        "actions",
        "actions must be integer action indices; got 0.5 at index (0,)",
        actions=[0.5, 1.0],
    ),
    case(
        entropy.action_entropy,
        "actions",
        "actions must have at least 1 dimension of action indices; got shape ()",
        actions=1,
    ),
    case(
        entropy.action_entropy,
        "actions",
        "actions must have at least 1 rollout per group on the last axis; got shape (2, 0)",
        actions=np.zeros((2, 0), dtype=int),
    ),
    case(
        entropy.action_entropy,
        "num_actions",
        "num_actions must be a positive integer; got 0",
        num_actions=0,
    ),
    case(
        entropy.action_entropy,
        "num_actions",
        "num_actions must be a positive integer; got 2.0",
        num_actions=2.0,
    ),
    case(
        entropy.action_entropy,
        "unparsed",
        "unparsed must be one of ('exclude', 'category'); got 'drop'",
        unparsed="drop",
    ),
    case(
        entropy.unique_successful_strategies,
        "strategies",
        "strategies must be in [-1, 2); got 2 at index (1,)",
        strategies=[0, 2, 1],
    ),
    case(
        entropy.unique_successful_strategies,
        "strategies",
        "strategies must have at least 1 dimension of strategy indices; got shape ()",
        strategies=1,
        rewards=1.0,
    ),
    case(
        entropy.unique_successful_strategies,
        "strategies",
        "strategies must have at least 1 rollout per group on the last axis; got shape (0,)",
        strategies=np.zeros(0, dtype=int),
        rewards=np.zeros(0),
    ),
    case(
        entropy.unique_successful_strategies,
        "rewards",
        "rewards must have the shape of strategies, shape (3,); got shape (2,)",
        rewards=[1.0, 1.0],
    ),
    case(
        entropy.unique_successful_strategies,
        "rewards",
        "rewards must be finite; got nan at index (1,)",
        rewards=[1.0, NAN, 0.0],
    ),
    case(
        entropy.unique_successful_strategies,
        "num_strategies",
        "num_strategies must be a positive integer; got -1",
        num_strategies=-1,
    ),
    case(
        entropy.unique_successful_strategies,
        "threshold",
        "threshold must be finite; got nan",
        threshold=NAN,
    ),
    case(
        entropy.unique_successful_strategies,
        "threshold",
        "threshold must be a 0-D array; got shape (2,)",
        threshold=[1.0, 2.0],
    ),
    case(
        entropy.unique_successful_strategies,
        "threshold",
        "threshold must hold real numbers; got dtype bool",
        threshold=True,
    ),
    case(
        entropy.group_reward_variance,
        "rewards",
        "rewards must have at least 1 dimension; got shape ()",
        rewards=2.0,
    ),
    case(
        entropy.group_reward_variance,
        "rewards",
        "rewards must be finite; got inf at index (1,)",
        rewards=[1.0, INF],
    ),
    case(
        entropy.group_reward_variance,
        "rewards",
        "rewards must have at least 1 member per group on the last axis; got shape (3, 0)",
        rewards=np.zeros((3, 0)),
    ),
    case(
        entropy.group_reward_variance,
        "ddof",
        "ddof must be smaller than the number of rewards per group (1); got 1",
        rewards=[1.0],
        ddof=1,
    ),
    case(
        entropy.group_reward_variance,
        "ddof",
        "ddof must be a non-negative integer; got -1",
        ddof=-1,
    ),
    case(
        entropy.group_reward_variance,
        "ddof",
        "ddof must be a non-negative integer; got 1.0",
        ddof=1.0,
    ),
]
