"""rlfound.mdp: exact policy evaluation, Bellman residuals, and V, Q, A of tabular MDPs.

References: power series Σ_n γ^n P^n r (tests.oracles.power_series_values), policy averages
by explicit loops (tests.oracles.policy_average), exact enumeration of episodes by recursion
(tests.oracles.episodes_by_hand), and a small MDP solved by hand.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rlfound.mdp import (
    action_values,
    advantage_values,
    bellman_residual,
    discounted_occupancy,
    evaluate_policy,
    policy_transition_and_reward,
    state_values,
    tiny_chain,
    tiny_chain_model,
)
from tests.oracles import (
    episodes_by_hand,
    forward_mdp,
    linear_solve_values,
    markov_chains,
    policy_average,
    power_series_values,
    random_mdp,
)

discounts = st.floats(min_value=0.0, max_value=0.9, allow_nan=False)
seeds = st.integers(0, 2**32 - 1)

CHAIN_P = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, 1.0]])
CHAIN_R = np.array([0.0, 1.0, 0.0])

# A small MDP solved by hand. States 0 and 1 are live, state 2 is terminal, and its rows are
# left all zero (they are ignored). From 0: action 0 moves to 1 and pays 1, action 1 ends the
# episode and pays 2. From 1: action 0 ends it and pays 0, action 1 returns to 0 and pays -1.
HAND_TRANSITION = np.zeros((3, 2, 3))
HAND_TRANSITION[0, 0, 1] = HAND_TRANSITION[0, 1, 2] = 1.0
HAND_TRANSITION[1, 0, 2] = HAND_TRANSITION[1, 1, 0] = 1.0
HAND_REWARD = np.zeros((3, 2, 3))
HAND_REWARD[0, 0, 1], HAND_REWARD[0, 1, 2], HAND_REWARD[1, 1, 0] = 1.0, 2.0, -1.0
HAND_POLICY = np.array([[0.5, 0.5], [0.75, 0.25], [0.0, 0.0]])
HAND_TERMINAL = np.array([False, False, True])
HAND_GAMMA = 0.5
# V1 = 0.25 (-1 + γ V0), V0 = 0.5 (1 + γ V1) + 0.5 * 2, so V0 = 46/31 and V1 = -2/31;
# Q(s, a) = r + γ V(next): Q(0, ·) = (1 + γ V1, 2), Q(1, ·) = (0, -1 + γ V0).
HAND_V = np.array([46.0, -2.0, 0.0]) / 31
HAND_Q = np.array([[30.0, 62.0], [0.0, -8.0], [0.0, 0.0]]) / 31
HAND_A = np.array([[-16.0, 16.0], [2.0, -6.0], [0.0, 0.0]]) / 31


def hand_mdp():
    return HAND_TRANSITION, HAND_REWARD, HAND_POLICY, HAND_GAMMA, HAND_TERMINAL


def with_garbage_terminal_rows(transition, reward, policy, terminal, rng):
    """The same MDP with the terminal states' rows replaced by arbitrary numbers."""
    transition, reward, policy = transition.copy(), reward.copy(), policy.copy()
    transition[terminal] = rng.random(transition[terminal].shape)  # rows not summing to 1
    reward[terminal] = 99.0
    policy[terminal] = 0.0
    return transition, reward, policy


def live_state_values(transition, reward, policy, gamma, terminal):
    """V = Σ_n γ^n P_LL^n r_L on the live states (loops and a power series), 0 elsewhere."""
    p_pi, r_pi = policy_average(transition, reward, policy, terminal)
    live = ~terminal
    values = np.zeros(len(terminal))
    values[live] = power_series_values(p_pi[np.ix_(live, live)], r_pi[live], gamma)
    return values


