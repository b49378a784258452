"""Convention and bad-input rows for rlfound.constrained (chapter 11)."""

from __future__ import annotations

import math

import numpy as np

from rlfound import constrained
from tests.library.tables.kinds import ARRAY, BOOL_ARRAY, FLOAT, Example, case

NAN, INF = math.nan, math.inf

# A bandit with three actions: utilities, violation probabilities, and its softmax policy's
# exact objectives (for the oracle of primal_dual).
Q = np.array([0.3, 0.8, 0.9])
C = np.array([0.0, 0.04, 0.2])
LOGITS = np.array([0.1, -0.2, 0.3])
REWARD_GRADIENT = np.array([-0.05, 0.02, 0.03])
COST_GRADIENT = np.array([-0.02, -0.01, 0.03])
COST_GRADIENTS = np.stack([COST_GRADIENT, 2.0 * COST_GRADIENT])


def bandit_oracle(logits):
    """J_R, grad J_R, J_C, grad J_C of the softmax policy on the three-action bandit."""
    probs = np.exp(logits - np.max(logits))
    probs /= probs.sum()
    j_r, j_c = float(probs @ Q), float(probs @ C)
    return j_r, probs * (Q - j_r), j_c, probs * (C - j_c)


# A two-step MDP: state 0 acts, state 1 acts, state 2 is terminal.
P = np.zeros((3, 2, 3))
P[0, 0] = [0.0, 1.0, 0.0]
P[0, 1] = [0.0, 0.5, 0.5]
P[1, :, 2] = 1.0
R = np.zeros((3, 2, 3))
R[:, 1, :] = 1.0
COST = np.zeros((3, 2, 3))
COST[:, 1, :] = 1.0
TERMINAL = np.array([False, False, True])
INITIAL = np.array([1.0, 0.0, 0.0])
ALLOWED = np.array([[True, True], [True, False], [True, True]])

VALID = {
    constrained.scalarized_reward: {
        "rewards": np.array([1.0, 0.0]),
        "costs": np.array([[0.3, 0.0], [0.1, 1.0]]),
        "cost_weights": np.array([0.5, 2.0]),
        "reward_weight": 1.0,
    },
    constrained.pareto_mask: {"objectives": np.stack([Q, -C], axis=-1)},
    constrained.lagrangian: {
        "reward_value": 0.8,
        "cost_value": 0.04,
        "multiplier": 2.0,
        "budget": 0.01,
    },
    constrained.lagrangian_gradients: {
        "reward_gradient": REWARD_GRADIENT,
        "cost_gradient": COST_GRADIENT,
        "cost_value": 0.04,
        "multiplier": 2.0,
        "budget": 0.01,
    },
    constrained.multiplier_update: {
        "multiplier": 2.0,
        "cost_value": 0.04,
        "budget": 0.01,
        "multiplier_lr": 10.0,
        "parameterization": "projected",
    },
    constrained.primal_dual_step: {
        "params": LOGITS,
        "multiplier": 1.0,
        "reward_gradient": REWARD_GRADIENT,
        "cost_gradient": COST_GRADIENT,
        "cost_value": 0.04,
        "budget": 0.01,
        "lr": 1.0,
        "multiplier_lr": 2.0,
        "order": "multiplier_first",
        "normalize": False,
        "parameterization": "projected",
    },
    constrained.primal_dual: {
        "oracle": bandit_oracle,
        "params": LOGITS,
        "multiplier": 0.5,
        "budget": 0.05,
        "lr": 1.0,
        "multiplier_lr": 5.0,
        "num_steps": 3,
        "order": "multiplier_first",
        "normalize": False,
        "parameterization": "projected",
    },
    constrained.value_and_gradient: {
        "logits": np.zeros((3, 2)),
        "transition": P,
        "reward": R,
        "initial": INITIAL,
        "gamma": 1.0,
        "terminal": TERMINAL,
    },
    constrained.occupancy_lp: {
        "transition": P,
        "reward": R,
        "cost": COST,
        "initial": INITIAL,
        "gamma": 1.0,
        "budget": 1.0,
        "terminal": TERMINAL,
        "allowed": None,
    },
    constrained.lexicographic_mask: {"costs": C, "utilities": Q, "tolerance": 0.0},
}


