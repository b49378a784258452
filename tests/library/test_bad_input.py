"""Bad input fails loudly: a ValueError whose message starts with the argument's name.

CASES is a table of (function, argument, bad arguments, exact message prefix) (for newer
modules, in their own file under tests/library/tables/). Each call starts from the function's valid
arguments in VALID and changes a few of them. The message
must start with the prefix, which starts with the argument's name, and show what was given
("got ..."). test_every_argument_of_every_public_function_has_a_case makes sure no public
function and none of its arguments is left out.
"""

from __future__ import annotations

import inspect
import math
import re
from typing import Any

import numpy as np
import pytest

from rlfound import (
    advantages,
    bandits,
    distributions,
    episodes,
    gradcheck,
    groups,
    importance,
    mdp,
    policy_gradient,
    pomdp,
    returns,
    tokens,
)
from tests._library import MODULES
from tests.library.tables import collect_dict, collect_list
from tests.library.tables.kinds import above_zero, case

NAN, INF = math.nan, math.inf


def changed(array, index, value):
    """A float copy of ``array`` with one entry replaced."""
    out = np.array(array, dtype=np.float64)
    out[index] = value
    return out


# --- valid arguments ----------------------------------------------------------------------------

R3 = np.array([1.0, 0.0, 2.0])
V4 = np.array([0.5, 1.0, 0.0, 0.3])
LOGITS = np.array([0.1, -0.2, 0.3])
Q = np.array([0.2, 0.5, 1.0])
CHAIN_P = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, 1.0]])
CHAIN_R = np.array([0.0, 1.0, 0.0])
CHAIN_TERMINAL = np.array([False, False, True])

# Two states, two actions; state 1 is terminal.
P = np.zeros((2, 2, 2))
P[0, 0] = [0.5, 0.5]
P[0, 1] = [0.0, 1.0]
P[1, :, 1] = 1.0
RW = np.zeros((2, 2, 2))
RW[0, 1, 1] = 1.0
PI = np.full((2, 2), 0.5)
TERMINAL = np.array([False, True])
INITIAL = np.array([1.0, 0.0])
LOGITS_SA = np.zeros((2, 2))

PACKED = np.ones((2, 4))
NO = np.zeros((2, 4), dtype=bool)
BOTH = changed(NO, (1, 2), 1.0).astype(bool)

TOKEN_LOGITS = np.zeros((2, 3, 4))
TOKENS = np.array([[0, 1, 2], [3, 3, 0]])
LOGPROBS = np.log(np.full((2, 3), 0.25))

DOOR = np.stack([np.eye(2), np.eye(2)[::-1]], axis=1)
SENSOR = np.array([[0.9, 0.1], [0.2, 0.8]])
PERFECT = np.eye(2)
TARGET = np.array([0.25, 0.75])
BEHAVIOR = np.array([0.8, 0.2])


def squares(x):
    return float(np.sum(x**2))


VALID: dict[Any, dict[str, Any]] = {
    returns.discounted_cumsum: {"terms": R3, "discounts": 0.5},
    returns.discounted_returns: {"rewards": R3, "gamma": 0.9},
    returns.packed_discounted_returns: {
        "rewards": PACKED,
        "next_values": PACKED,
        "terminated": NO,
        "truncated": NO,
        "gamma": 0.9,
    },
    distributions.softmax: {"logits": np.zeros((2, 3)), "axis": -1},
    distributions.log_softmax: {"logits": np.zeros((2, 3)), "axis": -1},
    distributions.categorical_score: {"logits": LOGITS, "actions": 1},
    mdp.evaluate_policy: {
        "transition_pi": CHAIN_P,
        "reward_pi": CHAIN_R,
        "gamma": 0.9,
        "terminal": CHAIN_TERMINAL,
    },
    mdp.bellman_residual: {
        "values": np.zeros(3),
        "transition_pi": CHAIN_P,
        "reward_pi": CHAIN_R,
        "gamma": 0.9,
    },
    mdp.tiny_chain: {"gamma": 0.9},
    mdp.policy_transition_and_reward: {
        "transition": P,
        "reward": RW,
        "policy": PI,
        "terminal": TERMINAL,
    },
    **{
        function: {"transition": P, "reward": RW, "policy": PI, "gamma": 0.9, "terminal": TERMINAL}
        for function in (mdp.state_values, mdp.action_values, mdp.advantage_values)
    },
    bandits.bandit_objective: {"logits": LOGITS, "action_rewards": Q},
    bandits.exact_bandit_gradient: {"logits": LOGITS, "action_rewards": Q},
    bandits.reinforce_gradient_estimate: {
        "logits": LOGITS,
        "actions": [0, 1],
        "rewards": [1.0, 0.0],
        "baseline": 0.0,
    },
    **{
        function: {"action_rewards": Q, "num_steps": 2, "batch_size": 4, "lr": 0.2, "rng": 0}
        for function in (bandits.reinforce_bandit_history, bandits.reinforce_bandit)
    },
    importance.importance_ratios: {
        "actions": [0, 1],
        "target_probs": TARGET,
        "behavior_probs": BEHAVIOR,
    },
    **{
        function: {
            "actions": [0, 1],
            "rewards": [1.0, 3.0],
            "target_probs": TARGET,
            "behavior_probs": BEHAVIOR,
        }
        for function in (importance.off_policy_value, importance.weighted_off_policy_value)
    },
    importance.importance_sampling_variance: {
        "target_probs": TARGET,
        "behavior_probs": BEHAVIOR,
        "action_rewards": [1.0, 3.0],
    },
    importance.effective_sample_size: {"weights": [1.0, 3.0]},
    advantages.td_errors: {"rewards": R3, "values": V4, "gamma": 0.9},
    advantages.k_step_advantages: {"rewards": R3, "values": V4, "gamma": 0.9, "k": 2},
    **{
        function: {"rewards": R3, "values": V4, "gamma": 0.9, "lam": 0.5}
        for function in (advantages.gae_recursive, advantages.gae_explicit)
    },
    advantages.packed_gae: {
        "rewards": PACKED,
        "values": PACKED,
        "next_values": PACKED,
        "terminated": NO,
        "truncated": NO,
        "gamma": 0.9,
        "lam": 0.95,
    },
    advantages.whiten_advantages: {"advantages": R3, "mask": [True, True, False]},
    tokens.enumerate_sequences: {"vocab_size": 2, "length": 3},
    tokens.token_logprobs: {"logits": TOKEN_LOGITS, "tokens": TOKENS},
    tokens.sequence_logprob: {"logprobs": LOGPROBS, "mask": None},
    tokens.bigram_logits: {"bigram_table": np.zeros((5, 4)), "tokens": TOKENS},
    tokens.parser_marginal: {
        "sequence_logprobs": np.log([0.5, 0.5]),
        "actions": [0, 1],
        "num_actions": 2,
    },
    tokens.negative_log_likelihood: {"logprobs": LOGPROBS, "mask": None},
    tokens.cross_entropy_logit_gradient: {"logits": np.zeros((2, 3)), "targets": [0, 2]},
    tokens.expand_turn_values_to_tokens: {"turn_values": [1.0, 2.0], "token_turn_ids": [0, 1]},
    pomdp.predict_belief: {"belief": [0.5, 0.5], "action": 0, "transition": DOOR},
    pomdp.correct_belief: {"predicted": [0.5, 0.5], "observation": 0, "observation_model": SENSOR},
    pomdp.belief_update: {
        "belief": [0.5, 0.5],
        "action": 0,
        "observation": 0,
        "transition": DOOR,
        "observation_model": SENSOR,
    },
    **{
        function: {
            "prior": [0.5, 0.5],
            "actions": [0, 0],
            "observations": [0, 0],
            "transition": DOOR,
            "observation_model": SENSOR,
            "initial_observation": None,
        }
        for function in (pomdp.belief_filter, pomdp.belief_by_enumeration)
    },
    episodes.sample_episodes: {
        "transition": P,
        "reward": RW,
        "policy": PI,
        "initial": INITIAL,
        "horizon": 3,
        "num_episodes": 2,
        "terminal": TERMINAL,
        "rng": 0,
    },
    episodes.enumerate_episodes: {
        "transition": P,
        "reward": RW,
        "policy": PI,
        "initial": INITIAL,
        "horizon": 3,
        "terminal": TERMINAL,
    },
    policy_gradient.trajectory_log_probability: {
        "logits": LOGITS_SA,
        "transition": P,
        "initial": INITIAL,
        "states": [0, 0, 1],
        "actions": [0, 1],
        "terminal": TERMINAL,
    },
    policy_gradient.trajectory_score: {"logits": LOGITS_SA, "states": [0, 0, 1], "actions": [0, 1]},
    policy_gradient.expected_return: {
        "logits": LOGITS_SA,
        "transition": P,
        "reward": RW,
        "initial": INITIAL,
        "gamma": 0.9,
        "terminal": TERMINAL,
    },
    policy_gradient.reinforce_trajectory_gradient: {
        "logits": LOGITS_SA,
        "states": [0, 0, 1],
        "actions": [0, 1],
        "rewards": [0.0, 1.0],
        "gamma": 0.9,
        "reward_to_go": True,
        "baseline": None,
    },
    policy_gradient.optimal_state_baseline: {
        "logits": LOGITS_SA,
        "states": [[0, 0, 1], [0, 1, 1]],
        "actions": [[0, 1], [1, -1]],
        "rewards": [[0.0, 1.0], [1.0, 0.0]],
        "gamma": 0.9,
        "weights": [0.5, 0.5],
        "reward_to_go": True,
    },
    groups.leave_one_out_advantages: {"rewards": [1.0, 0.0]},
    groups.group_normalized_advantages: {
        "rewards": [1.0, 2.0],
        "eps": 1e-6,
        "ddof": 0,
        "include_self": True,
    },
    groups.enumerate_group_gradient: {
        "logits": [0.0, 0.0],
        "action_rewards": [1.0, 2.0],
        "group_size": 2,
        "advantage_fn": groups.leave_one_out_advantages,
    },
    gradcheck.numerical_gradient: {"f": squares, "x": [1.0, -2.0], "eps": 1e-6},
    gradcheck.relative_error: {"a": [1.0, 2.0], "b": [1.0, 2.5], "floor": 1e-8},
    gradcheck.check_gradient: {
        "f": squares,
        "grad": lambda x: 2 * x,
        "x": [1.0, -2.0],
        "eps": 1e-6,
        "rtol": 1e-5,
        "atol": 1e-8,
    },
}