def series_action_values(transition, reward, policy, gamma, terminal):
    """Q as the power series of the state-action chain M[(s,a),(s',a')] = P(s'|s,a) π(a'|s')."""
    num_states, num_actions, _ = transition.shape
    chain = np.zeros((num_states * num_actions, num_states * num_actions))
    immediate = np.zeros(num_states * num_actions)
    for s in np.flatnonzero(~terminal):
        for a in range(num_actions):
            row = s * num_actions + a
            for t in range(num_states):
                immediate[row] += transition[s, a, t] * reward[s, a, t]
                if not terminal[t]:
                    for b in range(num_actions):
                        chain[row, t * num_actions + b] = transition[s, a, t] * policy[t, b]
    return power_series_values(chain, immediate, gamma).reshape(num_states, num_actions)


# --- evaluate_policy --------------------------------------------------------------------------


def test_evaluate_policy_two_state_cycle_by_hand():
    # v0 = 1 + γ v1, v1 = 2 + γ v0: v0 = (1 + 2γ) / (1 - γ²), v1 = (2 + γ) / (1 - γ²).
    values = evaluate_policy([[0.0, 1.0], [1.0, 0.0]], [1.0, 2.0], 0.5)
    np.testing.assert_allclose(values, [2.0 / 0.75, 2.5 / 0.75], rtol=1e-14)


@pytest.mark.equation("eq-bellman-matrix")
@given(chain=markov_chains(), gamma=discounts)
def test_evaluate_policy_equals_the_power_series(chain, gamma):
    transition, reward = chain
    np.testing.assert_allclose(
        evaluate_policy(transition, reward, gamma),
        power_series_values(transition, reward, gamma),
        rtol=1e-9,
        atol=1e-9,
    )


@pytest.mark.equation("eq-bellman-live")
@given(chain=markov_chains(min_states=2), gamma=discounts, data=st.data())
def test_evaluate_policy_with_terminal_states_equals_the_live_power_series(chain, gamma, data):
    transition, reward = chain
    size = reward.size
    terminal = np.array(data.draw(st.lists(st.booleans(), min_size=size, max_size=size)))
    reward = np.where(terminal, 0.0, reward)
    live = ~terminal
    expected = np.zeros(size)
    expected[live] = power_series_values(transition[np.ix_(live, live)], reward[live], gamma)
    np.testing.assert_allclose(
        evaluate_policy(transition, reward, gamma, terminal=terminal), expected, atol=1e-9
    )


@given(chain=markov_chains(min_states=2), data=st.data())
def test_evaluate_policy_at_gamma_one_solves_the_bellman_equation(chain, data):
    # Every entry of the chain is positive, so one terminal state is reachable from all.
    transition, reward = chain
    terminal = np.zeros(reward.size, dtype=bool)
    terminal[data.draw(st.integers(0, reward.size - 1))] = True
    reward = np.where(terminal, 0.0, reward)
    values = evaluate_policy(transition, reward, 1.0, terminal=terminal)
    np.testing.assert_array_equal(values[terminal], 0.0)
    residual = (reward + transition @ values - values)[~terminal]
    np.testing.assert_allclose(residual, 0.0, atol=1e-8 * (1.0 + np.abs(values).max()))


def test_a_terminal_state_is_worth_zero_even_if_its_row_leaves_it():
    # State 1 is terminal but its row points back to 0: v1 = 0 and v0 = 1 + γ * 0, at γ = 1.
    values = evaluate_policy([[0.0, 1.0], [1.0, 0.0]], [1.0, 0.0], 1.0, terminal=[False, True])
    np.testing.assert_array_equal(values, [1.0, 0.0])


def test_evaluate_policy_with_every_state_terminal_is_all_zero():
    np.testing.assert_array_equal(evaluate_policy(np.eye(2), [0.0, 0.0], 1.0, [True, True]), 0.0)


# --- tiny_chain_model and tiny_chain ----------------------------------------------------------


def test_tiny_chain_model_is_the_chapter_chain():
    transition_pi, reward_pi, terminal = tiny_chain_model()
    np.testing.assert_array_equal(transition_pi, CHAIN_P)
    np.testing.assert_array_equal(reward_pi, CHAIN_R)
    np.testing.assert_array_equal(terminal, [False, False, True])


