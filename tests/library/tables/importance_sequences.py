"""Convention and bad-input tables of the chapter-5 additions: the sequence functions of
:mod:`rlfound.importance` and :func:`rlfound.mdp.discounted_occupancy`
(see :mod:`tests.library.tables`).
The rows of ``categorical_entropy`` live with its module, in ``tests/library/tables/entropy.py``."""

from __future__ import annotations

import math

import numpy as np

from rlfound import importance, mdp
from tests.library.tables.kinds import ARRAY, FLOAT, Example, above_zero, case

NAN, INF = math.nan, math.inf

LOGPROBS = np.log(np.array([[0.5, 0.25, 0.9], [0.1, 0.6, 0.3]]))
OLD_LOGPROBS = np.log(np.array([[0.4, 0.5, 0.6], [0.2, 0.5, 0.3]]))
MASK = np.array([[True, False, True], [True, True, False]])
TOKENS = {"logprobs": LOGPROBS, "old_logprobs": OLD_LOGPROBS, "mask": MASK}

# Three states, two actions, state 2 terminal (its rows all zero: they are ignored).
MDP_P = np.zeros((3, 2, 3))
MDP_P[0, 0] = [0.5, 0.5, 0.0]
MDP_P[0, 1] = [0.0, 0.25, 0.75]
MDP_P[1, 0] = [0.5, 0.0, 0.5]
MDP_P[1, 1] = [0.0, 0.0, 1.0]
MDP_POLICY = np.array([[0.5, 0.5], [0.25, 0.75], [0.0, 0.0]])
MDP_TERMINAL = np.array([False, False, True])

EXAMPLES = [
    Example(importance.token_ratios, TOKENS, ARRAY),
    Example(importance.sequence_log_ratio, {**TOKENS, "length_normalized": True}, ARRAY),
    Example(importance.sequence_ratio, {**TOKENS, "length_normalized": False}, ARRAY),
    Example(
        importance.sequence_ratio_variance,
        {"target_probs": np.array([0.2, 0.8]), "behavior_probs": np.array([0.5, 0.5]), "length": 3},
        FLOAT,
    ),
    Example(importance.truncated_ratios, {"ratio": np.array([0.5, 2.0, 4.0]), "cap": 2.0}, ARRAY),
    Example(
        importance.truncated_importance_weights,
        {"logprobs": LOGPROBS, "rollout_logprobs": OLD_LOGPROBS, "cap": 1.5, "mask": MASK},
        ARRAY,
    ),
    Example(
        mdp.discounted_occupancy,
        {
            "transition": MDP_P,
            "policy": MDP_POLICY,
            "initial": np.array([0.6, 0.4, 0.0]),
            "gamma": 0.9,
            "terminal": MDP_TERMINAL,
        },
        ARRAY,
    ),
]

LP2 = np.log(np.array([0.5, 0.25]))
P = np.zeros((2, 2, 2))
P[0, 0] = [0.5, 0.5]
P[0, 1] = [0.0, 1.0]
P[1, :, 1] = 1.0
PI = np.full((2, 2), 0.5)

VALID = {
    importance.token_ratios: {"logprobs": LP2, "old_logprobs": LP2},
    importance.sequence_log_ratio: {"logprobs": LP2, "old_logprobs": LP2},
    importance.sequence_ratio: {"logprobs": LP2, "old_logprobs": LP2},
    importance.sequence_ratio_variance: {
        "target_probs": [0.25, 0.75],
        "behavior_probs": [0.5, 0.5],
        "length": 2,
    },
    importance.truncated_ratios: {"ratio": [0.5, 3.0], "cap": 2.0},
    importance.truncated_importance_weights: {
        "logprobs": LP2,
        "rollout_logprobs": LP2,
        "cap": 2.0,
    },
    mdp.discounted_occupancy: {
        "transition": P,
        "policy": PI,
        "initial": [1.0, 0.0],
        "gamma": 0.9,
        "terminal": [False, True],
    },
}


def _token_cases(function, second="old_logprobs"):
    return [
        above_zero(function, "logprobs", [-0.1, 0.5]),
        case(
            function,
            "logprobs",
            "logprobs must have at least 1 dimension; got shape ()",
            logprobs=-1.0,
        ),
        above_zero(function, second, [0.1, -1.0]),
        case(
            function,
            second,
            f"{second} must be finite; got nan at index (1,)",
            **{second: [-1.0, NAN]},
        ),
        case(
            function,
            second,
            f"{second} must have the shape of logprobs, shape (2,); got shape (3,)",
            **{second: [-1.0, -1.0, -1.0]},
        ),
        case(
            function, "mask", "mask must have shape (2,); got shape (3,)", mask=[True, True, False]
        ),
        case(
            function,
            "mask",
            "mask must be a boolean (or 0/1) mask; got 2 at index (0,)",
            mask=[2, 1],
        ),
    ]