# --- the bad calls ------------------------------------------------------------------------------


GAMMA_FUNCTIONS = [
    returns.discounted_returns,
    returns.packed_discounted_returns,
    mdp.evaluate_policy,
    mdp.bellman_residual,
    mdp.tiny_chain,
    mdp.state_values,
    mdp.action_values,
    mdp.advantage_values,
    advantages.td_errors,
    advantages.k_step_advantages,
    advantages.gae_recursive,
    advantages.gae_explicit,
    advantages.packed_gae,
    policy_gradient.expected_return,
    policy_gradient.reinforce_trajectory_gradient,
    policy_gradient.optimal_state_baseline,
]
LAM_FUNCTIONS = [advantages.gae_recursive, advantages.gae_explicit, advantages.packed_gae]
RNG = "rng must be a numpy.random.Generator, a non-negative integer seed or None; got "
TOO_MANY = "must keep the exact enumeration to at most 1000000 items; got "


def _both_flags_case(function):
    """A step both terminated and truncated: the packed-stream functions share the check."""
    return case(
        function,
        "truncated",
        "truncated must be False where terminated is True (a step either ends in a true "
        "terminal state or is cut by a time limit); got both True at index (1, 2)",
        terminated=BOTH,
        truncated=BOTH,
    )


def _impossible_first_observation_case(function):
    """A first observation the prior rules out: both belief functions share the check."""
    return case(
        function,
        "initial_observation",
        "initial_observation must have positive probability under the prior; "
        "got observation 1, which has probability 0",
        prior=[1.0, 0.0],
        observation_model=PERFECT,
        initial_observation=1,
    )