def test_tiny_chain_model_returns_new_arrays_on_every_call():
    for array in tiny_chain_model():
        array[...] = 0
    transition_pi, reward_pi, terminal = tiny_chain_model()
    np.testing.assert_array_equal(transition_pi, CHAIN_P)
    np.testing.assert_array_equal(reward_pi, CHAIN_R)
    np.testing.assert_array_equal(terminal, [False, False, True])


@pytest.mark.parametrize("gamma", [0.0, 0.5, 0.9, 1.0])
def test_tiny_chain_values_are_gamma_one_zero(gamma):
    np.testing.assert_allclose(tiny_chain(gamma), [gamma, 1.0, 0.0], rtol=1e-14, atol=1e-15)


# --- bellman_residual -------------------------------------------------------------------------


def test_bellman_residual_of_wrong_values_by_hand():
    # v = (1, 1, 0) at γ = 0.9: state 0 has 0 + 0.9 * 1 - 1 = -0.1; the others are exact.
    residual = bellman_residual([1.0, 1.0, 0.0], CHAIN_P, CHAIN_R, 0.9)
    np.testing.assert_allclose(residual, [-0.1, 0.0, 0.0], atol=1e-15)


@pytest.mark.parametrize("gamma", [0.0, 0.9, 1.0])
def test_bellman_residual_of_the_tiny_chain_values_is_zero(gamma):
    # γ = 1 included: a residual needs no solvable system, only γ in [0, 1].
    np.testing.assert_allclose(bellman_residual(tiny_chain(gamma), CHAIN_P, CHAIN_R, gamma), 0.0)


@given(chain=markov_chains(), gamma=discounts)
def test_bellman_residual_of_the_power_series_values_is_zero(chain, gamma):
    transition, reward = chain
    values = power_series_values(transition, reward, gamma)
    scale = 1.0 + np.abs(values).max()
    np.testing.assert_allclose(
        bellman_residual(values, transition, reward, gamma), 0.0, atol=1e-12 * scale
    )


@given(chain=markov_chains(), gamma=discounts, data=st.data())
def test_bellman_residual_of_shifted_values_is_linear_in_the_shift(chain, gamma, data):
    # r + γ P (v + s e_i) - (v + s e_i) = s (γ P e_i - e_i) when v solves the equation.
    transition, reward = chain
    values = power_series_values(transition, reward, gamma)
    state = data.draw(st.integers(0, reward.size - 1))
    shift = data.draw(st.floats(-3.0, 3.0))
    unit = np.eye(reward.size)[state]
    residual = bellman_residual(values + shift * unit, transition, reward, gamma)
    np.testing.assert_allclose(residual, shift * (gamma * transition[:, state] - unit), atol=1e-9)


# --- policy_transition_and_reward -------------------------------------------------------------


def test_policy_transition_and_reward_by_hand():
    transition_pi, reward_pi = policy_transition_and_reward(*hand_mdp()[:3], HAND_TERMINAL)
    np.testing.assert_allclose(transition_pi, [[0, 0.5, 0.5], [0.25, 0, 0.75], [0, 0, 1]])
    np.testing.assert_allclose(reward_pi, [1.5, -0.25, 0.0])


@given(seed=seeds, num_terminal=st.integers(0, 2))
def test_policy_transition_and_reward_equal_the_loops(seed, num_terminal):
    transition, reward, policy, terminal, _ = random_mdp(
        np.random.default_rng(seed), 4, 3, num_terminal
    )
    transition_pi, reward_pi = policy_transition_and_reward(transition, reward, policy, terminal)
    expected_p, expected_r = policy_average(transition, reward, policy, terminal)
    np.testing.assert_allclose(transition_pi, expected_p, atol=1e-14)
    np.testing.assert_allclose(reward_pi, expected_r, atol=1e-14)


