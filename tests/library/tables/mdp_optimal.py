"""Convention and bad-input rows for rlfound.mdp.value_iteration (added in chapter 9).

The rows of the chapter-1 and chapter-3 functions of rlfound.mdp live in
tests/library/test_conventions.py and tests/library/test_bad_input.py.
"""

from __future__ import annotations

import math

import numpy as np

from rlfound import mdp

# The chapter-9 model of the credit table: three states, two actions, state 2 terminal.
from tests.library.tables.credit import REWARD, TERMINAL, TRANSITION
from tests.library.tables.kinds import ARRAY, Example, case

EXAMPLES = [
    Example(
        mdp.value_iteration,
        {"transition": TRANSITION, "reward": REWARD, "gamma": 0.9, "terminal": TERMINAL},
        (ARRAY, ARRAY, ARRAY),
    ),
    Example(
        mdp.value_iteration,
        {
            "transition": TRANSITION,
            "reward": REWARD,
            "gamma": 1.0,
            "terminal": TERMINAL,
            "tolerance": 1e-8,
            "max_iterations": 500,
        },
        (ARRAY, ARRAY, ARRAY),
    ),
]

# A two-state loop that pays 1 forever: with gamma = 1 it has no finite optimal value.
LOOP = np.zeros((2, 1, 2))
LOOP[0, 0, 1] = LOOP[1, 0, 0] = 1.0

VALID = {
    mdp.value_iteration: {
        "transition": [[[1.0, 0.0]], [[0.0, 1.0]]],
        "reward": np.zeros((2, 1, 2)),
        "gamma": 0.9,
        "terminal": [False, True],
        "tolerance": 1e-10,
        "max_iterations": 1000,
    },
}

CASES = [
    case(
        mdp.value_iteration,
        "transition",
        "transition must be a 3-D array; got shape (2, 2)",
        transition=np.eye(2),
    ),
    case(
        mdp.value_iteration,
        "transition",
        "transition must sum to 1 along the last axis; got sum 0.5 at index (0, 0)",
        transition=[[[0.5, 0.0]], [[0.0, 1.0]]],
    ),
    case(
        mdp.value_iteration,
        "reward",
        "reward must have the shape of transition (S, A, S), shape (2, 1, 2); got shape (2, 2, 2)",
        reward=np.zeros((2, 2, 2)),
    ),
    case(
        mdp.value_iteration,
        "reward",
        "reward must be finite; got nan at index (0, 0, 1)",
        reward=[[[0.0, math.nan]], [[0.0, 0.0]]],
    ),
    case(mdp.value_iteration, "gamma", "gamma must be in [0, 1]; got 1.5", gamma=1.5),
    case(
        mdp.value_iteration,
        "terminal",
        "terminal must have shape (2,); got shape (3,)",
        terminal=[False, True, False],
    ),
    case(
        mdp.value_iteration,
        "tolerance",
        "tolerance must be a positive finite number; got 0.0",
        tolerance=0.0,
    ),
    case(
        mdp.value_iteration,
        "max_iterations",
        "max_iterations must be a positive integer; got 0",
        max_iterations=0,
    ),
    case(
        mdp.value_iteration,
        "max_iterations",
        "max_iterations must be enough for value iteration to converge",
        transition=LOOP,
        reward=LOOP,
        gamma=1.0,
        terminal=None,
        max_iterations=200,
    ),
]