CASES = [
    # gamma and lam, everywhere
    *[case(f, "gamma", "gamma must be in [0, 1]; got 1.5", gamma=1.5) for f in GAMMA_FUNCTIONS],
    *[case(f, "gamma", "gamma must be in [0, 1]; got nan", gamma=NAN) for f in GAMMA_FUNCTIONS],
    case(returns.discounted_returns, "gamma", "gamma must be in [0, 1]; got -0.1", gamma=-0.1),
    case(
        returns.discounted_returns, "gamma", "gamma must be a real number; got '0.9'", gamma="0.9"
    ),
    case(returns.discounted_returns, "gamma", "gamma must be a real number; got True", gamma=True),
    case(
        returns.discounted_returns,
        "gamma",
        "gamma must be a real scalar; got an array of shape (1,)",
        gamma=np.array([0.9]),
    ),
    *[case(f, "lam", "lam must be in [0, 1]; got 1.01", lam=1.01) for f in LAM_FUNCTIONS],
    case(advantages.gae_recursive, "lam", "lam must be in [0, 1]; got inf", lam=INF),
    # returns
    case(
        returns.discounted_cumsum,
        "terms",
        "terms must have at least 1 dimension; got shape ()",
        terms=1.0,
    ),
    case(
        returns.discounted_cumsum,
        "terms",
        "terms must be finite; got nan at index (1,)",
        terms=[1.0, NAN],
    ),
    case(
        returns.discounted_cumsum,
        "terms",
        "terms must be a rectangular array of numbers; got [[1.0], [1.0, 2.0]]",
        terms=[[1.0], [1.0, 2.0]],
    ),
    case(
        returns.discounted_cumsum,
        "terms",
        "terms must hold real numbers; got dtype <U1",
        terms=["a", "b"],
    ),
    case(
        returns.discounted_cumsum,
        "discounts",
        "discounts must have the shape of terms (or no axes), shape (3,); got shape (2,)",
        discounts=[0.5, 0.5],
    ),
    case(
        returns.discounted_cumsum,
        "discounts",
        "discounts must have the shape of terms (or no axes), shape (2, 3); got shape (3,)",
        terms=np.zeros((2, 3)),
        discounts=[0.5, 0.5, 0.5],
    ),
    case(
        returns.discounted_cumsum, "discounts", "discounts must be finite; got inf", discounts=INF
    ),
    *[
        case(
            f,
            "method",
            "method must be one of ('auto', 'loop', 'banded'); got 'fast'",
            method="fast",
        )
        for f in (
            returns.discounted_cumsum,
            returns.packed_discounted_returns,
            advantages.packed_gae,
        )
    ],
    case(
        returns.discounted_cumsum,
        "axis",
        "axis must be an integer in [-1, 1) for arrays of shape (3,); got 1",
        axis=1,
    ),
    *[
        case(
            f,
            "axis",
            f"axis must be an integer in [-2, 2) for arrays of shape (2, 4); got {axis!r}",
            axis=axis,
        )
        for f in (returns.packed_discounted_returns, advantages.packed_gae)
        for axis in (-3, 0.5, True)
    ],
    case(
        returns.discounted_returns,
        "rewards",
        "rewards must be finite; got inf at index (0,)",
        rewards=[INF, 1.0],
    ),
    case(
        returns.discounted_returns,
        "rewards",
        "rewards must hold real numbers; got dtype complex128",
        rewards=[1j],
    ),
    case(
        returns.packed_discounted_returns,
        "rewards",
        "rewards must be finite; got nan at index (1, 2)",
        rewards=changed(PACKED, (1, 2), NAN),
    ),
    case(
        returns.packed_discounted_returns,
        "next_values",
        "next_values must have the shape of rewards, (2, 4); got shape (2, 3)",
        next_values=np.zeros((2, 3)),
    ),
    case(
        returns.packed_discounted_returns,
        "terminated",
        "terminated must have shape (2, 4); got shape (4,)",
        terminated=NO[0],
    ),
    case(
        returns.packed_discounted_returns,
        "terminated",
        "terminated must be a boolean (or 0/1) mask; got 2 at index (0, 0)",
        terminated=NO + 2,
    ),
    case(
        returns.packed_discounted_returns,
        "truncated",
        "truncated must be a boolean (or 0/1) mask; got 0.5 at index (0, 0)",
        truncated=np.full((2, 4), 0.5),
    ),
    _both_flags_case(returns.packed_discounted_returns),
    # distributions
    case(
        distributions.softmax,
        "logits",
        "logits must be finite; got nan at index (0, 1)",
        logits=changed(np.zeros((2, 3)), (0, 1), NAN),
    ),
    case(
        distributions.softmax,
        "logits",
        "logits must have at least 1 dimension; got shape ()",
        logits=1.0,
    ),
    case(
        distributions.softmax,
        "logits",
        "logits must have at least one category along axis -1; got shape (2, 0)",
        logits=np.zeros((2, 0)),
    ),
    case(
        distributions.softmax,
        "axis",
        "axis must be in [-2, 2) for logits of shape (2, 3); got 2",
        axis=2,
    ),
    case(distributions.softmax, "axis", "axis must be an integer; got 1.0", axis=1.0),
    case(
        distributions.log_softmax,
        "logits",
        "logits must be finite; got -inf at index (1, 0)",
        logits=changed(np.zeros((2, 3)), (1, 0), -INF),
    ),
    case(
        distributions.log_softmax,
        "axis",
        "axis must be in [-2, 2) for logits of shape (2, 3); got -3",
        axis=-3,
    ),
    case(
        distributions.categorical_score,
        "logits",
        "logits must be finite; got inf at index (2,)",
        logits=[0.0, 0.0, INF],
    ),
    case(distributions.categorical_score, "actions", "actions must be in [0, 3); got 3", actions=3),
    case(
        distributions.categorical_score,
        "actions",
        "actions must be in [0, 3); got -1 at index (1,)",
        actions=[0, -1],
    ),
    case(
        distributions.categorical_score,
        "actions",
        "actions must be an integer action index; got 1.5",
        actions=1.5,
    ),
    case(
        distributions.categorical_score,
        "actions",
        "actions must have the leading shape of logits, (2,), one action per distribution; "
        "got shape (3,)",
        logits=np.zeros((2, 3)),
        actions=[0, 1, 2],
    ),
    # mdp: reward processes
    case(
        mdp.evaluate_policy,
        "transition_pi",
        "transition_pi must be a square (S, S) matrix; got shape (2, 3)",
        transition_pi=np.full((2, 3), 1 / 3),
    ),
    case(
        mdp.evaluate_policy,
        "transition_pi",
        "transition_pi must be a 2-D array; got shape (3,)",
        transition_pi=[0.0, 1.0, 0.0],
    ),
    case(
        mdp.evaluate_policy,
        "transition_pi",
        "transition_pi must sum to 1 along the last axis; got sum 0.5 at index (0,)",
        transition_pi=changed(CHAIN_P, (0, 1), 0.5),
    ),
    case(
        mdp.evaluate_policy,
        "transition_pi",
        "transition_pi must be non-negative probabilities; got -0.5 at index (0, 0)",
        transition_pi=changed(changed(CHAIN_P, (0, 0), -0.5), (0, 1), 1.5),
    ),
    case(
        mdp.evaluate_policy,
        "reward_pi",
        "reward_pi must have one entry per state, shape (3,); got shape (2,)",
        reward_pi=[0.0, 1.0],
    ),
    case(
        mdp.evaluate_policy,
        "reward_pi",
        "reward_pi must be 0 in terminal states (a terminal state is worth 0); "
        "got 0.5 in terminal state 2",
        reward_pi=[0.0, 1.0, 0.5],
    ),
    case(
        mdp.evaluate_policy,
        "gamma",
        "gamma must be < 1 unless every state can reach a terminal state; "
        "got gamma = 1.0 and state 0 never terminates",
        gamma=1.0,
        terminal=None,
    ),
    case(
        mdp.evaluate_policy,
        "terminal",
        "terminal must have shape (3,); got shape (2,)",
        terminal=[False, True],
    ),
    case(
        mdp.evaluate_policy,
        "terminal",
        "terminal must be a boolean (or 0/1) mask; got 2 at index (2,)",
        terminal=[0, 0, 2],
    ),
    case(
        mdp.bellman_residual,
        "values",
        "values must have one entry per state, shape (3,); got shape (2,)",
        values=[0.0, 0.0],
    ),
    case(
        mdp.bellman_residual,
        "values",
        "values must be finite; got nan at index (2,)",
        values=[0.0, 0.0, NAN],
    ),
    case(
        mdp.bellman_residual,
        "transition_pi",
        "transition_pi must sum to 1 along the last axis; got sum 0.5 at index (1,)",
        transition_pi=changed(CHAIN_P, (1, 2), 0.5),
    ),
    case(
        mdp.bellman_residual,
        "reward_pi",
        "reward_pi must have one entry per state, shape (3,); got shape (4,)",
        reward_pi=np.zeros(4),
    ),
    # mdp: tabular MDPs
    case(
        mdp.policy_transition_and_reward,
        "transition",
        "transition must be a 3-D array; got shape (2, 2)",
        transition=P[0],
    ),
    case(
        mdp.policy_transition_and_reward,
        "transition",
        "transition must have shape (S, A, S) with S, A >= 1, "
        "transition[s, a, s'] = P(s' | s, a); got shape (2, 2, 3)",
        transition=np.full((2, 2, 3), 1 / 3),
    ),
    case(
        mdp.policy_transition_and_reward,
        "transition",
        "transition must sum to 1 along the last axis; got sum 0.75 at index (0, 0)",
        transition=changed(P, (0, 0, 0), 0.25),
    ),
    case(
        mdp.policy_transition_and_reward,
        "transition",
        "transition must be a rectangular array of numbers; got [[[1.0], [0.0, 1.0]]]",
        transition=[[[1.0], [0.0, 1.0]]],
    ),
    case(
        mdp.policy_transition_and_reward,
        "reward",
        "reward must have the shape of transition (S, A, S), shape (2, 2, 2); got shape (2, 2, 1)",
        reward=np.zeros((2, 2, 1)),
    ),
    case(
        mdp.policy_transition_and_reward,
        "policy",
        "policy must have one row π(· | s) per state, shape (2, 2); got shape (1, 2)",
        policy=PI[:1],
    ),
    case(
        mdp.policy_transition_and_reward,
        "policy",
        "policy must be non-negative probabilities; got -0.5 at index (0, 0)",
        policy=[[-0.5, 1.5], [0.5, 0.5]],
    ),
    case(
        mdp.policy_transition_and_reward,
        "terminal",
        "terminal must have shape (2,); got shape (3,)",
        terminal=[False, True, False],
    ),
    case(
        mdp.state_values,
        "transition",
        "transition must be finite; got nan at index (0, 1, 0)",
        transition=changed(P, (0, 1, 0), NAN),
    ),
    case(
        mdp.state_values,
        "reward",
        "reward must be a 3-D array; got shape (2, 2)",
        reward=RW[:, :, 0],
    ),
    case(
        mdp.state_values,
        "policy",
        "policy must sum to 1 along the last axis; got sum 0.5 at index (0,)",
        policy=[[0.25, 0.25], [0.5, 0.5]],
    ),
    case(
        mdp.state_values,
        "gamma",
        "gamma must be < 1 unless every state can reach a terminal state; "
        "got gamma = 1.0 and state 0 never terminates",
        gamma=1.0,
        policy=[[1.0, 0.0], [0.5, 0.5]],
        transition=changed(changed(P, (0, 0, 0), 1.0), (0, 0, 1), 0.0),
    ),
    case(
        mdp.state_values,
        "terminal",
        "terminal must be a boolean (or 0/1) mask; got 0.5 at index (1,)",
        terminal=[0.0, 0.5],
    ),
    case(
        mdp.action_values,
        "reward",
        "reward must be finite; got inf at index (0, 0, 0)",
        reward=changed(RW, (0, 0, 0), INF),
    ),
    case(
        mdp.action_values,
        "transition",
        "transition must be non-negative probabilities; got -0.5 at index (0, 0, 0)",
        transition=changed(changed(P, (0, 0, 0), -0.5), (0, 0, 1), 1.5),
    ),
    case(
        mdp.action_values,
        "policy",
        "policy must be a 2-D array; got shape (2,)",
        policy=[0.5, 0.5],
    ),
    case(
        mdp.action_values,
        "terminal",
        "terminal must have shape (2,); got shape (1,)",
        terminal=[True],
    ),
    case(
        mdp.advantage_values,
        "transition",
        "transition must sum to 1 along the last axis; got sum 0.5 at index (0, 1)",
        transition=changed(P, (0, 1, 1), 0.5),
    ),
    case(
        mdp.advantage_values,
        "reward",
        "reward must have the shape of transition (S, A, S), shape (2, 2, 2); got shape (1, 2, 2)",
        reward=RW[:1],
    ),
    case(
        mdp.advantage_values,
        "policy",
        "policy must be non-negative probabilities; got -0.5 at index (0, 0)",
        policy=[[-0.5, 1.5], [0.5, 0.5]],
    ),
    case(
        mdp.advantage_values,
        "terminal",
        "terminal must have shape (2,); got shape (2, 1)",
        terminal=[[False], [True]],
    ),
    # bandits
    case(
        bandits.bandit_objective,
        "logits",
        "logits must be a 1-D array; got shape (2, 3)",
        logits=np.zeros((2, 3)),
    ),
    case(
        bandits.bandit_objective,
        "action_rewards",
        "action_rewards must have one entry per action, shape (3,); got shape (2,)",
        action_rewards=[0.2, 0.5],
    ),
    case(
        bandits.exact_bandit_gradient,
        "logits",
        "logits must be finite; got nan at index (0,)",
        logits=[NAN, 0.0, 0.0],
    ),
    case(
        bandits.exact_bandit_gradient,
        "action_rewards",
        "action_rewards must be finite; got nan at index (1,)",
        action_rewards=[0.2, NAN, 1.0],
    ),
    case(
        bandits.reinforce_gradient_estimate,
        "logits",
        "logits must be a 1-D array; got shape (1, 3)",
        logits=[LOGITS],
    ),
    case(
        bandits.reinforce_gradient_estimate,
        "actions",
        "actions must be in [0, 3); got 3 at index (1,)",
        actions=[0, 3],
    ),
    case(
        bandits.reinforce_gradient_estimate,
        "actions",
        "actions must be integer action indices; got 0.5 at index (0,)",
        actions=[0.5, 1.0],
    ),
    case(
        bandits.reinforce_gradient_estimate,
        "actions",
        "actions must have at least 1 sampled action; got shape (0,)",
        actions=np.zeros(0, dtype=int),
        rewards=[],
    ),
    case(
        bandits.reinforce_gradient_estimate,
        "rewards",
        "rewards must have one entry per action, shape (2,); got shape (3,)",
        rewards=[1.0, 0.0, 2.0],
    ),
    case(
        bandits.reinforce_gradient_estimate,
        "baseline",
        "baseline must have one entry per action (or no axes), shape (2,); got shape (3,)",
        baseline=np.zeros(3),
    ),
    case(
        bandits.reinforce_gradient_estimate,
        "baseline",
        "baseline must be finite; got nan",
        baseline=NAN,
    ),
    *[
        row
        for f in (bandits.reinforce_bandit_history, bandits.reinforce_bandit)
        for row in (
            case(
                f,
                "action_rewards",
                "action_rewards must be a 1-D array; got shape (2, 3)",
                action_rewards=np.ones((2, 3)),
            ),
            case(
                f,
                "action_rewards",
                "action_rewards must have at least 1 action; got shape (0,)",
                action_rewards=[],
            ),
            case(f, "num_steps", "num_steps must be a positive integer; got 0", num_steps=0),
            case(f, "num_steps", "num_steps must be a positive integer; got 2.5", num_steps=2.5),
            case(f, "batch_size", "batch_size must be a positive integer; got -1", batch_size=-1),
            case(
                f,
                "batch_size",
                "batch_size must be at least 2 with baseline='leave_one_out'; got 1",
                batch_size=1,
                baseline="leave_one_out",
            ),
            case(f, "lr", "lr must be a positive finite number; got 0.0", lr=0.0),
            case(
                f,
                "baseline",
                "baseline must be one of ('mean', 'leave_one_out', 'none'); got 'median'",
                baseline="median",
            ),
            case(f, "rng", RNG + "-1", rng=-1),
            case(f, "rng", RNG + "RandomState", rng=np.random.RandomState(0)),
        )
    ],
    # importance
    case(
        importance.importance_ratios,
        "actions",
        "actions must be in [0, 2); got 2 at index (1,)",
        actions=[0, 2],
    ),
    case(
        importance.importance_ratios,
        "actions",
        "actions must be a 1-D array of action indices; got shape (1, 2)",
        actions=[[0, 1]],
    ),
    case(
        importance.importance_ratios,
        "actions",
        "actions must be a rectangular array of numbers; got [[0], [0, 1]]",
        actions=[[0], [0, 1]],
    ),
    case(
        importance.importance_ratios,
        "target_probs",
        "target_probs must sum to 1 along the last axis; got sum 1.1",
        target_probs=[0.5, 0.6],
    ),
    case(
        importance.importance_ratios,
        "target_probs",
        "target_probs must be a 1-D array; got shape (1, 2)",
        target_probs=[TARGET],
    ),
    case(
        importance.importance_ratios,
        "behavior_probs",
        "behavior_probs must be non-negative probabilities; got -0.1 at index (1,)",
        behavior_probs=[1.1, -0.1],
    ),
    case(
        importance.importance_ratios,
        "behavior_probs",
        "behavior_probs must have the actions of target_probs, shape (2,); got shape (3,)",
        behavior_probs=[0.2, 0.3, 0.5],
    ),
    case(
        importance.importance_ratios,
        "behavior_probs",
        "behavior_probs must be positive for every logged action (the support condition); "
        "got 0 at index (1,)",
        behavior_probs=[1.0, 0.0],
    ),
    *[
        row
        for f in (importance.off_policy_value, importance.weighted_off_policy_value)
        for row in (
            case(
                f,
                "actions",
                "actions must have at least 1 logged action; got shape (0,)",
                actions=[],
                rewards=[],
            ),
            case(
                f,
                "rewards",
                "rewards must have one entry per logged action, shape (2,); got shape (1,)",
                rewards=[1.0],
            ),
            case(f, "rewards", "rewards must be finite; got nan at index (1,)", rewards=[1.0, NAN]),
            case(
                f,
                "target_probs",
                "target_probs must be non-negative probabilities; got -0.25 at index (0,)",
                target_probs=[-0.25, 1.25],
            ),
            case(
                f,
                "behavior_probs",
                "behavior_probs must be positive for every logged action (the support "
                "condition); got 0 at index (0,)",
                behavior_probs=[0.0, 1.0],
            ),
        )
    ],
    case(
        importance.weighted_off_policy_value,
        "target_probs",
        "target_probs must give positive probability to at least one logged action for the "
        "self-normalized estimate; got 0 for all of them",
        target_probs=[0.0, 1.0],
        actions=[0, 0],
    ),
    case(
        importance.importance_sampling_variance,
        "target_probs",
        "target_probs must sum to 1 along the last axis; got sum 0.5",
        target_probs=[0.25, 0.25],
    ),
    case(
        importance.importance_sampling_variance,
        "behavior_probs",
        "behavior_probs must be positive wherever π(a) q(a) is non-zero (the support "
        "condition); got 0 at index (2,)",
        target_probs=[0.0, 0.5, 0.5],
        behavior_probs=[0.5, 0.5, 0.0],
        action_rewards=[1.0, 1.0, 1.0],
    ),
    case(
        importance.importance_sampling_variance,
        "action_rewards",
        "action_rewards must have one entry per action, shape (2,); got shape (3,)",
        action_rewards=[1.0, 3.0, 5.0],
    ),
    case(
        importance.importance_sampling_variance,
        "action_rewards",
        "action_rewards must be finite; got inf at index (1,)",
        action_rewards=[1.0, INF],
    ),
    case(
        importance.effective_sample_size,
        "weights",
        "weights must be non-negative; got -0.5 at index (1,)",
        weights=[1.0, -0.5],
    ),
    case(
        importance.effective_sample_size,
        "weights",
        "weights must not all be zero; got shape (2,)",
        weights=[0.0, 0.0],
    ),
    case(
        importance.effective_sample_size,
        "weights",
        "weights must be a 1-D array; got shape (1, 2)",
        weights=[[1.0, 2.0]],
    ),
    # advantages
    *[
        row
        for f in (
            advantages.td_errors,
            advantages.k_step_advantages,
            advantages.gae_recursive,
            advantages.gae_explicit,
        )
        for row in (
            case(
                f,
                "values",
                "values must have one more entry than rewards along the last axis (T+1 = 4); "
                "got shape (3,)",
                values=V4[:-1],
            ),
            case(
                f,
                "values",
                "values must have the same leading (batch) shape as rewards, (2,); "
                "got shape (1, 4)",
                rewards=np.zeros((2, 3)),
                values=np.zeros((1, 4)),
            ),
            case(
                f,
                "rewards",
                "rewards must have at least 1 dimension; got shape ()",
                rewards=1.0,
            ),
            case(
                f, "rewards", "rewards must be finite; got nan at index (2,)", rewards=[0, 0, NAN]
            ),
        )
    ],
    case(
        advantages.td_errors,
        "values",
        "values must be finite; got inf at index (3,)",
        values=changed(V4, 3, INF),
    ),
    case(advantages.k_step_advantages, "k", "k must be a positive integer; got 0", k=0),
    case(advantages.k_step_advantages, "k", "k must be a positive integer; got 1.5", k=1.5),
    # whiten_advantages
    case(
        advantages.whiten_advantages,
        "advantages",
        "advantages must have at least 1 dimension; got shape ()",
        advantages=1.0,
        mask=None,
    ),
    case(
        advantages.whiten_advantages,
        "advantages",
        "advantages must be finite where mask is True; got nan at index (1,)",
        advantages=[1.0, NAN, 2.0],
        mask=None,
    ),
    case(
        advantages.whiten_advantages,
        "advantages",
        "advantages must be a rectangular array of numbers; got [[1.0, 2.0], [1.0]]",
        advantages=[[1.0, 2.0], [1.0]],
        mask=None,
    ),
    case(
        advantages.whiten_advantages,
        "mask",
        "mask must have shape (3,); got shape (2,)",
        mask=[True, True],
    ),
    case(
        advantages.whiten_advantages,
        "ddof",
        "ddof must be smaller than the number of valid tokens (1); got 1",
        mask=[True, False, False],
        ddof=1,
    ),
    case(
        advantages.whiten_advantages,
        "ddof",
        "ddof must be smaller than the number of valid tokens (0); got 0",
        mask=[False, False, False],
    ),
    case(advantages.whiten_advantages, "ddof", "ddof must be a non-negative integer", ddof=-1),
    case(advantages.whiten_advantages, "eps", "eps must be a non-negative", eps=-1.0),
    case(
        advantages.whiten_advantages,
        "eps",
        "eps must be > 0 when the valid advantages are all equal (their spread is 0); got eps",
        advantages=[2.0, 2.0, 5.0],
        eps=0.0,
    ),
    case(
        advantages.whiten_advantages,
        "eps_form",
        "eps_form must be one of ('variance', 'floor', 'std'); got 'sqrt'",
        eps_form="sqrt",
    ),
    case(
        advantages.whiten_advantages,
        "shift_mean",
        "shift_mean must be True or False; got 1",
        shift_mean=1,
    ),
    case(
        advantages.packed_gae,
        "rewards",
        "rewards must have at least 1 dimension; got shape ()",
        rewards=1.0,
    ),
    case(
        advantages.packed_gae,
        "values",
        "values must have the shape of rewards, (2, 4); got shape (2, 5)",
        values=np.zeros((2, 5)),
    ),
    case(
        advantages.packed_gae,
        "next_values",
        "next_values must be finite; got inf at index (0, 0)",
        next_values=changed(PACKED, (0, 0), INF),
    ),
    case(
        advantages.packed_gae,
        "terminated",
        "terminated must have shape (2, 4); got shape (2, 3)",
        terminated=NO[:, :3],
    ),
    case(
        advantages.packed_gae,
        "terminated",
        "terminated must be a rectangular array of numbers; got [[False], [True, False]]",
        terminated=[[False], [True, False]],
    ),
    _both_flags_case(advantages.packed_gae),
    # tokens
    case(
        tokens.enumerate_sequences,
        "vocab_size",
        "vocab_size must be a positive integer; got 0",
        vocab_size=0,
    ),
    case(
        tokens.enumerate_sequences,
        "length",
        "length must be a non-negative integer; got -1",
        length=-1,
    ),
    case(
        tokens.enumerate_sequences,
        "length",
        "length " + TOO_MANY + "V**L = 10**7 > 1000000 sequences",
        vocab_size=10,
        length=7,
    ),
    case(
        tokens.token_logprobs,
        "logits",
        "logits must have at least 2 dimensions; got shape (4,)",
        logits=np.zeros(4),
        tokens=[0],
    ),
    case(
        tokens.token_logprobs,
        "tokens",
        "tokens must have the leading shape of logits, (2, 3), one token per distribution; "
        "got shape (2, 2)",
        tokens=TOKENS[:, :2],
    ),
    case(
        tokens.token_logprobs,
        "tokens",
        "tokens must be in [0, 4); got 4 at index (1, 0)",
        tokens=TOKENS + 1,
    ),
    above_zero(tokens.sequence_logprob, "logprobs", [-0.5, 0.5]),
    case(
        tokens.sequence_logprob,
        "logprobs",
        "logprobs must have at least 1 dimension; got shape ()",
        logprobs=0.0,
    ),
    case(
        tokens.sequence_logprob,
        "mask",
        "mask must have shape (2, 3); got shape (2, 2)",
        mask=np.ones((2, 2), dtype=bool),
    ),
    case(
        tokens.sequence_logprob,
        "mask",
        "mask must be a boolean (or 0/1) mask; got 0.5 at index (0, 0)",
        mask=np.full((2, 3), 0.5),
    ),
    case(
        tokens.bigram_logits,
        "bigram_table",
        "bigram_table must have shape (V + 1, V) with V >= 1 (one row per previous token plus "
        "a begin-of-sequence row); got shape (4, 4)",
        bigram_table=np.zeros((4, 4)),
    ),
    case(
        tokens.bigram_logits,
        "tokens",
        "tokens must be in [0, 4); got 4 at index (1, 0)",
        tokens=TOKENS + 1,
    ),
    case(
        tokens.bigram_logits,
        "tokens",
        "tokens must have at least 1 dimension of token indices; got shape ()",
        tokens=2,
    ),
    case(
        tokens.parser_marginal,
        "sequence_logprobs",
        "sequence_logprobs must describe distinct outcomes of one distribution (probabilities "
        "summing to at most 1); got total 1.4",
        sequence_logprobs=np.log([0.7, 0.7]),
    ),
    case(
        tokens.parser_marginal,
        "sequence_logprobs",
        "sequence_logprobs must be a 1-D array; got shape (2, 3)",
        sequence_logprobs=LOGPROBS,
    ),
    case(
        tokens.parser_marginal,
        "actions",
        "actions must be in [-1, 2); got 2 at index (1,)",
        actions=[0, 2],
    ),
    case(
        tokens.parser_marginal,
        "actions",
        "actions must have one entry per sequence, shape (2,); got shape (1,)",
        actions=[0],
    ),
    case(
        tokens.parser_marginal,
        "num_actions",
        "num_actions must be a positive integer; got 0",
        num_actions=0,
    ),
    case(
        tokens.negative_log_likelihood,
        "logprobs",
        "logprobs must be finite; got nan at index (1, 1)",
        logprobs=changed(LOGPROBS, (1, 1), NAN),
    ),
    case(
        tokens.negative_log_likelihood,
        "mask",
        "mask must have shape (2, 3); got shape (3,)",
        mask=np.ones(3, dtype=bool),
    ),
    case(
        tokens.cross_entropy_logit_gradient,
        "logits",
        "logits must be finite; got nan at index (0, 1)",
        logits=changed(np.zeros((2, 3)), (0, 1), NAN),
    ),
    case(
        tokens.cross_entropy_logit_gradient,
        "targets",
        "targets must be in [0, 3); got 3 at index (1,)",
        targets=[0, 3],
    ),
    case(
        tokens.cross_entropy_logit_gradient,
        "targets",
        "targets must have the leading shape of logits, (2,), one token per distribution; "
        "got shape (1,)",
        targets=[0],
    ),
    case(
        tokens.expand_turn_values_to_tokens,
        "turn_values",
        "turn_values must be finite; got nan at index (1,)",
        turn_values=[1.0, NAN],
    ),
    case(
        tokens.expand_turn_values_to_tokens,
        "turn_values",
        "turn_values must have at least 1 dimension; got shape ()",
        turn_values=1.0,
        token_turn_ids=[0],
    ),
    case(
        tokens.expand_turn_values_to_tokens,
        "token_turn_ids",
        "token_turn_ids must be in [-1, 2); got 2 at index (1,)",
        token_turn_ids=[0, 2],
    ),
    case(
        tokens.expand_turn_values_to_tokens,
        "token_turn_ids",
        "token_turn_ids must have shape (2,) + (L,), the leading (batch) shape of turn_values "
        "and one more axis; got shape (1, 2)",
        turn_values=np.ones((2, 2)),
        token_turn_ids=[[0, 1]],
    ),
    # pomdp
    case(
        pomdp.predict_belief,
        "belief",
        "belief must sum to 1 along the last axis; got sum 0.9",
        belief=[0.5, 0.4],
    ),
    case(
        pomdp.predict_belief,
        "belief",
        "belief must have one probability per state (2), shape (2,); got shape (3,)",
        belief=[0.5, 0.25, 0.25],
    ),
    case(pomdp.predict_belief, "action", "action must be in [0, 2); got 2", action=2),
    case(
        pomdp.predict_belief,
        "action",
        "action must be a scalar action index; got shape (1,)",
        action=[0],
    ),
    case(
        pomdp.predict_belief,
        "transition",
        "transition must sum to 1 along the last axis; got sum 0.5 at index (0, 0)",
        transition=changed(DOOR, (0, 0, 0), 0.5),
    ),
    case(
        pomdp.correct_belief,
        "predicted",
        "predicted must be non-negative probabilities; got -0.5 at index (0,)",
        predicted=[-0.5, 1.5],
    ),
    case(
        pomdp.correct_belief,
        "observation",
        "observation must be in [0, 2); got 2",
        observation=2,
    ),
    case(
        pomdp.correct_belief,
        "observation",
        "observation must have positive probability under the predicted belief; "
        "got observation 1, which has probability 0",
        predicted=[1.0, 0.0],
        observation=1,
        observation_model=PERFECT,
    ),
    case(
        pomdp.correct_belief,
        "observation_model",
        "observation_model must sum to 1 along the last axis; got sum 1.1 at index (0,)",
        observation_model=[[0.9, 0.2], [0.2, 0.8]],
    ),
    case(
        pomdp.correct_belief,
        "observation_model",
        "observation_model must be a 2-D array; got shape (2,)",
        observation_model=[0.5, 0.5],
    ),
    case(
        pomdp.belief_update,
        "belief",
        "belief must have one probability per state (2), shape (2,); got shape (1,)",
        belief=[1.0],
    ),
    case(pomdp.belief_update, "action", "action must be in [0, 2); got -1", action=-1),
    case(
        pomdp.belief_update,
        "observation",
        "observation must have positive probability under the predicted belief; "
        "got observation 1, which has probability 0",
        belief=[1.0, 0.0],
        observation=1,
        observation_model=PERFECT,
    ),
    case(
        pomdp.belief_update,
        "transition",
        "transition must be a 3-D array; got shape (2, 2)",
        transition=np.eye(2),
    ),
    case(
        pomdp.belief_update,
        "observation_model",
        "observation_model must have shape (S, O) = (2, O) with O >= 1, rows O(· | s); "
        "got shape (3, 2)",
        observation_model=np.full((3, 2), 0.5),
    ),
    *[
        row
        for f in (pomdp.belief_filter, pomdp.belief_by_enumeration)
        for row in (
            case(
                f,
                "prior",
                "prior must sum to 1 along the last axis; got sum 0.5",
                prior=[0.25, 0.25],
            ),
            case(
                f,
                "actions",
                "actions must be in [0, 2); got 3 at index (1,)",
                actions=[0, 3],
            ),
            case(
                f,
                "observations",
                "observations must have one entry per action, shape (2,); got shape (1,)",
                observations=[0],
            ),
            case(
                f,
                "observations",
                "observations must be in [0, 2); got 5 at index (0,)",
                observations=[5, 0],
            ),
            case(
                f,
                "initial_observation",
                "initial_observation must be in [0, 2); got 2",
                initial_observation=2,
            ),
            case(
                f,
                "transition",
                "transition must have shape (S, A, S) with S, A >= 1, "
                "transition[s, a, s'] = P(s' | s, a); got shape (2, 2, 3)",
                transition=np.full((2, 2, 3), 1 / 3),
            ),
            case(
                f,
                "observation_model",
                "observation_model must be finite; got nan at index (1, 1)",
                observation_model=changed(SENSOR, (1, 1), NAN),
            ),
        )
    ],
    case(
        pomdp.belief_filter,
        "observations",
        "observations[1] must have positive probability given the history before it; "
        "got observation 1, which has probability 0",
        prior=[1.0, 0.0],
        observations=[0, 1],
        observation_model=PERFECT,
    ),
    _impossible_first_observation_case(pomdp.belief_filter),
    case(
        pomdp.belief_by_enumeration,
        "observations",
        "observations must have positive probability given the actions and the prior; "
        "got a history, which has probability 0",
        prior=[1.0, 0.0],
        observations=[0, 1],
        observation_model=PERFECT,
    ),
    case(
        pomdp.belief_by_enumeration,
        "observations",
        "observations " + TOO_MANY + "S**(T+1) = 2**21 > 1000000 state sequences",
        actions=[0] * 20,
        observations=[0] * 20,
    ),
    _impossible_first_observation_case(pomdp.belief_by_enumeration),
    # episodes
    *[
        row
        for f in (episodes.sample_episodes, episodes.enumerate_episodes)
        for row in (
            case(
                f,
                "transition",
                "transition must sum to 1 along the last axis; got sum 0.5 at index (0, 1)",
                transition=changed(P, (0, 1, 1), 0.5),
            ),
            case(
                f,
                "reward",
                "reward must have the shape of transition (S, A, S), shape (2, 2, 2); "
                "got shape (2, 2, 3)",
                reward=np.zeros((2, 2, 3)),
            ),
            case(
                f,
                "policy",
                "policy must sum to 1 along the last axis; got sum 1.5 at index (0,)",
                policy=[[1.0, 0.5], [0.0, 0.0]],
            ),
            case(
                f,
                "initial",
                "initial must sum to 1 along the last axis; got sum 0.9",
                initial=[0.5, 0.4],
            ),
            case(
                f,
                "initial",
                "initial must have one probability per state, shape (2,); got shape (3,)",
                initial=[0.5, 0.25, 0.25],
            ),
            case(f, "horizon", "horizon must be a positive integer; got 0", horizon=0),
            case(
                f,
                "terminal",
                "terminal must have shape (2,); got shape (3,)",
                terminal=[0, 1, 0],
            ),
        )
    ],
    case(
        episodes.sample_episodes,
        "num_episodes",
        "num_episodes must be a positive integer; got 0",
        num_episodes=0,
    ),
    case(episodes.sample_episodes, "rng", RNG + "'seed'", rng="seed"),
    case(
        episodes.enumerate_episodes,
        "horizon",
        "horizon " + TOO_MANY + "horizon 30 with",
        horizon=30,
        policy=PI,
        transition=np.full((2, 2, 2), 0.5),
        terminal=None,
    ),
    # policy_gradient
    case(
        policy_gradient.trajectory_log_probability,
        "logits",
        "logits must have the (S, A) of transition, shape (2, 2); got shape (3, 2)",
        logits=np.zeros((3, 2)),
    ),
    case(
        policy_gradient.trajectory_log_probability,
        "transition",
        "transition must sum to 1 along the last axis; got sum 0.75 at index (0, 0)",
        transition=changed(P, (0, 0, 0), 0.25),
    ),
    case(
        policy_gradient.trajectory_log_probability,
        "initial",
        "initial must sum to 1 along the last axis; got sum 0.9",
        initial=[0.5, 0.4],
    ),
    case(
        policy_gradient.trajectory_log_probability,
        "states",
        "states must have one more entry than actions, s_0 to s_T, shape (3,); got shape (2,)",
        states=[0, 1],
    ),
    case(
        policy_gradient.trajectory_log_probability,
        "actions",
        "actions must end when a terminal state is entered (pad with -1); "
        "got action 0 at step 1 in terminal state 1",
        states=[0, 1, 1],
        actions=[1, 0],
    ),
    case(
        policy_gradient.trajectory_log_probability,
        "terminal",
        "terminal must have shape (2,); got shape (1,)",
        terminal=[True],
    ),
    case(
        policy_gradient.trajectory_score,
        "logits",
        "logits must be a 2-D array; got shape (2,)",
        logits=[0.0, 0.0],
    ),
    case(
        policy_gradient.trajectory_score,
        "states",
        "states must be in [0, 2); got 2 at index (2,)",
        states=[0, 0, 2],
    ),
    case(
        policy_gradient.trajectory_score,
        "actions",
        "actions must be -1 only after the episode ended (a trailing block of padding); "
        "got action 1 at index 1 after -1 at index 0",
        actions=[-1, 1],
    ),
    case(
        policy_gradient.trajectory_score,
        "actions",
        "actions must be a 1-D array of action indices; got shape (1, 2)",
        actions=[[0, 1]],
    ),
    case(
        policy_gradient.expected_return,
        "logits",
        "logits must have the (S, A) of transition, shape (2, 2); got shape (2, 3)",
        logits=np.zeros((2, 3)),
    ),
    case(
        policy_gradient.expected_return,
        "transition",
        "transition must be a 3-D array; got shape (2, 2)",
        transition=P[0],
    ),
    case(
        policy_gradient.expected_return,
        "reward",
        "reward must be a 3-D array; got shape (2, 2)",
        reward=RW[0],
    ),
    case(
        policy_gradient.expected_return,
        "initial",
        "initial must have one probability per state, shape (2,); got shape (1,)",
        initial=[1.0],
    ),
    case(
        policy_gradient.expected_return,
        "terminal",
        "terminal must be a boolean (or 0/1) mask; got 3 at index (1,)",
        terminal=[0, 3],
    ),
    case(
        policy_gradient.reinforce_trajectory_gradient,
        "logits",
        "logits must have shape (S, A) with S, A >= 1 (one row per state); got shape (2, 0)",
        logits=np.zeros((2, 0)),
    ),
    case(
        policy_gradient.reinforce_trajectory_gradient,
        "states",
        "states must have one more entry than actions, s_0 to s_T, shape (3,); got shape (4,)",
        states=[0, 0, 1, 1],
    ),
    case(
        policy_gradient.reinforce_trajectory_gradient,
        "actions",
        "actions must be in [-1, 2); got 2 at index (1,)",
        actions=[0, 2],
    ),
    case(
        policy_gradient.reinforce_trajectory_gradient,
        "rewards",
        "rewards must have one entry per action, shape (2,); got shape (1,)",
        rewards=[1.0],
    ),
    case(
        policy_gradient.reinforce_trajectory_gradient,
        "rewards",
        "rewards must be 0 after the episode ended (where actions are -1); got 2.0 at index 1",
        actions=[0, -1],
        rewards=[1.0, 2.0],
    ),
    case(
        policy_gradient.reinforce_trajectory_gradient,
        "reward_to_go",
        "reward_to_go must be True or False; got 'yes'",
        reward_to_go="yes",
    ),
    case(
        policy_gradient.reinforce_trajectory_gradient,
        "baseline",
        "baseline must have one entry per state, shape (2,); got shape (1,)",
        baseline=[1.0],
    ),
    case(
        policy_gradient.reinforce_trajectory_gradient,
        "baseline",
        "baseline must be finite; got nan at index (1,)",
        baseline=[1.0, NAN],
    ),
    case(
        policy_gradient.optimal_state_baseline,
        "logits",
        "logits must be finite; got nan at index (0, 0)",
        logits=changed(LOGITS_SA, (0, 0), NAN),
    ),
    case(
        policy_gradient.optimal_state_baseline,
        "states",
        "states must have one more column than actions, s_0 to s_H, shape (2, 3); got shape (2, 2)",
        states=[[0, 0], [0, 1]],
    ),
    case(
        policy_gradient.optimal_state_baseline,
        "actions",
        "actions must be a 2-D array of action indices; got shape (2,)",
        actions=[0, 1],
    ),
    case(
        policy_gradient.optimal_state_baseline,
        "rewards",
        "rewards must be 0 after the episode ended (where actions are -1); got 1.0 at index 1",
        rewards=[[0.0, 1.0], [1.0, 1.0]],
    ),
    case(
        policy_gradient.optimal_state_baseline,
        "weights",
        "weights must have one entry per episode, shape (2,); got shape (3,)",
        weights=[0.5, 0.25, 0.25],
    ),
    case(
        policy_gradient.optimal_state_baseline,
        "weights",
        "weights must not all be zero; got shape (2,)",
        weights=[0.0, 0.0],
    ),
    case(
        policy_gradient.optimal_state_baseline,
        "reward_to_go",
        "reward_to_go must be True or False; got 1",
        reward_to_go=1,
    ),
    # groups
    case(
        groups.leave_one_out_advantages,
        "rewards",
        "rewards must have at least 2 members per group on the last axis; got shape (3, 1)",
        rewards=np.ones((3, 1)),
    ),
    case(
        groups.leave_one_out_advantages,
        "rewards",
        "rewards must have at least 1 dimension; got shape ()",
        rewards=2.0,
    ),
    case(
        groups.group_normalized_advantages,
        "rewards",
        "rewards must have at least 2 members per group on the last axis; got shape (2, 0)",
        rewards=np.ones((2, 0)),
    ),
    case(
        groups.group_normalized_advantages,
        "rewards",
        "rewards must have at least 2 members per group to leave one out; got shape (1,)",
        rewards=[1.0],
        include_self=False,
    ),
    case(
        groups.group_normalized_advantages,
        "eps",
        "eps must be a non-negative finite number; got -1e-06",
        eps=-1e-6,
    ),
    case(
        groups.group_normalized_advantages,
        "eps",
        "eps must be > 0 when a std is 0 (or underflows to 0) although the sample differs from "
        "the mean: its advantage would be infinite; got eps = 0.0 at index (0,)",
        rewards=[1.0, 2.0, 2.0],
        eps=0.0,
        include_self=False,
    ),
    case(
        groups.group_normalized_advantages,
        "ddof",
        "ddof must be smaller than the number of members in each statistic (2); got 2",
        ddof=2,
    ),
    case(
        groups.group_normalized_advantages,
        "ddof",
        "ddof must be a non-negative integer; got 0.5",
        ddof=0.5,
    ),
    case(
        groups.group_normalized_advantages,
        "include_self",
        "include_self must be True or False; got 'no'",
        include_self="no",
    ),
    case(
        groups.enumerate_group_gradient,
        "logits",
        "logits must be a 1-D array; got shape (1, 2)",
        logits=[[0.0, 0.0]],
    ),
    case(
        groups.enumerate_group_gradient,
        "action_rewards",
        "action_rewards must have one entry per action, shape (2,); got shape (3,)",
        action_rewards=[1.0, 2.0, 3.0],
    ),
    case(
        groups.enumerate_group_gradient,
        "group_size",
        "group_size must be a positive integer; got 0",
        group_size=0,
    ),
    case(
        groups.enumerate_group_gradient,
        "group_size",
        "group_size " + TOO_MANY + "K**N = 10**7 > 1000000",
        logits=np.zeros(10),
        action_rewards=np.zeros(10),
        group_size=7,
    ),
    case(
        groups.enumerate_group_gradient,
        "advantage_fn",
        "advantage_fn must be callable; got 'loo'",
        advantage_fn="loo",
    ),
    case(
        groups.enumerate_group_gradient,
        "advantage_fn",
        "advantage_fn must return 2 finite numbers, shape (2,); got array(",
        advantage_fn=np.sum,
    ),
    case(
        groups.enumerate_group_gradient,
        "advantage_fn",
        "advantage_fn must map rewards of shape (1,) to 1 numbers; it raised "
        "ValueError('rewards must have at least 2 members",
        group_size=1,
    ),
    # gradcheck
    case(gradcheck.numerical_gradient, "f", "f must be callable; got 3", f=3),
    case(
        gradcheck.numerical_gradient,
        "f",
        "f must return a real scalar; got dtype float64 and shape (2,)",
        f=lambda x: x,
    ),
    case(
        gradcheck.numerical_gradient,
        "f",
        "f must return finite values; got inf near x = ",
        f=lambda x: math.inf,
    ),
    case(
        gradcheck.numerical_gradient,
        "x",
        "x must be finite; got nan at index (0,)",
        x=[NAN, 1.0],
    ),
    case(
        gradcheck.numerical_gradient, "eps", "eps must be a positive finite number; got 0.0", eps=0
    ),
    case(
        gradcheck.relative_error,
        "a",
        "a must be finite; got inf at index (1,)",
        a=[1.0, INF],
    ),
    case(
        gradcheck.relative_error,
        "b",
        "b must have the shape of a, shape (2,); got shape (3,)",
        b=[1.0, 2.0, 3.0],
    ),
    case(
        gradcheck.relative_error,
        "floor",
        "floor must be a positive finite number; got -1.0",
        floor=-1.0,
    ),
    case(gradcheck.check_gradient, "f", "f must be callable; got None", f=None),
    case(
        gradcheck.check_gradient,
        "grad",
        "grad must have the shape of x, shape (2,); got shape (3,)",
        grad=[1.0, 2.0, 3.0],
    ),
    case(
        gradcheck.check_gradient,
        "grad",
        "grad must be finite; got nan at index (0,)",
        grad=lambda x: np.full(2, NAN),
    ),
    case(
        gradcheck.check_gradient,
        "x",
        "x must have at least one entry; got shape (0,)",
        x=[],
        grad=[],
    ),
    case(
        gradcheck.check_gradient,
        "eps",
        "eps must be a positive finite number; got inf",
        eps=INF,
    ),
    case(
        gradcheck.check_gradient,
        "rtol",
        "rtol must be a non-negative finite number; got -1.0",
        rtol=-1.0,
    ),
    case(
        gradcheck.check_gradient,
        "atol",
        "atol must be a non-negative finite number; got nan",
        atol=NAN,
    ),
]

