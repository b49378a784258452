"""Convention and bad-input rows for rlfound.credit (chapter 9)."""

from __future__ import annotations

import math

import numpy as np

from rlfound import credit
from tests.library.tables.kinds import ARRAY, FLOAT, INT_ARRAY, Example, case

NAN, INF = math.nan, math.inf

# Two rows of tokens from three turns; -1 marks prompt, tool-output and padding tokens.
TURN_REWARDS = np.array([[0.0, 0.5, 1.0], [1.0, 0.0, -1.0]])
TURN_IDS = np.array([[-1, 0, 0, -1, 1, 2, -1], [0, 1, 1, 2, -1, -1, -1]])

# Three states, two actions, state 2 terminal (its rows all zero: they are ignored).
TRANSITION = np.zeros((3, 2, 3))
TRANSITION[0, 0] = [0.5, 0.5, 0.0]
TRANSITION[0, 1] = [0.0, 0.25, 0.75]
TRANSITION[1, 0] = [0.5, 0.0, 0.5]
TRANSITION[1, 1] = [0.0, 0.0, 1.0]
REWARD = np.arange(18.0).reshape(3, 2, 3) / 10.0
POLICY = np.array([[0.5, 0.5], [0.25, 0.75], [0.0, 0.0]])
TERMINAL = np.array([False, False, True])
POTENTIAL = np.array([0.3, -0.2, 1.0])

EPISODE_REWARDS = np.array([[0.0, 1.0, 0.5], [1.0, 0.0, 0.0]])
EPISODE_POTENTIALS = np.array([[0.2, 0.4, 0.1, 0.0], [0.5, 0.5, 0.5, 0.7]])

MDP = {"transition": TRANSITION, "reward": REWARD}

EXAMPLES = [
    Example(
        credit.turn_reward_to_go,
        {"turn_rewards": TURN_REWARDS, "token_turn_ids": TURN_IDS, "gamma": 0.9},
        ARRAY,
    ),
    Example(
        credit.shaped_reward,
        {"reward": REWARD, "potential": POTENTIAL, "gamma": 0.9, "terminal": TERMINAL},
        ARRAY,
    ),
    Example(
        credit.shaped_reward,
        {
            "reward": REWARD,
            "potential": POTENTIAL,
            "gamma": 0.9,
            "terminal": TERMINAL,
            "zero_terminal": False,
        },
        ARRAY,
    ),
    Example(
        credit.shaped_episode_rewards,
        {"rewards": EPISODE_REWARDS, "potentials": EPISODE_POTENTIALS, "gamma": 0.9},
        ARRAY,
    ),
    Example(
        credit.branch_advantage,
        {
            **MDP,
            "policy": POLICY,
            "state": 0,
            "action": 1,
            "gamma": 0.9,
            "num_branches": 8,
            "horizon": 5,
            "terminal": TERMINAL,
            "rng": 3,
        },
        FLOAT,
    ),
    Example(
        credit.option_model,
        {
            **MDP,
            "policy": POLICY,
            "termination": np.array([0.0, 0.5, 1.0]),
            "gamma": 0.9,
            "terminal": TERMINAL,
        },
        (ARRAY, ARRAY),
    ),
    Example(
        credit.option_segments,
        {
            "rewards": np.array([1.0, 0.0, 2.0, 1.0, 0.5]),
            "option_starts": np.array([True, False, True, False, False]),
            "gamma": 0.9,
        },
        (ARRAY, INT_ARRAY),
    ),
    Example(
        credit.option_returns,
        {
            "option_rewards": np.array([[1.0, 0.5, 2.0], [0.0, 1.0, 1.0]]),
            "durations": np.array([[1, 3, 2], [2, 2, 1]]),
            "gamma": 0.9,
        },
        ARRAY,
    ),
]

VALID = {
    credit.turn_reward_to_go: {
        "turn_rewards": [0.5, 1.0],
        "token_turn_ids": [0, -1, 1],
        "gamma": 0.9,
    },
    credit.shaped_reward: {
        "reward": np.zeros((2, 1, 2)),
        "potential": [0.5, 1.0],
        "gamma": 0.9,
        "terminal": [False, True],
        "zero_terminal": True,
    },
    credit.shaped_episode_rewards: {
        "rewards": [0.0, 1.0],
        "potentials": [0.5, 0.2, 0.0],
        "gamma": 0.9,
    },
    credit.branch_advantage: {
        "transition": [[[0.0, 1.0], [0.0, 1.0]], [[0.0, 1.0], [0.0, 1.0]]],
        "reward": [[[0.0, 0.0], [0.0, 1.0]], [[0.0, 0.0], [0.0, 0.0]]],
        "policy": [[0.5, 0.5], [0.5, 0.5]],
        "state": 0,
        "action": 1,
        "gamma": 1.0,
        "num_branches": 2,
        "horizon": 1,
        "terminal": [False, True],
        "rng": 0,
    },
    credit.option_model: {
        "transition": [[[0.0, 1.0]], [[0.0, 1.0]]],
        "reward": [[[0.0, 1.0]], [[0.0, 0.0]]],
        "policy": [[1.0], [1.0]],
        "termination": [0.0, 1.0],
        "gamma": 0.9,
        "terminal": [False, True],
    },
    credit.option_segments: {
        "rewards": [1.0, 0.0, 2.0],
        "option_starts": [True, False, True],
        "gamma": 0.9,
    },
    credit.option_returns: {
        "option_rewards": [1.0, 2.0],
        "durations": [2, 1],
        "gamma": 0.9,
    },
}

