"""Convention and bad-input tables of :mod:`rlfound.ppo` (see :mod:`tests.library.tables`)."""

from __future__ import annotations

import math

import numpy as np

from rlfound import ppo
from tests.library.tables.kinds import ARRAY, FLOAT, Example, above_zero, case

NAN, INF = math.nan, math.inf

RATIO = np.array([[0.5, 1.1, 1.5], [1.5, 0.9, 3.5]])
ADVANTAGES = np.array([[1.0, 1.0, 1.0], [-1.0, -0.5, -2.0]])
MASK = np.array([[True, False, True], [True, True, False]])
LOGPROBS = np.log(np.array([[0.5, 0.25, 0.9], [0.1, 0.6, 0.3]]))
OLD_LOGPROBS = np.log(np.array([[0.4, 0.5, 0.6], [0.2, 0.5, 0.3]]))
VALUES = np.array([[1.0, 0.5, -0.2], [0.0, 2.0, 1.0]])
RETURNS = np.array([[0.5, 0.5, 0.0], [1.0, 1.5, 0.0]])
OLD_VALUES = np.array([[0.8, 0.4, 0.0], [0.5, 1.5, 1.2]])

CLIPS = {"clip_low": 0.2, "clip_high": 0.28, "dual_clip": 3.0}
TOKENS = {"logprobs": LOGPROBS, "old_logprobs": OLD_LOGPROBS, "advantages": ADVANTAGES}

EXAMPLES = [
    Example(ppo.clipped_surrogate, {"ratio": RATIO, "advantages": ADVANTAGES, **CLIPS}, ARRAY),
    Example(
        ppo.clipped_surrogate_gradient, {"ratio": RATIO, "advantages": ADVANTAGES, **CLIPS}, ARRAY
    ),
    Example(ppo.clipped_policy_loss, {**TOKENS, "mask": MASK, **CLIPS}, FLOAT),
    Example(ppo.clipped_policy_loss_gradient, {**TOKENS, "mask": MASK, **CLIPS}, ARRAY),
    Example(
        ppo.clip_fractions,
        {"ratio": RATIO, "advantages": ADVANTAGES, "mask": MASK, **CLIPS},
        (FLOAT, FLOAT),
    ),
    Example(
        ppo.value_loss,
        {
            "values": VALUES,
            "returns": RETURNS,
            "mask": MASK,
            "old_values": OLD_VALUES,
            "value_clip": 0.2,
        },
        FLOAT,
    ),
    Example(
        ppo.ppo_total_loss,
        {
            "policy_loss": -0.1,
            "value_loss": 0.4,
            "entropy": 1.2,
            "value_coef": 0.5,
            "entropy_coef": 0.01,
        },
        FLOAT,
    ),
]

R2 = np.array([0.5, 2.0])
A2 = np.array([1.0, -1.0])
LP2 = np.log(np.array([0.5, 0.25]))

VALID = {
    ppo.clipped_surrogate: {"ratio": R2, "advantages": A2},
    ppo.clipped_surrogate_gradient: {"ratio": R2, "advantages": A2},
    ppo.clipped_policy_loss: {"logprobs": LP2, "old_logprobs": LP2, "advantages": A2},
    ppo.clipped_policy_loss_gradient: {"logprobs": LP2, "old_logprobs": LP2, "advantages": A2},
    ppo.clip_fractions: {"ratio": R2, "advantages": A2},
    ppo.value_loss: {"values": R2, "returns": A2},
    ppo.ppo_total_loss: {
        "policy_loss": -0.1,
        "value_loss": 0.4,
        "entropy": 1.2,
        "value_coef": 0.5,
        "entropy_coef": 0.01,
    },
}


def _clip_cases(function):
    """Bad clip ranges: the same messages for every function that takes them."""
    return [
        case(
            function,
            "clip_low",
            "clip_low must be a non-negative finite number; got -0.2",
            clip_low=-0.2,
        ),
        case(
            function,
            "clip_low",
            "clip_low must be in [0, 1) so that 1 - clip_low > 0; got 1.0",
            clip_low=1.0,
        ),
        case(
            function,
            "clip_high",
            "clip_high must be a non-negative finite number; got -0.1",
            clip_high=-0.1,
        ),
        case(
            function,
            "clip_high",
            "clip_high must be a non-negative finite number; got nan",
            clip_high=NAN,
        ),
        case(
            function,
            "dual_clip",
            "dual_clip must be > 1 (a bound on ρ for negative advantages); got 1.0",
            dual_clip=1.0,
        ),
        case(
            function,
            "dual_clip",
            "dual_clip must be a positive finite number; got -3.0",
            dual_clip=-3.0,
        ),
    ]


def _ratio_cases(function):
    return [
        case(
            function,
            "ratio",
            "ratio must be positive (a ratio of two probabilities); got 0.0 at index (1,)",
            ratio=[0.5, 0.0],
        ),
        case(
            function,
            "ratio",
            "ratio must be positive (a ratio of two probabilities); got -1.0 at index (0,)",
            ratio=[-1.0, 1.0],
        ),
        case(function, "ratio", "ratio must be finite; got inf at index (1,)", ratio=[1.0, INF]),
        case(
            function,
            "ratio",
            "ratio must have at least 1 dimension; got shape ()",
            ratio=1.0,
            advantages=1.0,
        ),
        case(
            function,
            "advantages",
            "advantages must have the shape of ratio, (2,); got shape (3,)",
            advantages=[1.0, 2.0, 3.0],
        ),
        case(
            function,
            "advantages",
            "advantages must be finite; got nan at index (0,)",
            advantages=[NAN, 1.0],
        ),
    ]


