"""Shared helpers of the equation checks of the chapters: action values by power series, and the
surrogates of the policy-gradient objective on a random MDP that chapters 5 and 14 check."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from tests.oracles import (
    linear_solve_values,
    policy_average,
    power_series_values,
    random_mdp,
    softmax_rows,
)


def state_action_power_series(transition, reward, policy, terminal, gamma):
    """q_π(s, a) = E[G_0 | s_0 = s, a_0 = a], as the power series of the chain on (s, a)."""
    num_states, num_actions, _ = transition.shape
    pairs = list(itertools.product(range(num_states), range(num_actions)))
    chain = np.zeros((len(pairs), len(pairs)))
    first = np.zeros(len(pairs))
    for i, (s, a) in enumerate(pairs):
        if terminal[s]:
            chain[i, i] = 1.0  # absorbing and unrewarded
            continue
        first[i] = transition[s, a] @ reward[s, a]
        for j, (s_next, a_next) in enumerate(pairs):
            if not terminal[s_next]:
                chain[i, j] = transition[s, a, s_next] * policy[s_next, a_next]
    return power_series_values(chain, first, gamma).reshape(num_states, num_actions)


# ---------------------------------------------------------------------------------------------
# Chapter 5 and 14: surrogates of the policy-gradient objective on a random MDP
# ---------------------------------------------------------------------------------------------

GAMMA = 0.9


class SurrogateProblem(NamedTuple):
    """A random MDP's logits θ and, at their policy π, what the surrogates read."""

    logits: np.ndarray
    policy: np.ndarray
    occupancy: np.ndarray  # d_π
    advantages: np.ndarray  # A_π
    objective: Callable[[np.ndarray], float]  # J as a function of the logits


def random_problem(seed) -> SurrogateProblem:
    """A random MDP (4 states, 3 actions, one terminal) and logits, as a SurrogateProblem."""
    rng = np.random.default_rng(seed)
    transition, reward, _, terminal, initial = random_mdp(rng, 4, 3, num_terminal=1)
    logits = rng.normal(size=(4, 3))
    policy = softmax_rows(logits)
    return SurrogateProblem(
        logits,
        policy,
        occupancy_by_propagation(transition, policy, terminal, initial),
        advantages(transition, reward, policy, terminal),
        lambda x: objective(x, transition, reward, terminal, initial),
    )


def objective(logits, transition, reward, terminal, initial):
    """J(θ) = p_0 · v_π for the tabular softmax policy, v_π by a linear solve."""
    values, _ = linear_solve_values(transition, reward, softmax_rows(logits), GAMMA, terminal)
    return float(initial @ values)


def occupancy_by_propagation(transition, policy, terminal, initial):
    """d_π(s) = Σ_t γ^t Pr(s_t = s), by pushing the state distribution forward step by step."""
    p_pi, _ = policy_average(transition, np.zeros(transition.shape), policy, terminal)
    live = np.where(terminal, 0.0, 1.0)
    state, total = np.asarray(initial, dtype=float) * live, np.zeros(len(terminal))
    for t in range(2000):
        total += GAMMA**t * state
        state = (state @ p_pi) * live  # terminal states absorb: no later visits count
    return total


def advantages(transition, reward, policy, terminal):
    values = power_series_values(*policy_average(transition, reward, policy, terminal), GAMMA)
    q = state_action_power_series(transition, reward, policy, terminal, GAMMA)
    return np.where(terminal[:, None], 0.0, q - values[:, None])