# The modules whose tables live in tests/library/tables/.
VALID.update(collect_dict("VALID"))
CASES += collect_list("CASES")


def public_functions():
    for module in MODULES:
        for name in module.__all__:
            member = getattr(module, name)
            if inspect.isfunction(member):
                yield member


@pytest.mark.parametrize(("function", "argument", "changes", "prefix"), CASES)
def test_bad_input_raises_a_value_error_that_names_the_argument(
    function, argument, changes, prefix
):
    assert prefix.startswith(argument)  # the table itself: each prefix names its argument
    with pytest.raises(ValueError) as error:
        function(**{**VALID[function], **changes})
    message = str(error.value)
    assert message.startswith(prefix), f"\n  got:      {message}\n  expected: {prefix}..."
    assert re.search(r"\bgot\b|\bit raised\b", message), "the message shows what was given"


@pytest.mark.parametrize("function", [advantages.packed_gae, returns.packed_discounted_returns])
@pytest.mark.parametrize("method", ["auto", "loop"])
def test_both_flags_name_the_first_such_step_in_c_order(function, method):
    """Several steps with both flags: the first in C order is named, whichever form runs."""
    both = np.zeros((3, 4), dtype=bool)
    both[[2, 0, 1], [0, 3, 1]] = True  # steps (2, 0), (0, 3) and (1, 1)
    terminated = both | np.eye(3, 4, dtype=bool)  # and more ends, terminated only
    arguments = {**VALID[function], "terminated": terminated, "truncated": both.copy()}
    for name in ("rewards", "values", "next_values"):
        if name in arguments:
            arguments[name] = np.zeros((3, 4))
    with pytest.raises(ValueError, match=r"got both True at index \(0, 3\)$"):
        function(**arguments, method=method)


@pytest.mark.parametrize("function", VALID, ids=lambda f: f.__name__)
def test_the_valid_arguments_are_valid(function):
    function(**VALID[function])


def test_every_argument_of_every_public_function_has_a_case():
    named = {(function, argument) for function, argument, _, _ in (c.values for c in CASES)}
    missing = [
        f"{function.__name__}({argument})"
        for function in public_functions()
        for argument in inspect.signature(function).parameters
        if (function, argument) not in named
    ]
    assert not missing, f"add a bad-input case for {missing}"