EXAMPLES = [
    Example(
        constrained.scalarized_reward,
        {
            "rewards": np.array([1.0, 0.0]),
            "costs": np.array([[0.3, 0.0], [0.1, 1.0]]),
            "cost_weights": np.array([0.5, 2.0]),
            "reward_weight": 1.0,
        },
        ARRAY,
    ),
    Example(
        constrained.scalarized_reward,
        {"rewards": 1.0, "costs": 0.3, "cost_weights": 0.5},
        FLOAT,
    ),
    Example(constrained.pareto_mask, {"objectives": np.stack([Q, -C], axis=-1)}, BOOL_ARRAY),
    Example(
        constrained.lagrangian,
        {"reward_value": 0.8, "cost_value": 0.04, "multiplier": 2.0, "budget": 0.01},
        FLOAT,
    ),
    Example(
        constrained.lagrangian,
        {
            "reward_value": 0.8,
            "cost_value": np.array([0.04, 0.1]),
            "multiplier": np.array([2.0, 0.5]),
            "budget": np.array([0.01, 0.2]),
        },
        FLOAT,
    ),
    Example(
        constrained.lagrangian_gradients,
        {
            "reward_gradient": REWARD_GRADIENT,
            "cost_gradient": COST_GRADIENT,
            "cost_value": 0.04,
            "multiplier": 2.0,
            "budget": 0.01,
        },
        (ARRAY, FLOAT),
    ),
    Example(
        constrained.lagrangian_gradients,
        {
            "reward_gradient": REWARD_GRADIENT,
            "cost_gradient": COST_GRADIENTS,
            "cost_value": np.array([0.04, 0.1]),
            "multiplier": np.array([2.0, 0.5]),
            "budget": np.array([0.01, 0.2]),
        },
        (ARRAY, ARRAY),
    ),
    Example(
        constrained.multiplier_update,
        {**VALID[constrained.multiplier_update], "parameterization": "log"},
        FLOAT,
    ),
    Example(
        constrained.multiplier_update,
        {
            "multiplier": np.array([2.0, 0.0]),
            "cost_value": np.array([0.04, 0.1]),
            "budget": np.array([0.01, 0.2]),
            "multiplier_lr": 10.0,
        },
        ARRAY,
    ),
    Example(
        constrained.primal_dual_step,
        {**VALID[constrained.primal_dual_step], "order": "simultaneous", "normalize": True},
        (ARRAY, FLOAT),
    ),
    Example(
        constrained.primal_dual,
        {**VALID[constrained.primal_dual], "num_steps": 4},
        (ARRAY, ARRAY, ARRAY, ARRAY),
    ),
    Example(
        constrained.value_and_gradient, dict(VALID[constrained.value_and_gradient]), (FLOAT, ARRAY)
    ),
    Example(
        constrained.occupancy_lp,
        {**VALID[constrained.occupancy_lp], "allowed": ALLOWED},
        (ARRAY, ARRAY, FLOAT, FLOAT, FLOAT),
    ),
    Example(
        constrained.occupancy_lp,
        {
            **VALID[constrained.occupancy_lp],
            "cost": np.stack([COST, 0.5 * COST]),
            "gamma": 0.9,
            "budget": np.array([1.0, 0.3]),
        },
        (ARRAY, ARRAY, FLOAT, ARRAY, ARRAY),
    ),
    Example(
        constrained.lexicographic_mask,
        {"costs": C, "utilities": Q, "tolerance": 0.05},
        BOOL_ARRAY,
    ),
]


def _constraint_cases(function):
    """Bad cost_value, multiplier and budget: the checks every constrained function shares."""
    return [
        case(
            function,
            "cost_value",
            "cost_value must be a real number (one constraint) or a 1-D array (one entry per "
            "constraint); got shape (1, 1)",
            cost_value=np.array([[0.04]]),
        ),
        case(function, "cost_value", "cost_value must be finite; got nan", cost_value=NAN),
        case(
            function,
            "multiplier",
            "multiplier must be non-negative, a Lagrange multiplier of an inequality "
            "constraint; got -0.5",
            multiplier=-0.5,
        ),
        case(
            function,
            "multiplier",
            "multiplier must have the shape of cost_value, (); got shape (2,)",
            multiplier=np.array([1.0, 2.0]),
        ),
        case(
            function,
            "budget",
            "budget must hold real numbers; got dtype <U4",
            budget="0.01",
        ),
        case(
            function,
            "budget",
            "budget must have the shape of cost_value, (); got shape (2,)",
            budget=[0.01, 0.02],
        ),
        case(function, "budget", "budget must be finite; got inf", budget=INF),
    ]