# A two-state option that never stops: with gamma = 1 its model does not exist.
STUCK = [[[1.0, 0.0]], [[0.0, 1.0]]]

CASES = [
    # turn_reward_to_go
    case(
        credit.turn_reward_to_go,
        "turn_rewards",
        "turn_rewards must have at least 1 dimension; got shape ()",
        turn_rewards=1.0,
    ),
    case(
        credit.turn_reward_to_go,
        "turn_rewards",
        "turn_rewards must be finite; got nan at index (1,)",
        turn_rewards=[0.5, NAN],
    ),
    case(
        credit.turn_reward_to_go,
        "token_turn_ids",
        "token_turn_ids must be in [-1, 2); got 2 at index (2,)",
        token_turn_ids=[0, -1, 2],
    ),
    case(
        credit.turn_reward_to_go,
        "token_turn_ids",
        "token_turn_ids must have shape () + (L,)",
        token_turn_ids=[[0, -1, 1]],
    ),
    case(credit.turn_reward_to_go, "gamma", "gamma must be in [0, 1]; got -0.5", gamma=-0.5),
    # shaped_reward
    case(
        credit.shaped_reward,
        "reward",
        "reward must be a 3-D array; got shape (2, 2)",
        reward=np.zeros((2, 2)),
    ),
    case(
        credit.shaped_reward,
        "reward",
        "reward must have shape (S, A, S) with S, A >= 1",
        reward=np.zeros((2, 1, 3)),
    ),
    case(
        credit.shaped_reward,
        "reward",
        "reward must be finite; got inf at index (0, 0, 1)",
        reward=[[[0.0, INF]], [[0.0, 0.0]]],
    ),
    case(
        credit.shaped_reward,
        "potential",
        "potential must have one entry per state, shape (2,); got shape (3,)",
        potential=[0.5, 1.0, 0.0],
    ),
    case(
        credit.shaped_reward,
        "potential",
        "potential must be finite; got nan at index (0,)",
        potential=[NAN, 1.0],
    ),
    case(credit.shaped_reward, "gamma", "gamma must be in [0, 1]; got 2.0", gamma=2.0),
    case(
        credit.shaped_reward,
        "terminal",
        "terminal must be a boolean (or 0/1) mask; got 2 at index (1,)",
        terminal=[0, 2],
    ),
    case(
        credit.shaped_reward,
        "zero_terminal",
        "zero_terminal must be True or False; got 'yes'",
        zero_terminal="yes",
    ),
    # shaped_episode_rewards
    case(
        credit.shaped_episode_rewards,
        "rewards",
        "rewards must have at least 1 dimension; got shape ()",
        rewards=1.0,
    ),
    case(
        credit.shaped_episode_rewards,
        "rewards",
        "rewards must be finite; got nan at index (0,)",
        rewards=[NAN, 1.0],
    ),
    case(
        credit.shaped_episode_rewards,
        "potentials",
        "potentials must have the leading shape of rewards and T + 1 entries, shape (3,); "
        "got shape (2,)",
        potentials=[0.5, 0.2],
    ),
    case(
        credit.shaped_episode_rewards,
        "potentials",
        "potentials must be finite; got inf at index (2,)",
        potentials=[0.5, 0.2, INF],
    ),
    case(credit.shaped_episode_rewards, "gamma", "gamma must be in [0, 1]; got nan", gamma=NAN),
    # branch_advantage
    case(
        credit.branch_advantage,
        "transition",
        "transition must be a 3-D array; got shape (2, 2)",
        transition=np.eye(2),
    ),
    case(
        credit.branch_advantage,
        "reward",
        "reward must have the shape of transition (S, A, S), shape (2, 2, 2); got shape (2, 1, 2)",
        reward=np.zeros((2, 1, 2)),
    ),
    case(
        credit.branch_advantage,
        "policy",
        "policy must sum to 1 along the last axis; got sum 0.8 at index (0,)",
        policy=[[0.4, 0.4], [0.5, 0.5]],
    ),
    case(
        credit.branch_advantage,
        "state",
        "state must be in [0, 2); got 2",
        state=2,
    ),
    case(
        credit.branch_advantage,
        "state",
        "state must be a live (non-terminal) state to branch from; got terminal state 1",
        state=1,
    ),
    case(credit.branch_advantage, "action", "action must be in [0, 2); got -1", action=-1),
    case(credit.branch_advantage, "gamma", "gamma must be in [0, 1]; got 1.5", gamma=1.5),
    case(
        credit.branch_advantage,
        "num_branches",
        "num_branches must be a positive integer; got 0",
        num_branches=0,
    ),
    case(
        credit.branch_advantage,
        "horizon",
        "horizon must be a positive integer; got 2.0",
        horizon=2.0,
    ),
    case(
        credit.branch_advantage,
        "terminal",
        "terminal must have shape (2,); got shape (1,)",
        terminal=[False],
    ),
    case(
        credit.branch_advantage,
        "rng",
        "rng must be a numpy.random.Generator, a non-negative integer seed or None; got -1",
        rng=-1,
    ),
    # option_model
    case(
        credit.option_model,
        "transition",
        "transition must have shape (S, A, S) with S, A >= 1",
        transition=np.zeros((2, 1, 3)),
    ),
    case(
        credit.option_model,
        "reward",
        "reward must be finite; got nan at index (0, 0, 0)",
        reward=[[[NAN, 1.0]], [[0.0, 0.0]]],
    ),
    case(
        credit.option_model,
        "policy",
        "policy must have one row π(· | s) per state, shape (2, 1); got shape (1, 1)",
        policy=[[1.0]],
    ),
    case(
        credit.option_model,
        "termination",
        "termination must have one probability per state, shape (2,); got shape (3,)",
        termination=[0.0, 1.0, 1.0],
    ),
    case(
        credit.option_model,
        "termination",
        "termination must be probabilities in [0, 1]; got 1.5 at index (0,)",
        termination=[1.5, 1.0],
    ),
    case(
        credit.option_model,
        "termination",
        "termination must let the option stop with probability 1 when gamma = 1; got an option "
        "that can run forever from state 0",
        transition=STUCK,
        reward=np.zeros((2, 1, 2)),
        termination=[0.0, 0.0],
        gamma=1.0,
        terminal=None,
    ),
    case(credit.option_model, "gamma", "gamma must be in [0, 1]; got -0.1", gamma=-0.1),
    case(
        credit.option_model,
        "terminal",
        "terminal must be a boolean (or 0/1) mask; got dtype <U1",
        terminal=np.array(["a", "b"]),
    ),
    # option_segments
    case(
        credit.option_segments,
        "rewards",
        "rewards must be a 1-D array; got shape (1, 3)",
        rewards=[[1.0, 0.0, 2.0]],
    ),
    case(
        credit.option_segments,
        "rewards",
        "rewards must have at least one step; got shape (0,)",
        rewards=np.zeros(0),
        option_starts=np.zeros(0, dtype=bool),
    ),
    case(
        credit.option_segments,
        "option_starts",
        "option_starts must have shape (3,); got shape (2,)",
        option_starts=[True, False],
    ),
    case(
        credit.option_segments,
        "option_starts",
        "option_starts must be True at step 0 (the first step belongs to an option); got False",
        option_starts=[False, True, False],
    ),
    case(credit.option_segments, "gamma", "gamma must be in [0, 1]; got 1.1", gamma=1.1),
    # option_returns
    case(
        credit.option_returns,
        "option_rewards",
        "option_rewards must be finite; got inf at index (0,)",
        option_rewards=[INF, 2.0],
    ),
    case(
        credit.option_returns,
        "option_rewards",
        "option_rewards must have at least 1 dimension; got shape ()",
        option_rewards=1.0,
        durations=np.array(2),
    ),
    case(
        credit.option_returns,
        "durations",
        "durations must have the shape of option_rewards, (2,); got shape (3,)",
        durations=[1, 1, 1],
    ),
    case(
        credit.option_returns,
        "durations",
        "durations must be integers >= 1; got 0 at index (1,)",
        durations=[2, 0],
    ),
    case(
        credit.option_returns,
        "durations",
        "durations must be integers >= 1; got 1.5 at index (0,)",
        durations=[1.5, 1],
    ),
    case(
        credit.option_returns,
        "durations",
        "durations must be a rectangular array of numbers; got [[1, 2], [1]]",
        option_rewards=[[1.0, 2.0], [3.0, 4.0]],
        durations=[[1, 2], [1]],
    ),
    case(credit.option_returns, "gamma", "gamma must be in [0, 1]; got -1.0", gamma=-1.0),
]
