"""Tabular MDPs (chapter 3): V, Q and A (eq-bellman-v-mdp, eq-bellman-q-mdp), episodes.

Every value is checked against something computed another way: a truncated power series
built with explicit loops, exact enumeration of episodes, or Monte Carlo returns of sampled
episodes with a tolerance from their standard error.
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rlfound.mdp import (
    action_values,
    advantage_values,
    enumerate_episodes,
    policy_transition_and_reward,
    sample_episodes,
    state_values,
)


def random_rows(rng, shape, sparse=False):
    weights = rng.random(shape)
    if sparse:
        weights[rng.random(shape) < 0.4] = 0.0
        empty = weights.sum(axis=-1) == 0.0
        weights[empty, 0] = 1.0
    return weights / weights.sum(axis=-1, keepdims=True)


def random_mdp(seed, num_states=4, num_actions=2, num_terminal=1, sparse=False):
    """A random MDP whose last ``num_terminal`` states are terminal (with garbage rows)."""
    rng = np.random.default_rng(seed)
    transition = random_rows(rng, (num_states, num_actions, num_states), sparse)
    reward = rng.normal(size=(num_states, num_actions, num_states))
    policy = random_rows(rng, (num_states, num_actions), sparse)
    terminal = np.zeros(num_states, dtype=bool)
    terminal[num_states - num_terminal :] = True
    # Terminal rows are ignored by contract: make them invalid to prove it.
    transition[terminal] = 0.0
    policy[terminal] = 0.0
    reward[terminal] = 99.0
    return transition, reward, policy, terminal


def forward_mdp(seed, num_states=4, num_actions=2):
    """Every transition moves to a higher state and the last is terminal: episodes end
    within S - 1 steps, so enumeration with horizon S - 1 is exact, with no truncation."""
    rng = np.random.default_rng(seed)
    transition = np.zeros((num_states, num_actions, num_states))
    for s in range(num_states - 1):
        transition[s, :, s + 1 :] = random_rows(rng, (num_actions, num_states - 1 - s))
    transition[-1, :, -1] = 1.0
    reward = rng.normal(size=(num_states, num_actions, num_states))
    reward[-1] = 0.0
    policy = random_rows(rng, (num_states, num_actions))
    terminal = np.zeros(num_states, dtype=bool)
    terminal[-1] = True
    return transition, reward, policy, terminal


def loop_policy_averages(transition, reward, policy):
    """P_pi and r_pi with explicit loops."""
    num_states, num_actions, _ = transition.shape
    p_pi = np.zeros((num_states, num_states))
    r_pi = np.zeros(num_states)
    for s in range(num_states):
        for a in range(num_actions):
            for t in range(num_states):
                p_pi[s, t] += policy[s, a] * transition[s, a, t]
                r_pi[s] += policy[s, a] * transition[s, a, t] * reward[s, a, t]
    return p_pi, r_pi


def power_series(matrix, vector, gamma, tol=1e-15, max_terms=20_000):
    total = np.zeros_like(vector)
    term = vector.copy()
    for _ in range(max_terms):
        total += term
        if np.max(np.abs(term), initial=0.0) <= tol:
            return total
        term = gamma * (matrix @ term)
    raise AssertionError("power series did not converge")


def series_state_values(transition, reward, policy, gamma, terminal):
    """V = sum_n gamma^n P_live^n r_live over the live states; V = 0 at terminal states."""
    live = ~terminal
    p_pi, r_pi = loop_policy_averages(transition, reward, policy)
    values = np.zeros(len(terminal))
    values[live] = power_series(p_pi[np.ix_(live, live)], r_pi[live], gamma)
    return values


def series_action_values(transition, reward, policy, gamma, terminal):
    """Q as a power series of the state-action chain M[(s,a),(s',a')] = P(s'|s,a) pi(a'|s')."""
    num_states, num_actions, _ = transition.shape
    size = num_states * num_actions
    chain = np.zeros((size, size))
    immediate = np.zeros(size)
    for s in np.flatnonzero(~terminal):
        for a in range(num_actions):
            row = s * num_actions + a
            for t in range(num_states):
                immediate[row] += transition[s, a, t] * reward[s, a, t]
                if not terminal[t]:
                    for b in range(num_actions):
                        chain[row, t * num_actions + b] = transition[s, a, t] * policy[t, b]
    return power_series(chain, immediate, gamma).reshape(num_states, num_actions)


def enumerated_value(transition, reward, policy, initial, horizon, gamma, terminal):
    total = 0.0
    for episode in enumerate_episodes(transition, reward, policy, initial, horizon, terminal):
        discounted = sum(gamma**t * r for t, r in enumerate(episode["rewards"]))
        total += episode["probability"] * discounted
    return total


seeds = st.integers(0, 2**32 - 1)
discounts = st.floats(0.0, 0.95, allow_nan=False)


# --- policy averages and V -------------------------------------------------------------------


@given(seed=seeds)
def test_policy_transition_and_reward_match_loops(seed):
    rng = np.random.default_rng(seed)
    transition = random_rows(rng, (3, 2, 3), sparse=True)
    reward = rng.normal(size=(3, 2, 3))
    policy = random_rows(rng, (3, 2))
    p_pi, r_pi = policy_transition_and_reward(transition, reward, policy)
    expected_p, expected_r = loop_policy_averages(transition, reward, policy)
    np.testing.assert_allclose(p_pi, expected_p, atol=1e-14)
    np.testing.assert_allclose(r_pi, expected_r, atol=1e-14)
    np.testing.assert_allclose(p_pi.sum(axis=1), 1.0, atol=1e-14)


@given(seed=seeds, gamma=discounts, sparse=st.booleans(), num_terminal=st.integers(0, 2))
def test_state_values_equal_power_series(seed, gamma, sparse, num_terminal):
    transition, reward, policy, terminal = random_mdp(
        seed, num_terminal=num_terminal, sparse=sparse
    )
    values = state_values(transition, reward, policy, gamma, terminal=terminal)
    np.testing.assert_allclose(
        values, series_state_values(transition, reward, policy, gamma, terminal), atol=1e-10
    )
    np.testing.assert_array_equal(values[terminal], 0.0)


@pytest.mark.parametrize("gamma", [1.0, 0.9, 0.0])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_state_values_equal_exact_enumeration(seed, gamma):
    transition, reward, policy, terminal = forward_mdp(seed)
    values = state_values(transition, reward, policy, gamma, terminal=terminal)
    for s in range(3):
        start = np.eye(4)[s]
        exact = enumerated_value(transition, reward, policy, start, 3, gamma, terminal)
        assert math.isclose(values[s], exact, rel_tol=1e-12, abs_tol=1e-12)


def test_state_values_equal_monte_carlo():
    transition, reward, policy, terminal = random_mdp(5, num_states=4, num_terminal=1)
    gamma, horizon, episodes = 0.8, 60, 4000
    values = state_values(transition, reward, policy, gamma, terminal=terminal)
    truncation_bias = gamma**horizon * np.abs(reward[~terminal]).max() / (1.0 - gamma)
    for s in range(3):
        batch = sample_episodes(
            transition,
            reward,
            policy,
            np.eye(4)[s],
            horizon,
            seed=s,
            num_episodes=episodes,
            terminal=terminal,
        )
        returns = batch["rewards"] @ gamma ** np.arange(horizon)
        standard_error = returns.std(ddof=1) / math.sqrt(episodes)
        assert abs(returns.mean() - values[s]) < 4.0 * standard_error + truncation_bias


def test_action_values_equal_monte_carlo_conditioned_on_the_first_action():
    # Q(s, a) = E[G_0 | s_0 = s, a_0 = a]: average the returns of the sampled episodes whose
    # first action was a.
    transition, reward, policy, terminal = random_mdp(8, num_states=4, num_terminal=1)
    gamma, horizon, episodes = 0.8, 60, 6000
    q_values = action_values(transition, reward, policy, gamma, terminal=terminal)
    truncation_bias = gamma**horizon * np.abs(reward[~terminal]).max() / (1.0 - gamma)
    for s in range(3):
        batch = sample_episodes(
            transition,
            reward,
            policy,
            np.eye(4)[s],
            horizon,
            seed=10 + s,
            num_episodes=episodes,
            terminal=terminal,
        )
        returns = batch["rewards"] @ gamma ** np.arange(horizon)
        for a in range(2):
            chosen = returns[batch["actions"][:, 0] == a]
            standard_error = chosen.std(ddof=1) / math.sqrt(chosen.size)
            assert abs(chosen.mean() - q_values[s, a]) < 4.0 * standard_error + truncation_bias


def test_gamma_one_with_certain_termination():
    transition, reward, policy, terminal = forward_mdp(3)
    values = state_values(transition, reward, policy, 1.0, terminal=terminal)
    np.testing.assert_allclose(
        values, series_state_values(transition, reward, policy, 1.0, terminal), atol=1e-12
    )


def test_terminal_rows_are_ignored():
    transition, reward, policy, terminal = random_mdp(11, num_terminal=2)
    absorbing = transition.copy()
    uniform = policy.copy()
    for s in np.flatnonzero(terminal):
        absorbing[s, :, s] = 1.0
        uniform[s] = 0.5
    for function in (state_values, action_values, advantage_values):
        garbage = function(transition, reward, policy, 0.9, terminal=terminal)
        clean = function(
            absorbing,
            np.where(terminal[:, None, None], 0.0, reward),
            uniform,
            0.9,
            terminal=terminal,
        )
        np.testing.assert_allclose(garbage, clean, atol=1e-14)


# --- Q and A ------------------------------------------------------------------------------------


@given(seed=seeds, gamma=discounts, sparse=st.booleans(), num_terminal=st.integers(0, 2))
def test_action_values_equal_power_series(seed, gamma, sparse, num_terminal):
    transition, reward, policy, terminal = random_mdp(
        seed, num_terminal=num_terminal, sparse=sparse
    )
    q_values = action_values(transition, reward, policy, gamma, terminal=terminal)
    assert q_values.shape == policy.shape
    np.testing.assert_allclose(
        q_values, series_action_values(transition, reward, policy, gamma, terminal), atol=1e-10
    )
    np.testing.assert_array_equal(q_values[terminal], 0.0)


@given(seed=seeds, gamma=discounts, num_terminal=st.integers(0, 2))
def test_q_satisfies_its_bellman_equation_and_averages_to_v(seed, gamma, num_terminal):
    transition, reward, policy, terminal = random_mdp(seed, num_terminal=num_terminal)
    q_values = action_values(transition, reward, policy, gamma, terminal=terminal)
    values = state_values(transition, reward, policy, gamma, terminal=terminal)
    num_states, num_actions, _ = transition.shape
    for s in np.flatnonzero(~terminal):
        # V(s) = sum_a pi(a|s) Q(s, a)
        assert math.isclose(policy[s] @ q_values[s], values[s], rel_tol=1e-10, abs_tol=1e-10)
        for a in range(num_actions):
            target = 0.0
            for t in range(num_states):
                following = 0.0 if terminal[t] else policy[t] @ q_values[t]
                target += transition[s, a, t] * (reward[s, a, t] + gamma * following)
            assert math.isclose(q_values[s, a], target, rel_tol=1e-10, abs_tol=1e-10)


@pytest.mark.parametrize("gamma", [1.0, 0.7])
@pytest.mark.parametrize("seed", [0, 4])
def test_action_values_equal_enumeration_of_forced_first_actions(seed, gamma):
    # In a forward MDP a state is never revisited, so Q(s, a) is the value from s of the
    # policy changed to pick a at s.
    transition, reward, policy, terminal = forward_mdp(seed)
    q_values = action_values(transition, reward, policy, gamma, terminal=terminal)
    for s in range(3):
        for a in range(2):
            forced = policy.copy()
            forced[s] = np.eye(2)[a]
            exact = enumerated_value(transition, reward, forced, np.eye(4)[s], 3, gamma, terminal)
            assert math.isclose(q_values[s, a], exact, rel_tol=1e-12, abs_tol=1e-12)


@given(seed=seeds, gamma=discounts)
def test_advantages_are_q_minus_v_and_average_to_zero(seed, gamma):
    transition, reward, policy, terminal = random_mdp(seed)
    advantages = advantage_values(transition, reward, policy, gamma, terminal=terminal)
    q_values = action_values(transition, reward, policy, gamma, terminal=terminal)
    values = state_values(transition, reward, policy, gamma, terminal=terminal)
    np.testing.assert_allclose(advantages[~terminal], (q_values - values[:, None])[~terminal])
    np.testing.assert_array_equal(advantages[terminal], 0.0)
    np.testing.assert_allclose((policy * advantages).sum(axis=1)[~terminal], 0.0, atol=1e-10)


# --- sampled episodes ---------------------------------------------------------------------------


def test_sample_episodes_format_and_padding():
    transition, reward, policy, terminal = random_mdp(2, num_states=3, num_terminal=1)
    initial = np.array([0.5, 0.3, 0.2])  # some episodes start in the terminal state
    horizon, count = 6, 500
    batch = sample_episodes(
        transition,
        reward,
        policy,
        initial,
        horizon,
        seed=1,
        num_episodes=count,
        terminal=terminal,
    )
    assert set(batch) == {"states", "actions", "rewards", "terminated", "truncated"}
    assert batch["states"].shape == (count, horizon + 1)
    for key in ("actions", "rewards", "terminated", "truncated"):
        assert batch[key].shape == (count, horizon)
    assert batch["states"].dtype == np.int64 and batch["actions"].dtype == np.int64
    assert batch["terminated"].dtype == np.bool_ and batch["truncated"].dtype == np.bool_
    started_terminal = 0
    for i in range(count):
        states, actions = batch["states"][i], batch["actions"][i]
        rewards = batch["rewards"][i]
        terminated, truncated = batch["terminated"][i], batch["truncated"][i]
        length = int(np.sum(actions >= 0))
        assert np.all(actions[:length] >= 0) and np.all(actions[length:] == -1)
        np.testing.assert_array_equal(rewards[length:], 0.0)
        np.testing.assert_array_equal(states[length:], states[length])
        assert terminated.sum() <= 1 and truncated.sum() <= 1
        assert not np.any(terminated & truncated)
        for t in range(length):
            assert transition[states[t], actions[t], states[t + 1]] > 0.0
            assert policy[states[t], actions[t]] > 0.0
            assert rewards[t] == reward[states[t], actions[t], states[t + 1]]
            assert not terminal[states[t]]
        if length == 0:
            started_terminal += 1
            assert terminal[states[0]] and not terminated.any() and not truncated.any()
        elif terminal[states[length]]:
            assert terminated[length - 1] and not truncated.any()
        else:
            assert length == horizon and truncated[-1] and not terminated.any()
    assert started_terminal > 0


def test_sample_episodes_is_reproducible():
    transition, reward, policy, terminal = random_mdp(3)
    args = (transition, reward, policy, [1.0, 0.0, 0.0, 0.0], 5)
    first = sample_episodes(*args, seed=7, num_episodes=20, terminal=terminal)
    again = sample_episodes(*args, seed=7, num_episodes=20, terminal=terminal)
    other = sample_episodes(*args, seed=8, num_episodes=20, terminal=terminal)
    for key in first:
        np.testing.assert_array_equal(first[key], again[key])
    assert any(not np.array_equal(first[key], other[key]) for key in first)


def test_sampled_episode_frequencies_match_enumerated_probabilities():
    transition, reward, policy, terminal = random_mdp(6, num_states=3, sparse=True)
    initial = np.array([0.6, 0.4, 0.0])
    horizon, count = 3, 20_000
    batch = sample_episodes(
        transition,
        reward,
        policy,
        initial,
        horizon,
        seed=0,
        num_episodes=count,
        terminal=terminal,
    )
    seen = Counter()
    for states, actions in zip(batch["states"], batch["actions"], strict=True):
        length = int(np.sum(actions >= 0))
        seen[(tuple(states[: length + 1]), tuple(actions[:length]))] += 1
    episodes = enumerate_episodes(transition, reward, policy, initial, horizon, terminal)
    listed = {(e["states"], e["actions"]): e["probability"] for e in episodes}
    assert set(seen) <= set(listed)  # nothing impossible is ever sampled
    for key, probability in listed.items():
        frequency = seen[key] / count
        assert abs(frequency - probability) < 5.0 * math.sqrt(probability / count) + 1e-4


# --- enumerated episodes ------------------------------------------------------------------------


@given(seed=seeds, horizon=st.integers(1, 4), sparse=st.booleans())
def test_enumerated_probabilities_are_products_and_sum_to_one(seed, horizon, sparse):
    transition, reward, policy, terminal = random_mdp(seed, num_states=3, sparse=sparse)
    rng = np.random.default_rng(seed)
    initial = random_rows(rng, (3,), sparse=sparse)
    episodes = enumerate_episodes(transition, reward, policy, initial, horizon, terminal)
    assert math.isclose(sum(e["probability"] for e in episodes), 1.0, rel_tol=1e-12)
    keys = set()
    for episode in episodes:
        states, actions, rewards = episode["states"], episode["actions"], episode["rewards"]
        assert len(states) == len(actions) + 1 == len(rewards) + 1
        assert len(actions) == horizon or terminal[states[-1]]
        assert not any(terminal[s] for s in states[:-1])
        probability = initial[states[0]]
        for t, a in enumerate(actions):
            probability *= policy[states[t], a] * transition[states[t], a, states[t + 1]]
            assert rewards[t] == reward[states[t], a, states[t + 1]]
        assert probability > 0.0
        assert math.isclose(episode["probability"], probability, rel_tol=1e-12)
        keys.add((states, actions))
    assert len(keys) == len(episodes)  # no episode listed twice


def test_enumeration_from_a_terminal_state_is_the_empty_episode():
    transition, reward, policy, terminal = random_mdp(0)
    episodes = enumerate_episodes(transition, reward, policy, np.eye(4)[3], 5, terminal)
    assert episodes == [{"states": (3,), "actions": (), "rewards": (), "probability": 1.0}]
