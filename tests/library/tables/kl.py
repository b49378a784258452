"""Convention and bad-input tables of :mod:`rlfound.kl` (see :mod:`tests.library.tables`)."""

from __future__ import annotations

import math

import numpy as np

from rlfound import kl
from tests.library.tables.kinds import ARRAY, FLOAT, Example, case

NAN, INF = math.nan, math.inf

PROBS = np.array([0.5, 0.3, 0.2])
REF_PROBS = np.array([0.25, 0.25, 0.5])
PROBS_2D = np.array([[0.5, 0.3, 0.2], [0.1, 0.1, 0.8]])
REF_PROBS_2D = np.array([[0.25, 0.25, 0.5], [0.3, 0.3, 0.4]])
REWARDS = np.array([0.0, 1.0, 0.5])
LOGITS = np.array([0.1, -0.2, 0.3])
REF_LOGITS = np.array([0.0, 0.5, -0.5])
LOGPROBS = np.log([[0.5, 0.2, 0.9], [0.3, 0.3, 0.6]])
REF_LOGPROBS = np.log([[0.25, 0.4, 0.8], [0.3, 0.1, 0.6]])
OLD_LOGPROBS = np.log([[0.4, 0.25, 0.85], [0.35, 0.2, 0.5]])
MASK = np.array([[True, True, False], [True, False, True]])
ACTIONS = np.array([0, 2, 1])
ACTION_REF_LOGPROBS = np.log([0.25, 0.5, 0.25])
CHOSEN = np.array([-1.0, -2.5])
REJECTED = np.array([-2.0, -1.5])
REF_CHOSEN = np.array([-1.5, -2.0])
REF_REJECTED = np.array([-1.5, -2.0])
#: The arguments of the preference losses (DPO, IPO and the DPO gradient).
PAIRS = {
    "chosen_logprobs": CHOSEN,
    "rejected_logprobs": REJECTED,
    "ref_chosen_logprobs": REF_CHOSEN,
    "ref_rejected_logprobs": REF_REJECTED,
    "beta": 0.1,
}

# --- one valid call of every public function, and the kind of what it returns ---------------------

EXAMPLES = [
    Example(kl.kl_divergence, {"probs": PROBS, "ref_probs": REF_PROBS}, FLOAT),
    Example(kl.kl_divergence, {"probs": PROBS_2D, "ref_probs": REF_PROBS_2D}, ARRAY),
    Example(kl.kl_divergence_logits, {"logits": LOGITS, "ref_logits": REF_LOGITS}, FLOAT),
    Example(
        kl.kl_divergence_logits,
        {"logits": np.stack([LOGITS, REF_LOGITS]), "ref_logits": np.zeros((2, 3))},
        ARRAY,
    ),
    Example(kl.kl_logit_gradient, {"logits": LOGITS, "ref_logits": REF_LOGITS}, ARRAY),
    Example(kl.k1, {"logprobs": LOGPROBS, "ref_logprobs": REF_LOGPROBS, "mask": MASK}, ARRAY),
    Example(kl.k2, {"logprobs": LOGPROBS, "ref_logprobs": REF_LOGPROBS, "mask": MASK}, ARRAY),
    Example(kl.k_abs, {"logprobs": LOGPROBS, "ref_logprobs": REF_LOGPROBS, "mask": MASK}, ARRAY),
    Example(kl.k3, {"logprobs": LOGPROBS, "ref_logprobs": REF_LOGPROBS, "mask": MASK}, ARRAY),
    Example(
        kl.sequence_kl,
        {
            "logprobs": LOGPROBS,
            "ref_logprobs": REF_LOGPROBS,
            "mask": MASK,
            "estimator": "k3",
            "length_normalized": True,
        },
        ARRAY,
    ),
    Example(
        kl.sequence_kl,
        {"logprobs": LOGPROBS[0], "ref_logprobs": REF_LOGPROBS[0], "mask": MASK[0]},
        FLOAT,
    ),
    Example(
        kl.importance_weighted_kl,
        {
            "logprobs": LOGPROBS,
            "ref_logprobs": REF_LOGPROBS,
            "old_logprobs": OLD_LOGPROBS,
            "estimator": "k3",
            "mask": MASK,
        },
        ARRAY,
    ),
    Example(
        kl.estimator_logit_gradient,
        {
            "logits": LOGITS,
            "actions": ACTIONS,
            "ref_logprobs": ACTION_REF_LOGPROBS,
            "estimator": "k2",
        },
        ARRAY,
    ),
    Example(
        kl.kl_regularized_optimum,
        {"ref_probs": REF_PROBS, "action_rewards": REWARDS, "beta": 0.5},
        ARRAY,
    ),
    Example(
        kl.kl_regularized_value,
        {"ref_probs": REF_PROBS, "action_rewards": REWARDS, "beta": 0.5},
        FLOAT,
    ),
    Example(
        kl.kl_regularized_value,
        {"ref_probs": REF_PROBS_2D, "action_rewards": np.stack([REWARDS, REWARDS]), "beta": 0.5},
        ARRAY,
    ),
    Example(
        kl.kl_regularized_objective,
        {"probs": PROBS, "ref_probs": REF_PROBS, "action_rewards": REWARDS, "beta": 0.5},
        FLOAT,
    ),
    Example(
        kl.dpo_loss,
        {**PAIRS, "label_smoothing": 0.1},
        ARRAY,
    ),
    Example(
        kl.dpo_loss_gradient,
        {**PAIRS, "label_smoothing": 0.1},
        (ARRAY, ARRAY),
    ),
    Example(
        kl.ipo_loss,
        dict(PAIRS),
        ARRAY,
    ),
]

