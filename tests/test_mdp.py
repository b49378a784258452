"""Bellman policy evaluation, eq-bellman-v and eq-bellman-matrix: v = r + gamma P v."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from rlfound.mdp import bellman_residual, evaluate_policy, tiny_chain, tiny_chain_model

CHAIN_P = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, 1.0]])
CHAIN_R = np.array([0.0, 1.0, 0.0])


def power_series_values(transition, reward, gamma, tol=1e-15, max_terms=100_000):
    """v = sum_n gamma^n P^n r, summed until the terms are negligible (gamma < 1)."""
    total = np.zeros_like(reward, dtype=np.float64)
    term = np.asarray(reward, dtype=np.float64).copy()
    for _ in range(max_terms):
        total += term
        if term.size == 0 or np.max(np.abs(term)) <= tol:
            return total
        term = gamma * (transition @ term)
    raise AssertionError("power series did not converge")


@st.composite
def markov_chains(draw, min_states=1, max_states=6):
    """A random row-stochastic matrix and reward vector."""
    size = draw(st.integers(min_states, max_states))
    weights = draw(
        hnp.arrays(np.float64, (size, size), elements=st.floats(0.0, 1.0, allow_nan=False))
    )
    weights = weights + 1e-3  # no all-zero rows
    transition = weights / weights.sum(axis=1, keepdims=True)
    reward = draw(hnp.arrays(np.float64, (size,), elements=st.floats(-5.0, 5.0, allow_nan=False)))
    return transition, reward


discounts = st.floats(min_value=0.0, max_value=0.9, allow_nan=False)


# --- the chapter's chain -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("gamma", "expected"),
    [(0.9, [0.9, 1.0, 0.0]), (0.8, [0.8, 1.0, 0.0]), (1.0, [1.0, 1.0, 0.0]), (0.0, [0, 1, 0])],
)
def test_tiny_chain_values(gamma, expected):
    values = tiny_chain(gamma)
    assert values.shape == (3,)
    np.testing.assert_allclose(values, expected, rtol=1e-12, atol=1e-12)


def test_tiny_chain_model_is_the_chapter_chain():
    transition, reward, terminal = tiny_chain_model()
    np.testing.assert_array_equal(transition, CHAIN_P)
    np.testing.assert_array_equal(reward, CHAIN_R)
    np.testing.assert_array_equal(terminal, [False, False, True])


def test_tiny_chain_model_returns_fresh_arrays():
    transition, reward, terminal = tiny_chain_model()
    transition[0, 0] = 99.0
    reward[:] = -1.0
    terminal[:] = False
    again_transition, again_reward, again_terminal = tiny_chain_model()
    np.testing.assert_array_equal(again_transition, CHAIN_P)
    np.testing.assert_array_equal(again_reward, CHAIN_R)
    np.testing.assert_array_equal(again_terminal, [False, False, True])


@pytest.mark.parametrize("gamma", [0.5, 0.9, 1.0])
def test_chain_through_evaluate_policy_with_terminal_mask(gamma):
    values = evaluate_policy(CHAIN_P, CHAIN_R, gamma, terminal=np.array([False, False, True]))
    np.testing.assert_allclose(values, [gamma, 1.0, 0.0], rtol=1e-12, atol=1e-12)


def test_chain_without_mask_for_gamma_below_one():
    # The terminal state is absorbing with reward 0, so the plain solve agrees for gamma < 1.
    np.testing.assert_allclose(evaluate_policy(CHAIN_P, CHAIN_R, 0.9), [0.9, 1.0, 0.0], atol=1e-12)


# --- Bellman residual ---------------------------------------------------------------------


@pytest.mark.parametrize("gamma", [0.8, 0.9, 1.0])
def test_residual_of_chain_solution_is_zero(gamma):
    residual = bellman_residual(tiny_chain(gamma), CHAIN_P, CHAIN_R, gamma)
    assert residual.shape == (3,)
    np.testing.assert_allclose(residual, 0.0, atol=1e-12)


def test_residual_of_wrong_chain_values_by_hand():
    # v = [1, 1, 0] at gamma = 0.9: state 0 has 0 + 0.9 * 1 - 1 = -0.1, the rest are exact.
    residual = bellman_residual(np.array([1.0, 1.0, 0.0]), CHAIN_P, CHAIN_R, 0.9)
    np.testing.assert_allclose(residual, [-0.1, 0.0, 0.0], atol=1e-12)


@given(chain=markov_chains(), gamma=discounts)
def test_solution_satisfies_bellman_equation(chain, gamma):
    transition, reward = chain
    values = evaluate_policy(transition, reward, gamma)
    assert values.shape == reward.shape
    # Residual computed here, independently of bellman_residual.
    np.testing.assert_allclose(reward + gamma * transition @ values - values, 0.0, atol=1e-10)
    np.testing.assert_allclose(bellman_residual(values, transition, reward, gamma), 0.0, atol=1e-10)


@given(chain=markov_chains(), gamma=discounts)
def test_solution_equals_power_series(chain, gamma):
    transition, reward = chain
    np.testing.assert_allclose(
        evaluate_policy(transition, reward, gamma),
        power_series_values(transition, reward, gamma),
        rtol=1e-9,
        atol=1e-9,
    )


@given(
    chain=markov_chains(),
    gamma=discounts,
    shift=st.floats(0.1, 3.0),
    data=st.data(),
)
def test_residual_of_perturbed_values_matches_formula(chain, gamma, shift, data):
    transition, reward = chain
    values = evaluate_policy(transition, reward, gamma)
    state = data.draw(st.integers(0, reward.size - 1))
    wrong = values.copy()
    wrong[state] += shift
    residual = bellman_residual(wrong, transition, reward, gamma)
    # r + gamma P (v + s e_i) - (v + s e_i) = s (gamma P e_i - e_i), as v solves the equation.
    unit = np.zeros_like(values)
    unit[state] = 1.0
    np.testing.assert_allclose(residual, shift * (gamma * transition @ unit - unit), atol=1e-9)
    assert abs(residual[state]) >= shift * (1 - gamma) - 1e-9


def test_gamma_zero_gives_immediate_reward():
    transition = np.array([[0.5, 0.5], [0.2, 0.8]])
    reward = np.array([3.0, -1.0])
    np.testing.assert_allclose(evaluate_policy(transition, reward, 0.0), reward, atol=1e-14)


def test_two_state_cycle_by_hand():
    # v0 = 1 + g v1, v1 = 2 + g v0 -> v0 = (1 + 2g) / (1 - g^2), v1 = (2 + g) / (1 - g^2)
    gamma = 0.5
    values = evaluate_policy(np.array([[0.0, 1.0], [1.0, 0.0]]), np.array([1.0, 2.0]), gamma)
    np.testing.assert_allclose(values, [2.0 / 0.75, 2.5 / 0.75], rtol=1e-12)


# --- terminal states ----------------------------------------------------------------------


def test_terminal_state_never_bootstraps_even_if_its_row_leaves_it():
    # State 1 is terminal but its row points back to 0: its value must still be 0,
    # and state 0 gets 1 + gamma * 0 even at gamma = 1.
    transition = np.array([[0.0, 1.0], [1.0, 0.0]])
    values = evaluate_policy(transition, np.array([1.0, 0.0]), 1.0, terminal=np.array([0, 1], bool))
    np.testing.assert_allclose(values, [1.0, 0.0], atol=1e-12)


@given(chain=markov_chains(min_states=2), gamma=discounts, data=st.data())
def test_terminal_mask_equals_series_over_non_terminal_states(chain, gamma, data):
    transition, reward = chain
    size = reward.size
    terminal = np.array(data.draw(st.lists(st.booleans(), min_size=size, max_size=size)))
    if not terminal.any():
        terminal[data.draw(st.integers(0, size - 1))] = True
    reward = np.where(terminal, 0.0, reward)
    live = ~terminal
    expected = np.zeros(size)
    expected[live] = power_series_values(transition[np.ix_(live, live)], reward[live], gamma)
    values = evaluate_policy(transition, reward, gamma, terminal=terminal)
    np.testing.assert_allclose(values, expected, rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(values[terminal], 0.0)


@given(chain=markov_chains(min_states=2), data=st.data())
def test_gamma_one_with_reachable_terminal_satisfies_bellman(chain, data):
    transition, reward = chain
    size = reward.size
    # Every entry is positive, so every state reaches the terminal state in one step.
    terminal = np.zeros(size, dtype=bool)
    terminal[data.draw(st.integers(0, size - 1))] = True
    reward = np.where(terminal, 0.0, reward)
    values = evaluate_policy(transition, reward, 1.0, terminal=terminal)
    np.testing.assert_array_equal(values[terminal], 0.0)
    live = ~terminal
    np.testing.assert_allclose(
        (reward + transition @ values - values)[live], 0.0, atol=1e-8 * (1 + np.abs(values).max())
    )


# --- failures -----------------------------------------------------------------------------


def test_singular_system_at_gamma_one_names_gamma():
    with pytest.raises(ValueError, match=r"^gamma"):
        evaluate_policy(CHAIN_P, CHAIN_R, 1.0)  # absorbing state without a terminal mask


def test_identity_dynamics_at_gamma_one_names_gamma():
    with pytest.raises(ValueError, match=r"^gamma"):
        evaluate_policy(np.eye(3), np.zeros(3), 1.0)


def test_non_terminal_state_that_never_terminates_names_gamma():
    # State 0 loops on itself forever; state 1 is terminal but unreachable from 0.
    transition = np.eye(2)
    with pytest.raises(ValueError, match=r"^gamma"):
        evaluate_policy(transition, np.array([1.0, 0.0]), 1.0, terminal=np.array([False, True]))


def test_terminal_state_with_reward_names_reward():
    with pytest.raises(ValueError, match=r"^reward"):
        evaluate_policy(CHAIN_P, np.array([0.0, 1.0, 0.5]), 0.9, terminal=np.array([0, 0, 1], bool))