CASES = [
    *_token_cases(importance.token_ratios),
    *[
        row
        for f in (importance.sequence_log_ratio, importance.sequence_ratio)
        for row in (
            *_token_cases(f),
            case(
                f,
                "length_normalized",
                "length_normalized must be True or False; got 1",
                length_normalized=1,
            ),
            case(
                f,
                "mask",
                "mask must select at least one token of every sequence for a "
                "length-normalized ratio; got none in sequence ()",
                mask=[False, False],
                length_normalized=True,
            ),
        )
    ],
    case(
        importance.sequence_log_ratio,
        "mask",
        "mask must select at least one token of every "
        "sequence for a length-normalized ratio; got none in sequence (1,)",
        logprobs=[LP2, LP2],
        old_logprobs=[LP2, LP2],
        mask=[[1, 0], [0, 0]],
        length_normalized=True,
    ),
    case(
        importance.sequence_ratio_variance,
        "target_probs",
        "target_probs must sum to 1 along the last axis; got sum 0.5",
        target_probs=[0.25, 0.25],
    ),
    case(
        importance.sequence_ratio_variance,
        "behavior_probs",
        "behavior_probs must have the actions of target_probs, shape (2,); got shape (3,)",
        behavior_probs=[0.2, 0.3, 0.5],
    ),
    case(
        importance.sequence_ratio_variance,
        "behavior_probs",
        "behavior_probs must be positive "
        "wherever target_probs is positive (the support condition); got 0 at index (1,)",
        behavior_probs=[1.0, 0.0],
    ),
    case(
        importance.sequence_ratio_variance,
        "length",
        "length must be a non-negative integer; got -1",
        length=-1,
    ),
    case(
        importance.sequence_ratio_variance,
        "length",
        "length must be a non-negative integer; got 2.0",
        length=2.0,
    ),
    case(
        importance.truncated_ratios,
        "ratio",
        "ratio must be positive (a ratio of two probabilities); got 0.0 at index (0,)",
        ratio=[0.0, 1.0],
    ),
    case(
        importance.truncated_ratios,
        "ratio",
        "ratio must be finite; got nan at index (1,)",
        ratio=[1.0, NAN],
    ),
    case(
        importance.truncated_ratios,
        "ratio",
        "ratio must have at least 1 dimension; got shape ()",
        ratio=2.0,
    ),
    case(
        importance.truncated_ratios, "cap", "cap must be a positive finite number; got 0.0", cap=0.0
    ),
    case(
        importance.truncated_ratios, "cap", "cap must be a positive finite number; got inf", cap=INF
    ),
    *_token_cases(importance.truncated_importance_weights, "rollout_logprobs"),
    case(
        importance.truncated_importance_weights,
        "cap",
        "cap must be a positive finite number; got -2.0",
        cap=-2.0,
    ),
    # mdp.discounted_occupancy
    case(
        mdp.discounted_occupancy,
        "transition",
        "transition must be finite; got nan at index (0, 1, 0)",
        transition=np.where(np.arange(8).reshape(2, 2, 2) == 2, NAN, P),
    ),
    case(
        mdp.discounted_occupancy,
        "policy",
        "policy must sum to 1 along the last axis; got sum 0.5 at index (0,)",
        policy=[[0.25, 0.25], [0.5, 0.5]],
    ),
    case(
        mdp.discounted_occupancy,
        "initial",
        "initial must sum to 1 along the last axis; got sum 0.5",
        initial=[0.5, 0.0],
    ),
    case(
        mdp.discounted_occupancy,
        "initial",
        "initial must have one probability per state, shape (2,); got shape (3,)",
        initial=[1.0, 0.0, 0.0],
    ),
    case(mdp.discounted_occupancy, "gamma", "gamma must be in [0, 1]; got 1.5", gamma=1.5),
    case(
        mdp.discounted_occupancy,
        "gamma",
        "gamma must be < 1 unless every state can reach a "
        "terminal state; got gamma = 1.0 and state 0 never terminates",
        gamma=1.0,
        terminal=None,
    ),
    case(
        mdp.discounted_occupancy,
        "terminal",
        "terminal must have shape (2,); got shape (1,)",
        terminal=[True],
    ),
]