def _token_cases(function):
    return [
        above_zero(function, "logprobs", [-0.1, 0.5]),
        case(
            function,
            "logprobs",
            "logprobs must be finite; got -inf at index (0,)",
            logprobs=[-INF, -1.0],
        ),
        above_zero(function, "old_logprobs", [0.1, -1.0]),
        case(
            function,
            "old_logprobs",
            "old_logprobs must have the shape of logprobs, shape (2,); got shape (1, 2)",
            old_logprobs=[LP2],
        ),
        case(
            function,
            "advantages",
            "advantages must have the shape of logprobs, (2,); got shape (3,)",
            advantages=[1.0, 2.0, 3.0],
        ),
        case(
            function, "mask", "mask must have shape (2,); got shape (3,)", mask=[True, True, False]
        ),
        case(
            function,
            "mask",
            "mask must select at least one token; got none of 2",
            mask=[False, False],
        ),
        case(
            function,
            "mask",
            "mask must be a boolean (or 0/1) mask; got 0.5 at index (1,)",
            mask=[1.0, 0.5],
        ),
    ]


CASES = [
    *[
        row
        for f in (ppo.clipped_surrogate, ppo.clipped_surrogate_gradient, ppo.clip_fractions)
        for row in (*_ratio_cases(f), *_clip_cases(f))
    ],
    *[
        row
        for f in (ppo.clipped_policy_loss, ppo.clipped_policy_loss_gradient)
        for row in (*_token_cases(f), *_clip_cases(f))
    ],
    case(
        ppo.clip_fractions,
        "mask",
        "mask must have shape (2,); got shape (2, 1)",
        mask=[[True], [False]],
    ),
    # value_loss
    case(
        ppo.value_loss, "values", "values must be finite; got nan at index (0,)", values=[NAN, 1.0]
    ),
    case(
        ppo.value_loss,
        "values",
        "values must have at least 1 dimension; got shape ()",
        values=1.0,
        returns=1.0,
    ),
    case(
        ppo.value_loss,
        "returns",
        "returns must have the shape of values, (2,); got shape (1,)",
        returns=[1.0],
    ),
    case(ppo.value_loss, "mask", "mask must select at least one value; got none of 2", mask=[0, 0]),
    case(ppo.value_loss, "mask", "mask must have shape (2,); got shape (1,)", mask=[True]),
    case(
        ppo.value_loss,
        "old_values",
        "old_values must have the shape of values, (2,); got shape (3,)",
        old_values=[1.0, 2.0, 3.0],
        value_clip=0.2,
    ),
    case(
        ppo.value_loss,
        "old_values",
        "old_values must be given when value_clip is set (the "
        "clip is around the stored predictions); got None",
        value_clip=0.2,
    ),
    case(
        ppo.value_loss,
        "value_clip",
        "value_clip must be a positive finite number; got 0.0",
        old_values=R2,
        value_clip=0.0,
    ),
    case(
        ppo.value_loss,
        "value_clip",
        "value_clip must be a positive finite number; got -0.2",
        old_values=R2,
        value_clip=-0.2,
    ),
    case(
        ppo.value_loss,
        "mode",
        "mode must be 'token-mean' for values of shape (2,); the other aggregations need a "
        "2-D (B, L) batch of sequences; got 'seq-mean-token-mean'",
        mode="seq-mean-token-mean",
    ),
    case(
        ppo.value_loss,
        "mode",
        "mode must be one of",
        values=[[1.0, 2.0]],
        returns=[[0.0, 0.0]],
        mode="sum",
    ),
    case(
        ppo.value_loss,
        "max_length",
        "max_length must",
        values=[[1.0, 2.0]],
        returns=[[0.0, 0.0]],
        mode="dr-grpo",
    ),
    case(
        ppo.value_loss,
        "empty_rows",
        "empty_rows must be one of",
        values=[[1.0, 2.0]],
        returns=[[0.0, 0.0]],
        mode="seq-mean-token-mean",
        empty_rows="drop",
    ),
    # ppo_total_loss
    case(ppo.ppo_total_loss, "policy_loss", "policy_loss must be finite; got nan", policy_loss=NAN),
    case(
        ppo.ppo_total_loss,
        "policy_loss",
        "policy_loss must be a 0-D array; got shape (2,)",
        policy_loss=[0.1, 0.2],
    ),
    case(ppo.ppo_total_loss, "value_loss", "value_loss must be finite; got inf", value_loss=INF),
    case(
        ppo.ppo_total_loss,
        "entropy",
        "entropy must be a non-negative finite number; got -0.5",
        entropy=-0.5,
    ),
    case(
        ppo.ppo_total_loss,
        "value_coef",
        "value_coef must be a non-negative finite number; got -0.5",
        value_coef=-0.5,
    ),
    case(
        ppo.ppo_total_loss,
        "entropy_coef",
        "entropy_coef must be a non-negative finite number; got -0.01 (a negative",
        entropy_coef=-0.01,
    ),
]