def test_terminal_rows_become_absorbing_and_unrewarded_whatever_they_held():
    rng = np.random.default_rng(1)
    transition, reward, policy, terminal, _ = random_mdp(rng, 4, 2, num_terminal=2)
    garbage = with_garbage_terminal_rows(transition, reward, policy, terminal, rng)
    transition_pi, reward_pi = policy_transition_and_reward(*garbage, terminal)
    np.testing.assert_array_equal(transition_pi[terminal], np.eye(4)[terminal])
    np.testing.assert_array_equal(reward_pi[terminal], 0.0)


# --- state_values, action_values, advantage_values --------------------------------------------


def test_state_values_by_hand():
    np.testing.assert_allclose(state_values(*hand_mdp()), HAND_V, rtol=1e-14, atol=1e-15)


def test_action_values_by_hand():
    np.testing.assert_allclose(action_values(*hand_mdp()), HAND_Q, rtol=1e-14, atol=1e-15)


def test_advantage_values_by_hand():
    np.testing.assert_allclose(advantage_values(*hand_mdp()), HAND_A, rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize(
    ("values_fn", "power_series"),
    [(state_values, live_state_values), (action_values, series_action_values)],
    ids=["state-values-live-series", "action-values-state-action-series"],
)
@given(seed=seeds, gamma=discounts, num_terminal=st.integers(0, 2))
def test_values_equal_their_power_series(values_fn, power_series, seed, gamma, num_terminal):
    transition, reward, policy, terminal, _ = random_mdp(
        np.random.default_rng(seed), 4, 2, num_terminal
    )
    np.testing.assert_allclose(
        values_fn(transition, reward, policy, gamma, terminal),
        power_series(transition, reward, policy, gamma, terminal),
        atol=1e-10,
    )


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_state_values_at_gamma_one_equal_the_enumerated_expected_return(seed):
    transition, reward, policy, terminal, _ = forward_mdp(np.random.default_rng(seed), 4, 2)
    values = state_values(transition, reward, policy, 1.0, terminal)
    for start in range(3):
        listed = episodes_by_hand(transition, reward, policy, np.eye(4)[start], 3, terminal)
        expected = sum(probability * sum(rewards) for probability, _, _, rewards in listed)
        assert values[start] == pytest.approx(expected, rel=1e-12, abs=1e-12)


@given(seed=seeds, gamma=discounts)
def test_action_values_average_to_state_values_under_the_policy(seed, gamma):
    transition, reward, policy, terminal, _ = random_mdp(np.random.default_rng(seed), 4, 3)
    q_values = action_values(transition, reward, policy, gamma, terminal)
    values = state_values(transition, reward, policy, gamma, terminal)
    np.testing.assert_allclose((policy * q_values).sum(axis=1)[~terminal], values[~terminal])


@given(seed=seeds, gamma=discounts)
def test_advantages_are_q_minus_v_with_zero_policy_mean(seed, gamma):
    transition, reward, policy, terminal, _ = random_mdp(np.random.default_rng(seed), 4, 3)
    advantages = advantage_values(transition, reward, policy, gamma, terminal)
    q_values = series_action_values(transition, reward, policy, gamma, terminal)
    values = live_state_values(transition, reward, policy, gamma, terminal)
    np.testing.assert_allclose(advantages, (q_values - values[:, None]) * ~terminal[:, None])
    np.testing.assert_allclose((policy * advantages).sum(axis=1)[~terminal], 0.0, atol=1e-10)


@pytest.mark.parametrize("function", [state_values, action_values, advantage_values])
def test_rows_of_terminal_states_are_ignored(function):
    rng = np.random.default_rng(11)
    transition, reward, policy, terminal, _ = random_mdp(rng, 5, 2, num_terminal=2)
    garbage = with_garbage_terminal_rows(transition, reward, policy, terminal, rng)
    np.testing.assert_allclose(
        function(*garbage, 0.9, terminal),
        function(transition, reward, policy, 0.9, terminal),
        rtol=1e-14,
        atol=1e-14,
    )


# --- discounted_occupancy (chapter 5) ------------------------------------------------------------


def occupancy_by_power_series(transition, policy, initial, gamma, terminal, num_steps=2000):
    """Σ_t γ^t Pr(s_t = s), by propagating the state distribution step by step; an episode
    that enters a terminal state stops there (its mass leaves the sum)."""
    p_pi, _ = policy_average(transition, np.zeros(transition.shape), policy, terminal)
    live = ~terminal
    distribution = np.where(live, initial, 0.0)
    total = np.zeros(len(initial))
    for t in range(num_steps):
        total += gamma**t * distribution
        distribution = np.where(live, distribution @ p_pi, 0.0)
    return total


@pytest.mark.equation("eq-occupancy")
@given(seed=seeds, gamma=st.floats(0.0, 0.95), num_terminal=st.integers(0, 2))
def test_discounted_occupancy_is_the_discounted_sum_of_visit_probabilities(
    seed, gamma, num_terminal
):
    rng = np.random.default_rng(seed)
    transition, _, policy, terminal, initial = random_mdp(rng, 5, 3, num_terminal)
    np.testing.assert_allclose(
        discounted_occupancy(transition, policy, initial, gamma, terminal),
        occupancy_by_power_series(transition, policy, initial, gamma, terminal),
        rtol=1e-9,
        atol=1e-12,
    )


def test_occupancy_of_the_tiny_chain_with_gamma_one_counts_each_visit_once():
    transition = CHAIN_P[:, None, :]
    occupancy = discounted_occupancy(
        transition, np.ones((3, 1)), [1.0, 0.0, 0.0], 1.0, terminal=[False, False, True]
    )
    np.testing.assert_allclose(occupancy, [1.0, 1.0, 0.0], rtol=1e-15)


@given(seed=seeds, gamma=st.floats(0.0, 0.95))
def test_occupancy_weights_turn_the_expected_return_into_a_sum_over_states(seed, gamma):
    # J = Σ_s d_π(s) r_π(s): the discounted sum of rewards, collected state by state.
    rng = np.random.default_rng(seed)
    transition, reward, policy, terminal, initial = random_mdp(rng, 5, 2, num_terminal=1)
    values, _ = linear_solve_values(transition, reward, policy, gamma, terminal)
    _, r_pi = policy_average(transition, reward, policy, terminal)
    occupancy = discounted_occupancy(transition, policy, initial, gamma, terminal)
    assert occupancy @ r_pi == pytest.approx(initial @ values, rel=1e-9, abs=1e-12)


@pytest.mark.equation("eq-performance-difference")
@given(seed=seeds, gamma=st.floats(0.0, 0.95))
def test_performance_difference_lemma_holds_exactly(seed, gamma):
    # J(π') - J(π) = Σ_s d_π'(s) Σ_a π'(a | s) A_π(s, a) (Kakade and Langford, 2002).
    rng = np.random.default_rng(seed)
    transition, reward, policy, terminal, initial = random_mdp(rng, 5, 3, num_terminal=1)
    other = rng.dirichlet(np.ones(3), size=5)
    gain = initial @ (
        linear_solve_values(transition, reward, other, gamma, terminal)[0]
        - linear_solve_values(transition, reward, policy, gamma, terminal)[0]
    )
    advantage = advantage_values(transition, reward, policy, gamma, terminal)
    occupancy = discounted_occupancy(transition, other, initial, gamma, terminal)
    assert np.sum(occupancy[:, None] * other * advantage) == pytest.approx(
        gain, rel=1e-9, abs=1e-12
    )


# --- value_iteration (chapter 9) --------------------------------------------------------------
# References: every deterministic policy evaluated by a linear solve
# (tests.oracles.optimal_values_by_enumeration), and the hand-solved MDP above.

from rlfound.mdp import value_iteration  # noqa: E402
from tests.oracles import optimal_values_by_enumeration  # noqa: E402


def test_value_iteration_on_the_hand_solved_mdp():
    # From 1: ending pays 0, returning to 0 pays -1 and then 2 at best, so q*(1) = (0, -1 + γ2).
    # From 0: q*(0) = (1 + γ v*(1), 2); with γ = 0.9, v*(1) = 0.8 and v*(0) = 2.
    values, q, policy = value_iteration(HAND_TRANSITION, HAND_REWARD, 0.9, [False, False, True])
    np.testing.assert_allclose(values, [2.0, 0.8, 0.0], atol=1e-9)
    np.testing.assert_allclose(q[:2], [[1.72, 2.0], [0.0, 0.8]], atol=1e-9)
    np.testing.assert_array_equal(policy[:2], [[0.0, 1.0], [0.0, 1.0]])


@given(seed=seeds, gamma=discounts, num_terminal=st.integers(1, 2))
def test_value_iteration_matches_the_best_of_all_deterministic_policies(seed, gamma, num_terminal):
    rng = np.random.default_rng(seed)
    transition, reward, _, terminal, _ = random_mdp(rng, 5, 3, num_terminal)
    values, q, _ = value_iteration(transition, reward, gamma, terminal)
    best_values, best_q = optimal_values_by_enumeration(transition, reward, gamma, terminal)
    np.testing.assert_allclose(values, best_values, atol=1e-8)
    np.testing.assert_allclose(q, best_q, atol=1e-8)


@given(seed=seeds)
def test_value_iteration_with_gamma_one_when_every_policy_terminates(seed):
    # Every entry of a random_mdp transition is positive, so every policy ends the episode.
    rng = np.random.default_rng(seed)
    transition, reward, _, terminal, _ = random_mdp(rng, 4, 2, num_terminal=1)
    values, _, _ = value_iteration(transition, reward, 1.0, terminal)
    np.testing.assert_allclose(
        values, optimal_values_by_enumeration(transition, reward, 1.0, terminal)[0], atol=1e-7
    )


@pytest.mark.equation("eq-bellman-optimality")
@given(seed=seeds, gamma=discounts)
def test_the_greedy_policy_is_optimal_and_satisfies_the_optimality_equation(seed, gamma):
    rng = np.random.default_rng(seed)
    transition, reward, _, terminal, _ = random_mdp(rng, 5, 3, num_terminal=1)
    values, q, policy = value_iteration(transition, reward, gamma, terminal)
    np.testing.assert_allclose(policy.sum(axis=1), 1.0)
    # Its own values are the optimal ones ...
    own, _ = linear_solve_values(transition, reward, policy, gamma, terminal)
    np.testing.assert_allclose(own, values, atol=1e-8)
    # ... and q* is a fixed point of the Bellman optimality operator.
    backup = np.einsum("sat,sat->sa", transition, reward + gamma * values)
    np.testing.assert_allclose(q[~terminal], backup[~terminal], atol=1e-8)
    assert np.all(q[terminal] == 0.0) and np.all(values[terminal] == 0.0)


def test_value_iteration_splits_ties_evenly():
    transition = np.zeros((2, 3, 2))
    transition[0, :, 1] = 1.0
    reward = np.zeros((2, 3, 2))
    reward[0, [0, 2], 1] = 1.0  # actions 0 and 2 are equally good
    _, _, policy = value_iteration(transition, reward, 0.5, terminal=[False, True])
    np.testing.assert_allclose(policy[0], [0.5, 0.0, 0.5])


def test_value_iteration_refuses_a_positive_cycle_with_gamma_one():
    loop = np.zeros((2, 1, 2))
    loop[0, 0, 1] = loop[1, 0, 0] = 1.0
    with pytest.raises(ValueError, match=r"^max_iterations must be enough"):
        value_iteration(loop, loop, 1.0, max_iterations=100)