_MDP_ARGUMENTS = ("transition", "reward", "initial", "gamma", "terminal")


def _mdp_cases(function):
    """Bad arrays of the tabular MDP, shared by value_and_gradient and occupancy_lp."""
    bad_row = P.copy()
    bad_row[0, 1] = [0.0, 0.5, 0.6]
    return [
        case(
            function,
            "transition",
            "transition must sum to 1 along the last axis; got sum 1.1 at index (0, 1)",
            transition=bad_row,
        ),
        case(
            function,
            "transition",
            "transition must have shape (S, A, S) with S, A >= 1",
            transition=np.zeros((3, 2, 2)),
        ),
        case(
            function,
            "reward",
            "reward must be a 3-D array; got shape (3, 2)",
            reward=np.zeros((3, 2)),
        ),
        case(function, "reward", "reward must be finite; got nan", reward=np.full((3, 2, 3), NAN)),
        case(
            function,
            "initial",
            "initial must sum to 1 along the last axis; got sum 0.5",
            initial=np.array([0.5, 0.0, 0.0]),
        ),
        case(
            function,
            "initial",
            "initial must have one probability per state, shape (3,); got shape (2,)",
            initial=np.array([0.5, 0.5]),
        ),
        case(function, "gamma", "gamma must be in [0, 1]; got 1.5", gamma=1.5),
        case(
            function,
            "terminal",
            "terminal must have shape (3,); got shape (2,)",
            terminal=np.array([False, True]),
        ),
        case(
            function,
            "terminal",
            "terminal must be a boolean (or 0/1) mask; got 2",
            terminal=np.array([0, 0, 2]),
        ),
    ]