# --- valid arguments of every public function -----------------------------------------------------

VALID = {
    kl.kl_divergence: {"probs": PROBS, "ref_probs": REF_PROBS},
    kl.kl_divergence_logits: {"logits": LOGITS, "ref_logits": REF_LOGITS},
    kl.kl_logit_gradient: {"logits": LOGITS, "ref_logits": REF_LOGITS},
    kl.k1: {"logprobs": LOGPROBS, "ref_logprobs": REF_LOGPROBS, "mask": None},
    kl.k2: {"logprobs": LOGPROBS, "ref_logprobs": REF_LOGPROBS, "mask": None},
    kl.k3: {"logprobs": LOGPROBS, "ref_logprobs": REF_LOGPROBS, "mask": None},
    kl.k_abs: {"logprobs": LOGPROBS, "ref_logprobs": REF_LOGPROBS, "mask": None},
    kl.sequence_kl: {
        "logprobs": LOGPROBS,
        "ref_logprobs": REF_LOGPROBS,
        "mask": MASK,
        "estimator": "k1",
        "length_normalized": False,
    },
    kl.importance_weighted_kl: {
        "logprobs": LOGPROBS,
        "ref_logprobs": REF_LOGPROBS,
        "old_logprobs": OLD_LOGPROBS,
        "estimator": "k3",
        "mask": None,
    },
    kl.estimator_logit_gradient: {
        "logits": LOGITS,
        "actions": ACTIONS,
        "ref_logprobs": ACTION_REF_LOGPROBS,
        "estimator": "k3",
    },
    kl.kl_regularized_optimum: {"ref_probs": REF_PROBS, "action_rewards": REWARDS, "beta": 0.5},
    kl.kl_regularized_value: {"ref_probs": REF_PROBS, "action_rewards": REWARDS, "beta": 0.5},
    kl.kl_regularized_objective: {
        "probs": PROBS,
        "ref_probs": REF_PROBS,
        "action_rewards": REWARDS,
        "beta": 0.5,
    },
    kl.dpo_loss: dict(PAIRS),
    kl.dpo_loss_gradient: dict(PAIRS),
    kl.ipo_loss: dict(PAIRS),
}

# --- bad input: every argument of every public function -------------------------------------------


def _token_cases(function):
    """The cases shared by the functions that take logprobs, ref_logprobs and mask."""
    return [
        case(
            function,
            "logprobs",
            "logprobs must be log-probabilities (<= 0); got 0.5 at index (0, 1)",
            logprobs=np.array([[-0.1, 0.5, -1.0], [-1.0, -1.0, -1.0]]),
        ),
        case(
            function, "logprobs", "logprobs must be finite; got nan", logprobs=np.full((2, 3), NAN)
        ),
        case(function, "logprobs", "logprobs must have at least 1 dimension", logprobs=-1.0),
        case(
            function,
            "ref_logprobs",
            "ref_logprobs must have the shape of logprobs, shape (2, 3); got shape (3,)",
            ref_logprobs=REF_LOGPROBS[0],
        ),
        case(
            function,
            "ref_logprobs",
            "ref_logprobs must be log-probabilities (<= 0); got 2.0",
            ref_logprobs=np.full((2, 3), 2.0),
        ),
        case(function, "mask", "mask must have shape (2, 3); got shape (3,)", mask=MASK[0]),
        case(
            function,
            "mask",
            "mask must be a boolean (or 0/1) mask; got 0.5",
            mask=np.full((2, 3), 0.5),
        ),
    ]


