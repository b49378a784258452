"""Markov chains and tabular MDPs: power series of a reward process, policy averages,
values by a linear solve."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

# ---------------------------------------------------------------------------------------------
# Markov chains and tabular MDPs
# ---------------------------------------------------------------------------------------------


@st.composite
def markov_chains(draw, min_states=1, max_states=6):
    """A random row-stochastic matrix (no zero rows) and a reward vector."""
    size = draw(st.integers(min_states, max_states))
    weights = draw(
        hnp.arrays(np.float64, (size, size), elements=st.floats(0.0, 1.0, allow_nan=False))
    )
    transition = (weights + 1e-3) / (weights + 1e-3).sum(axis=1, keepdims=True)
    reward = draw(hnp.arrays(np.float64, (size,), elements=st.floats(-5.0, 5.0, allow_nan=False)))
    return transition, reward


def power_series_values(transition, reward, gamma, tolerance=1e-15, max_terms=100_000):
    """v = Σ_n γ^n P^n r, summed until the terms are negligible (needs γ < 1 or absorption)."""
    total = np.zeros_like(reward, dtype=np.float64)
    term = np.asarray(reward, dtype=np.float64).copy()
    for _ in range(max_terms):
        total += term
        if term.size == 0 or np.max(np.abs(term)) <= tolerance:
            return total
        term = gamma * (transition @ term)
    raise AssertionError("power series did not converge")


def random_mdp(rng, num_states, num_actions, num_terminal=1):
    """A random tabular MDP: (transition, reward, policy, terminal, initial).

    The last ``num_terminal`` states are terminal; their rows are left random on purpose
    (the library must ignore them). Every state reaches a terminal one when there is one,
    because every entry of ``transition`` is positive.
    """
    transition = rng.dirichlet(np.ones(num_states), size=(num_states, num_actions))
    reward = rng.normal(size=(num_states, num_actions, num_states))
    policy = rng.dirichlet(np.ones(num_actions), size=num_states)
    terminal = np.arange(num_states) >= num_states - num_terminal
    initial = rng.dirichlet(np.ones(num_states))
    return transition, reward, policy, terminal, initial


def policy_average(transition, reward, policy, terminal):
    """(P_π, r_π) by explicit loops over live states; terminal rows absorbing and unrewarded."""
    num_states, num_actions, _ = transition.shape
    p_pi = np.zeros((num_states, num_states))
    r_pi = np.zeros(num_states)
    for s in range(num_states):
        if terminal[s]:
            p_pi[s, s] = 1.0
            continue
        for a in range(num_actions):
            p_pi[s] += policy[s, a] * transition[s, a]
            r_pi[s] += policy[s, a] * transition[s, a] @ reward[s, a]
    return p_pi, r_pi


def linear_solve_values(transition, reward, policy, gamma, terminal):
    """(v_π, P_π): v = r_π + γ P_π v solved on the live states by a linear solve, 0 at terminal
    states, with (P_π, r_π) from :func:`policy_average`."""
    p_pi, r_pi = policy_average(transition, reward, policy, terminal)
    live = np.flatnonzero(~terminal)
    values = np.zeros(len(terminal))
    values[live] = np.linalg.solve(np.eye(live.size) - gamma * p_pi[np.ix_(live, live)], r_pi[live])
    return values, p_pi