CASES = [
    # scalarized_reward
    case(
        constrained.scalarized_reward,
        "rewards",
        "rewards must be finite; got nan at index (1,)",
        rewards=np.array([1.0, NAN]),
    ),
    case(
        constrained.scalarized_reward,
        "rewards",
        "rewards must hold real numbers; got dtype bool",
        rewards=np.array([True, False]),
    ),
    case(
        constrained.scalarized_reward,
        "costs",
        "costs must have the shape of rewards + (M,), shape (2, 2); got shape (2,)",
        costs=np.array([0.3, 0.1]),
    ),
    case(
        constrained.scalarized_reward,
        "costs",
        "costs must have the shape of rewards (one cost), shape (2,); got shape (2, 2)",
        cost_weights=0.5,
    ),
    case(
        constrained.scalarized_reward,
        "cost_weights",
        "cost_weights must be non-negative; got [0.5, -2.0]",
        cost_weights=np.array([0.5, -2.0]),
    ),
    case(
        constrained.scalarized_reward,
        "cost_weights",
        "cost_weights must be a number (one cost) or a 1-D array (one weight per cost); got "
        "shape (1, 2)",
        cost_weights=np.array([[0.5, 2.0]]),
    ),
    case(
        constrained.scalarized_reward,
        "reward_weight",
        "reward_weight must be a non-negative finite number; got -1.0",
        reward_weight=-1.0,
    ),
    case(
        constrained.scalarized_reward,
        "reward_weight",
        "reward_weight must be a real number; got '1'",
        reward_weight="1",
    ),
    # pareto_mask
    case(
        constrained.pareto_mask,
        "objectives",
        "objectives must be a 2-D array; got shape (3,)",
        objectives=Q,
    ),
    case(
        constrained.pareto_mask,
        "objectives",
        "objectives must have at least one candidate (row) and one objective (column); got "
        "shape (0, 2)",
        objectives=np.zeros((0, 2)),
    ),
    case(
        constrained.pareto_mask,
        "objectives",
        "objectives must be finite; got nan at index (0, 0)",
        objectives=np.array([[NAN, 1.0]]),
    ),
    # lagrangian
    case(
        constrained.lagrangian,
        "reward_value",
        "reward_value must be a real scalar; got an array of shape (2,)",
        reward_value=np.array([0.8, 0.1]),
    ),
    case(
        constrained.lagrangian,
        "reward_value",
        "reward_value must be finite; got nan",
        reward_value=NAN,
    ),
    *_constraint_cases(constrained.lagrangian),
    # lagrangian_gradients
    case(
        constrained.lagrangian_gradients,
        "reward_gradient",
        "reward_gradient must have at least 1 dimension; got shape ()",
        reward_gradient=0.1,
    ),
    case(
        constrained.lagrangian_gradients,
        "reward_gradient",
        "reward_gradient must be finite; got inf at index (1,)",
        reward_gradient=np.array([0.0, INF, 0.0]),
    ),
    case(
        constrained.lagrangian_gradients,
        "cost_gradient",
        "cost_gradient must have the shape of reward_gradient, shape (3,); got shape (2, 3)",
        cost_gradient=COST_GRADIENTS,
    ),
    case(
        constrained.lagrangian_gradients,
        "cost_gradient",
        "cost_gradient must have (M,) + the shape of reward_gradient, shape (2, 3); got shape (3,)",
        cost_value=np.array([0.04, 0.1]),
        multiplier=np.array([2.0, 0.5]),
        budget=np.array([0.01, 0.2]),
    ),
    *_constraint_cases(constrained.lagrangian_gradients),
    # multiplier_update
    *_constraint_cases(constrained.multiplier_update),
    case(
        constrained.multiplier_update,
        "multiplier_lr",
        "multiplier_lr must be a non-negative finite number; got -1.0",
        multiplier_lr=-1.0,
    ),
    case(
        constrained.multiplier_update,
        "parameterization",
        "parameterization must be one of ('projected', 'log'); got 'softplus'",
        parameterization="softplus",
    ),
    # primal_dual_step
    case(
        constrained.primal_dual_step,
        "params",
        "params must have the shape of reward_gradient, (3,); got shape (2,)",
        params=np.zeros(2),
    ),
    case(
        constrained.primal_dual_step,
        "reward_gradient",
        "reward_gradient must have at least 1 dimension; got shape ()",
        reward_gradient=0.1,
    ),
    case(
        constrained.primal_dual_step,
        "cost_gradient",
        "cost_gradient must have the shape of reward_gradient, shape (3,); got shape (2,)",
        cost_gradient=np.zeros(2),
    ),
    *_constraint_cases(constrained.primal_dual_step),
    case(
        constrained.primal_dual_step,
        "lr",
        "lr must be a non-negative finite number; got -0.1",
        lr=-0.1,
    ),
    case(
        constrained.primal_dual_step,
        "multiplier_lr",
        "multiplier_lr must be a non-negative finite number; got nan",
        multiplier_lr=NAN,
    ),
    case(
        constrained.primal_dual_step,
        "order",
        "order must be one of ('multiplier_first', 'simultaneous'); got 'policy_first'",
        order="policy_first",
    ),
    case(
        constrained.primal_dual_step,
        "normalize",
        "normalize must be True or False; got 1",
        normalize=1,
    ),
    case(
        constrained.primal_dual_step,
        "parameterization",
        "parameterization must be one of ('projected', 'log'); got 'exp'",
        parameterization="exp",
    ),
    # primal_dual
    case(constrained.primal_dual, "oracle", "oracle must be callable; got 3", oracle=3),
    case(
        constrained.primal_dual,
        "oracle",
        "oracle must return a tuple (reward_value, reward_gradient, cost_value, cost_gradient); "
        "got float",
        oracle=lambda logits: 0.5,
    ),
    case(
        constrained.primal_dual,
        "oracle",
        "oracle must return valid values; got reward_gradient must have the shape of params, "
        "shape (3,); got shape (5,)",
        oracle=lambda logits: (0.0, np.zeros(5), 0.0, np.zeros(5)),
    ),
    case(
        constrained.primal_dual,
        "params",
        "params must have at least 1 dimension; got shape ()",
        params=0.0,
    ),
    case(
        constrained.primal_dual,
        "multiplier",
        "multiplier must be non-negative, a Lagrange multiplier of an inequality constraint; "
        "got -1.0",
        multiplier=-1.0,
    ),
    case(
        constrained.primal_dual,
        "multiplier",
        "multiplier must be a real number (one constraint) or a 1-D array (one entry per "
        "constraint); got shape (1, 1)",
        multiplier=np.zeros((1, 1)),
    ),
    case(
        constrained.primal_dual,
        "budget",
        "budget must have the shape of multiplier, (); got shape (2,)",
        budget=np.array([0.05, 0.1]),
    ),
    case(constrained.primal_dual, "budget", "budget must be finite; got nan", budget=NAN),
    case(
        constrained.primal_dual,
        "lr",
        "lr must be a non-negative finite number; got -1.0",
        lr=-1.0,
    ),
    case(
        constrained.primal_dual,
        "multiplier_lr",
        "multiplier_lr must be a non-negative finite number; got -5.0",
        multiplier_lr=-5.0,
    ),
    case(
        constrained.primal_dual,
        "num_steps",
        "num_steps must be a non-negative integer; got -1",
        num_steps=-1,
    ),
    case(
        constrained.primal_dual,
        "num_steps",
        "num_steps must be a non-negative integer; got 3.0",
        num_steps=3.0,
    ),
    case(
        constrained.primal_dual,
        "order",
        "order must be one of ('multiplier_first', 'simultaneous'); got 'alternating'",
        order="alternating",
    ),
    case(
        constrained.primal_dual,
        "normalize",
        "normalize must be True or False; got 'yes'",
        normalize="yes",
    ),
    case(
        constrained.primal_dual,
        "parameterization",
        "parameterization must be one of ('projected', 'log'); got 'relu'",
        parameterization="relu",
    ),
    *[
        case(
            function,
            "multiplier",
            "multiplier must be positive (the log parameterization), a Lagrange multiplier of "
            "an inequality constraint; got 0.0",
            multiplier=0.0,
            parameterization="log",
        )
        for function in (constrained.multiplier_update, constrained.primal_dual)
    ],
    # value_and_gradient
    case(
        constrained.value_and_gradient,
        "logits",
        "logits must have the (S, A) of transition, shape (3, 2); got shape (2, 2)",
        logits=np.zeros((2, 2)),
    ),
    case(
        constrained.value_and_gradient,
        "logits",
        "logits must be finite; got nan at index (0, 0)",
        logits=np.array([[NAN, 0.0], [0.0, 0.0], [0.0, 0.0]]),
    ),
    *_mdp_cases(constrained.value_and_gradient),
    # occupancy_lp
    *_mdp_cases(constrained.occupancy_lp),
    case(
        constrained.occupancy_lp,
        "cost",
        "cost must have (S, A, S), or (M, S, A, S) for M budgets, shape (3, 2, 3); got shape "
        "(2, 3, 2, 3)",
        cost=np.stack([COST, COST]),
    ),
    case(
        constrained.occupancy_lp,
        "cost",
        "cost must be finite; got nan at index (0, 0, 0)",
        cost=np.full((3, 2, 3), NAN),
    ),
    case(
        constrained.occupancy_lp,
        "budget",
        "budget must be at least the smallest expected cost any (allowed) policy achieves",
        cost=COST + 1.0,
    ),
    case(
        constrained.occupancy_lp,
        "budget",
        "budget must be a real number (one constraint) or a 1-D array (one entry per "
        "constraint); got shape (1, 1)",
        budget=np.ones((1, 1)),
    ),
    case(
        constrained.occupancy_lp,
        "budget",
        "budget must hold real numbers; got dtype <U3",
        budget="1.0",
    ),
    case(
        constrained.occupancy_lp,
        "allowed",
        "allowed must have shape (3, 2); got shape (3,)",
        allowed=np.ones(3, dtype=bool),
    ),
    case(
        constrained.occupancy_lp,
        "allowed",
        "allowed must leave at least one action in every live state; got none in state 1",
        allowed=np.array([[True, True], [False, False], [True, True]]),
    ),
    # lexicographic_mask
    case(
        constrained.lexicographic_mask,
        "costs",
        "costs must have at least 1 dimension; got shape ()",
        costs=0.1,
    ),
    case(
        constrained.lexicographic_mask,
        "costs",
        "costs must have at least one candidate on the last axis; got shape (0,)",
        costs=np.zeros(0),
        utilities=np.zeros(0),
    ),
    case(
        constrained.lexicographic_mask,
        "utilities",
        "utilities must have the shape of costs, (3,); got shape (2,)",
        utilities=np.array([1.0, 2.0]),
    ),
    case(
        constrained.lexicographic_mask,
        "utilities",
        "utilities must be finite; got nan",
        utilities=np.array([1.0, NAN, 0.0]),
    ),
    case(
        constrained.lexicographic_mask,
        "tolerance",
        "tolerance must be a non-negative finite number; got -0.1",
        tolerance=-0.1,
    ),
]