_DPO_ARRAYS = (
    "chosen_logprobs",
    "rejected_logprobs",
    "ref_chosen_logprobs",
    "ref_rejected_logprobs",
)


def _dpo_cases(function):
    cases = [
        case(function, "beta", "beta must be a positive finite number; got 0.0", beta=0.0),
        case(function, "beta", "beta must be a positive finite number; got -1.0", beta=-1.0),
        case(function, "beta", "beta must be a real number; got '0.1'", beta="0.1"),
    ]
    for name in _DPO_ARRAYS:
        cases.append(
            case(
                function,
                name,
                f"{name} must be log-probabilities (<= 0); got 0.5",
                **{name: np.array([0.5, -1.0])},
            )
        )
        cases.append(
            case(function, name, f"{name} must be finite; got -inf", **{name: [-INF, -1.0]})
        )
    for name in _DPO_ARRAYS[1:]:
        cases.append(
            case(
                function,
                name,
                f"{name} must have the shape of chosen_logprobs, shape (2,); got shape (3,)",
                **{name: np.array([-1.0, -1.0, -1.0])},
            )
        )
    return cases


CASES = [
    # kl_divergence
    case(
        kl.kl_divergence, "probs", "probs must sum to 1 along the last axis", probs=[0.5, 0.6, 0.2]
    ),
    case(
        kl.kl_divergence,
        "probs",
        "probs must be non-negative probabilities",
        probs=[1.2, -0.2, 0.0],
    ),
    case(kl.kl_divergence, "probs", "probs must have at least 1 dimension", probs=1.0),
    case(
        kl.kl_divergence,
        "ref_probs",
        "ref_probs must be positive wherever probs is positive (the support condition); got 0 "
        "at index (2,)",
        ref_probs=[0.5, 0.5, 0.0],
    ),
    case(
        kl.kl_divergence,
        "ref_probs",
        "ref_probs must have the shape of probs, shape (3,); got shape (2,)",
        ref_probs=[0.5, 0.5],
    ),
    case(
        kl.kl_divergence,
        "ref_probs",
        "ref_probs must be finite; got nan",
        ref_probs=[NAN, 0.5, 0.5],
    ),
    # kl_divergence_logits and kl_logit_gradient
    *[
        c
        for function in (kl.kl_divergence_logits, kl.kl_logit_gradient)
        for c in (
            case(function, "logits", "logits must be finite; got inf", logits=[INF, 0.0, 0.0]),
            case(function, "logits", "logits must have at least 1 dimension", logits=0.0),
            case(
                function,
                "ref_logits",
                "ref_logits must have the shape of logits, (3,); got shape (2,)",
                ref_logits=[0.0, 0.0],
            ),
            case(
                function, "ref_logits", "ref_logits must be finite; got nan", ref_logits=[NAN, 0, 0]
            ),
        )
    ],
    # k1, k2, k3
    *_token_cases(kl.k1),
    *_token_cases(kl.k2),
    *_token_cases(kl.k_abs),
    *_token_cases(kl.k3),
    case(
        kl.k3,
        "ref_logprobs",
        "ref_logprobs must not make ref_logprobs - logprobs exceed 709.78",
        logprobs=np.full((2, 3), -800.0),
        ref_logprobs=np.full((2, 3), -1.0),
    ),
    # sequence_kl
    *_token_cases(kl.sequence_kl),
    case(
        kl.sequence_kl,
        "estimator",
        "estimator must be one of ('k1', 'k2', 'k3'); got 'low_var_kl'",
        estimator="low_var_kl",
    ),
    case(
        kl.sequence_kl,
        "length_normalized",
        "length_normalized must be True or False; got 1",
        length_normalized=1,
    ),
    case(
        kl.sequence_kl,
        "mask",
        "mask must select at least one token of every sequence when length_normalized is True",
        mask=np.array([[1, 0, 0], [0, 0, 0]]),
        length_normalized=True,
    ),
    # importance_weighted_kl
    *_token_cases(kl.importance_weighted_kl),
    case(
        kl.importance_weighted_kl,
        "old_logprobs",
        "old_logprobs must have the shape of logprobs, shape (2, 3); got shape (2, 2)",
        old_logprobs=np.zeros((2, 2)),
    ),
    case(
        kl.importance_weighted_kl,
        "old_logprobs",
        "old_logprobs must be log-probabilities (<= 0); got 1.0",
        old_logprobs=np.ones((2, 3)),
    ),
    case(
        kl.importance_weighted_kl,
        "old_logprobs",
        "old_logprobs must not make logprobs - old_logprobs exceed 709.78",
        logprobs=np.zeros((2, 3)),
        old_logprobs=np.full((2, 3), -800.0),
    ),
    case(
        kl.importance_weighted_kl,
        "estimator",
        "estimator must be one of ('k1', 'k2', 'k3'); got 'kl'",
        estimator="kl",
    ),
    # estimator_logit_gradient
    case(
        kl.estimator_logit_gradient,
        "logits",
        "logits must be finite; got nan",
        logits=[NAN, 0.0, 0.0],
    ),
    case(
        kl.estimator_logit_gradient,
        "actions",
        "actions must be in [0, 3); got 3",
        actions=[0, 3, 1],
    ),
    case(
        kl.estimator_logit_gradient,
        "actions",
        "actions must be integer action indices; got 0.5",
        actions=[0.5, 1.0, 2.0],
    ),
    case(
        kl.estimator_logit_gradient,
        "ref_logprobs",
        "ref_logprobs must have the shape of actions, shape (3,); got shape (2,)",
        ref_logprobs=np.log([0.5, 0.5]),
    ),
    case(
        kl.estimator_logit_gradient,
        "ref_logprobs",
        "ref_logprobs must be log-probabilities (<= 0); got 0.5",
        ref_logprobs=[-1.0, 0.5, -1.0],
    ),
    case(
        kl.estimator_logit_gradient,
        "ref_logprobs",
        "ref_logprobs must not make ref_logprobs - log π(actions) exceed 709.78",
        logits=[0.0, 0.0, -2000.0],
        actions=[2, 2, 2],
        ref_logprobs=[-0.1, -0.1, -0.1],
    ),
    case(
        kl.estimator_logit_gradient,
        "estimator",
        "estimator must be one of ('k1', 'k2', 'k3'); got 'k4'",
        estimator="k4",
    ),
    # the regularized optimum, value and objective
    *[
        c
        for function in (
            kl.kl_regularized_optimum,
            kl.kl_regularized_value,
            kl.kl_regularized_objective,
        )
        for c in (
            case(function, "ref_probs", "ref_probs must sum to 1", ref_probs=[0.5, 0.5, 0.5]),
            case(function, "ref_probs", "ref_probs must be finite", ref_probs=[NAN, 0.5, 0.5]),
            case(
                function,
                "action_rewards",
                "action_rewards must have the shape of ref_probs, (3,); got shape (2,)",
                action_rewards=[0.0, 1.0],
            ),
            case(
                function,
                "action_rewards",
                "action_rewards must be finite; got inf",
                action_rewards=[0.0, INF, 0.0],
            ),
            case(function, "beta", "beta must be a positive finite number; got 0.0", beta=0.0),
            case(function, "beta", "beta must be a positive finite number; got -0.5", beta=-0.5),
            case(function, "beta", "beta must be a positive finite number; got inf", beta=INF),
        )
    ],
    case(
        kl.kl_regularized_objective,
        "probs",
        "probs must have the shape of ref_probs, shape (3,); got shape (2,)",
        probs=[0.5, 0.5],
    ),
    case(kl.kl_regularized_objective, "probs", "probs must sum to 1", probs=[0.5, 0.5, 0.5]),
    case(
        kl.kl_regularized_objective,
        "ref_probs",
        "ref_probs must be positive wherever probs is positive (the support condition)",
        ref_probs=[0.5, 0.5, 0.0],
    ),
    # DPO
    *_dpo_cases(kl.dpo_loss),
    *_dpo_cases(kl.dpo_loss_gradient),
    *_dpo_cases(kl.ipo_loss),
    *(
        case(
            function,
            "label_smoothing",
            "label_smoothing must be in [0, 0.5] (above 1/2 the labels would mean the "
            "opposite preference); got 0.6",
            label_smoothing=0.6,
        )
        for function in (kl.dpo_loss, kl.dpo_loss_gradient)
    ),
    *(
        case(
            function,
            "label_smoothing",
            "label_smoothing must be a non-negative",
            label_smoothing=-0.1,
        )
        for function in (kl.dpo_loss, kl.dpo_loss_gradient)
    ),
]
