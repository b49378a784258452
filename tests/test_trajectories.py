"""Trajectories and REINFORCE in tabular MDPs (chapter 3).

eq-trajectory-probability, eq-trajectory-score, eq-reinforce-total, eq-reinforce-rtg,
eq-loo-baseline. Unbiasedness is checked exactly: the expectation over every enumerated
episode of an estimator equals a finite-difference gradient of the exact objective.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rlfound.groups import group_normalized_advantages, leave_one_out_advantages
from rlfound.mdp import enumerate_episodes, sample_episodes
from rlfound.policy_gradient import (
    enumerate_group_gradient,
    exact_bandit_gradient,
    expected_return,
    reinforce_trajectory_gradient,
    tabular_softmax_policy,
    trajectory_log_probability,
    trajectory_score,
)


def reference_softmax_rows(logits):
    z = np.exp(logits - logits.max(axis=1, keepdims=True))
    return z / z.sum(axis=1, keepdims=True)


def central_differences(f, x, h=1e-6):
    x = np.asarray(x, dtype=np.float64)
    grad = np.zeros_like(x)
    for i in range(x.size):
        step = np.zeros_like(x)
        step.flat[i] = h
        grad.flat[i] = (f(x + step) - f(x - step)) / (2 * h)
    return grad


def random_rows(rng, shape, sparse=False):
    weights = rng.random(shape)
    if sparse:
        weights[rng.random(shape) < 0.4] = 0.0
        empty = weights.sum(axis=-1) == 0.0
        weights[empty, 0] = 1.0
    return weights / weights.sum(axis=-1, keepdims=True)


def forward_mdp(seed, num_states=4, num_actions=2):
    """Transitions only move to higher states; the last state is terminal and absorbing.
    Every episode ends within S - 1 steps, so enumeration with that horizon is exact."""
    rng = np.random.default_rng(seed)
    transition = np.zeros((num_states, num_actions, num_states))
    for s in range(num_states - 1):
        transition[s, :, s + 1 :] = random_rows(rng, (num_actions, num_states - 1 - s))
    transition[-1, :, -1] = 1.0
    reward = rng.normal(size=(num_states, num_actions, num_states))
    reward[-1] = 0.0
    terminal = np.zeros(num_states, dtype=bool)
    terminal[-1] = True
    logits = rng.normal(size=(num_states, num_actions))
    initial = random_rows(rng, (num_states,))
    initial[-1] = 0.0
    return logits, transition, reward, initial / initial.sum(), terminal


def looping_mdp(seed, num_states=2, num_actions=2):
    """A small MDP with cycles and no terminal state (episodes end only by the horizon)."""
    rng = np.random.default_rng(seed)
    transition = random_rows(rng, (num_states, num_actions, num_states))
    reward = rng.normal(size=(num_states, num_actions, num_states))
    logits = rng.normal(size=(num_states, num_actions))
    initial = random_rows(rng, (num_states,))
    return logits, transition, reward, initial


def enumerate_with(logits, transition, reward, initial, horizon, terminal=None):
    policy = reference_softmax_rows(logits)
    return enumerate_episodes(transition, reward, policy, initial, horizon, terminal)


def finite_horizon_objective(logits, transition, reward, initial, horizon, gamma):
    """J_H(theta) = sum_tau p(tau) sum_t gamma^t r_t over all episodes of H steps."""
    total = 0.0
    for episode in enumerate_with(logits, transition, reward, initial, horizon):
        discounted = sum(gamma**t * r for t, r in enumerate(episode["rewards"]))
        total += episode["probability"] * discounted
    return total


def expected_estimate(logits, episodes, gamma, **options):
    total = np.zeros_like(logits)
    for episode in episodes:
        estimate = reinforce_trajectory_gradient(
            logits, episode["states"], episode["actions"], episode["rewards"], gamma, **options
        )
        total += episode["probability"] * estimate
    return total


def estimator_variance(logits, episodes, gamma, **options):
    """E||g - E g||^2, exactly."""
    estimates = [
        reinforce_trajectory_gradient(
            logits, e["states"], e["actions"], e["rewards"], gamma, **options
        )
        for e in episodes
    ]
    probabilities = np.array([e["probability"] for e in episodes])
    mean = np.tensordot(probabilities, estimates, axes=1)
    return float(
        sum(p * np.sum((g - mean) ** 2) for p, g in zip(probabilities, estimates, strict=True))
    )


seeds = st.integers(0, 2**32 - 1)


# --- policy and trajectory probability -----------------------------------------------------------


def test_tabular_softmax_policy_rows():
    logits = np.random.default_rng(0).normal(size=(3, 4)) * 5
    np.testing.assert_allclose(tabular_softmax_policy(logits), reference_softmax_rows(logits))


@given(seed=seeds)
def test_trajectory_log_probability_matches_enumerated_probability(seed):
    logits, transition, reward, initial, terminal = forward_mdp(seed)
    for episode in enumerate_with(logits, transition, reward, initial, 3, terminal):
        log_p = trajectory_log_probability(
            logits, transition, initial, episode["states"], episode["actions"]
        )
        assert math.isclose(log_p, math.log(episode["probability"]), rel_tol=1e-12)


def test_trajectory_log_probability_of_sampled_padded_episodes():
    logits, transition, reward, initial, terminal = forward_mdp(1)
    policy = reference_softmax_rows(logits)
    batch = sample_episodes(
        transition, reward, policy, initial, 5, seed=0, num_episodes=30, terminal=terminal
    )
    for states, actions in zip(batch["states"], batch["actions"], strict=True):
        length = int(np.sum(actions >= 0))
        expected = math.log(initial[states[0]])
        for t in range(length):
            expected += math.log(policy[states[t], actions[t]])
            expected += math.log(transition[states[t], actions[t], states[t + 1]])
        log_p = trajectory_log_probability(logits, transition, initial, states, actions)
        assert math.isclose(log_p, expected, rel_tol=1e-12)


def test_impossible_trajectory_has_log_probability_minus_infinity():
    logits, transition, _, initial, _ = forward_mdp(2)
    # Transitions never move backwards, so 1 -> 0 is impossible.
    assert trajectory_log_probability(logits, transition, initial, [1, 0], [0]) == -math.inf


# --- the score ------------------------------------------------------------------------------------


@given(seed=seeds, data=st.data())
def test_trajectory_score_matches_finite_differences(seed, data):
    logits, transition, reward, initial = looping_mdp(seed, num_states=3)
    policy = reference_softmax_rows(logits)
    batch = sample_episodes(
        transition, reward, policy, initial, data.draw(st.integers(1, 6)), seed=seed % 1000
    )
    states, actions = batch["states"][0], batch["actions"][0]
    score = trajectory_score(logits, states, actions)

    def log_p(theta):
        return trajectory_log_probability(theta, transition, initial, states, actions)

    np.testing.assert_allclose(score, central_differences(log_p, logits), atol=1e-7)
    np.testing.assert_allclose(score.sum(axis=1), 0.0, atol=1e-12)


def test_transition_does_not_enter_the_score():
    logits, transition, _reward, initial = looping_mdp(3, num_states=3)
    other = random_rows(np.random.default_rng(99), transition.shape)
    states, actions = [0, 2, 2, 1], [1, 0, 1]

    def gradient_under(dynamics):
        return central_differences(
            lambda theta: trajectory_log_probability(theta, dynamics, initial, states, actions),
            logits,
        )

    original, perturbed = gradient_under(transition), gradient_under(other)
    assert not math.isclose(
        trajectory_log_probability(logits, transition, initial, states, actions),
        trajectory_log_probability(logits, other, initial, states, actions),
    )
    np.testing.assert_allclose(original, perturbed, atol=1e-7)
    np.testing.assert_allclose(trajectory_score(logits, states, actions), original, atol=1e-7)


def test_score_skips_padding():
    logits = np.random.default_rng(4).normal(size=(3, 2))
    np.testing.assert_array_equal(
        trajectory_score(logits, [0, 1, 2, 2, 2], [1, 0, -1, -1]),
        trajectory_score(logits, [0, 1, 2], [1, 0]),
    )


# --- the objective ------------------------------------------------------------------------------


@pytest.mark.parametrize("gamma", [1.0, 0.9])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_expected_return_equals_enumeration(seed, gamma):
    logits, transition, reward, initial, terminal = forward_mdp(seed)
    exact = 0.0
    for episode in enumerate_with(logits, transition, reward, initial, 3, terminal):
        exact += episode["probability"] * sum(
            gamma**t * r for t, r in enumerate(episode["rewards"])
        )
    value = expected_return(logits, transition, reward, initial, gamma, terminal=terminal)
    assert math.isclose(value, exact, rel_tol=1e-12, abs_tol=1e-12)


# --- REINFORCE is exactly unbiased ------------------------------------------------------------


@pytest.mark.parametrize("reward_to_go", [False, True])
@pytest.mark.parametrize("gamma", [1.0, 0.8])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_reinforce_is_unbiased_on_a_terminating_mdp(seed, gamma, reward_to_go):
    logits, transition, reward, initial, terminal = forward_mdp(seed)
    gradient = central_differences(
        lambda theta: expected_return(theta, transition, reward, initial, gamma, terminal),
        logits,
    )
    episodes = enumerate_with(logits, transition, reward, initial, 3, terminal)
    expectation = expected_estimate(logits, episodes, gamma, reward_to_go=reward_to_go)
    np.testing.assert_allclose(expectation, gradient, atol=1e-8)
    baseline = np.random.default_rng(seed).normal(size=4) * 3
    with_baseline = expected_estimate(
        logits, episodes, gamma, reward_to_go=reward_to_go, baseline=baseline
    )
    np.testing.assert_allclose(with_baseline, gradient, atol=1e-8)


@pytest.mark.parametrize("reward_to_go", [False, True])
@pytest.mark.parametrize("gamma", [1.0, 0.7])
def test_reinforce_is_unbiased_for_the_finite_horizon_objective(gamma, reward_to_go):
    # No terminal state: episodes are cut at H steps and the estimator targets J_H.
    logits, transition, reward, initial = looping_mdp(8)
    horizon = 4
    gradient = central_differences(
        lambda theta: finite_horizon_objective(theta, transition, reward, initial, horizon, gamma),
        logits,
    )
    episodes = enumerate_with(logits, transition, reward, initial, horizon)
    expectation = expected_estimate(logits, episodes, gamma, reward_to_go=reward_to_go)
    np.testing.assert_allclose(expectation, gradient, atol=1e-8)


def test_baseline_term_has_zero_expectation():
    # E[sum_t gamma^t b(s_t) grad log pi(a_t|s_t)] = 0: with zero rewards only that term is left.
    logits, transition, reward, initial, terminal = forward_mdp(5)
    episodes = enumerate_with(logits, transition, reward, initial, 3, terminal)
    silent = [{**e, "rewards": tuple(0.0 for _ in e["rewards"])} for e in episodes]
    baseline = np.array([2.0, -1.0, 5.0, 0.0])
    for gamma in (1.0, 0.6):
        term = expected_estimate(logits, silent, gamma, baseline=baseline)
        np.testing.assert_allclose(term, 0.0, atol=1e-14)
        assert any(
            np.abs(
                reinforce_trajectory_gradient(
                    logits, e["states"], e["actions"], e["rewards"], gamma, baseline=baseline
                )
            ).max()
            > 0.1
            for e in silent
        )


def test_reward_to_go_has_lower_variance():
    # Reward arrives at the first step only; later actions add pure noise to the total-return
    # estimator and nothing to the reward-to-go estimator.
    logits, transition, reward, _initial, terminal = forward_mdp(6, num_states=5)
    reward[:, :, :] = 0.0
    reward[0] = np.array([[1.0], [3.0]])
    episodes = enumerate_with(logits, transition, reward, np.eye(5)[0], 4, terminal)
    total = estimator_variance(logits, episodes, 1.0, reward_to_go=False)
    to_go = estimator_variance(logits, episodes, 1.0, reward_to_go=True)
    assert to_go < 0.9 * total


def test_reinforce_by_hand():
    # One state, actions 0 then 1 with rewards 1 then 2, gamma = 0.5, uniform policy.
    logits = np.zeros((1, 2))
    states, actions, rewards = [0, 0, 0], [0, 1], [1.0, 2.0]
    first, second = np.array([[0.5, -0.5]]), np.array([[-0.5, 0.5]])
    total = 1.0 + 0.5 * 2.0
    np.testing.assert_allclose(
        reinforce_trajectory_gradient(logits, states, actions, rewards, 0.5, reward_to_go=False),
        total * (first + second),
    )
    # gamma^0 G_0 = 2 and gamma^1 G_1 = 0.5 * 2 = 1.
    np.testing.assert_allclose(
        reinforce_trajectory_gradient(logits, states, actions, rewards, 0.5),
        2.0 * first + 1.0 * second,
    )
    np.testing.assert_allclose(
        reinforce_trajectory_gradient(logits, states, actions, rewards, 0.5, baseline=[1.0]),
        (2.0 - 1.0) * first + (1.0 - 0.5) * second,
    )


# --- group estimators on a bandit ---------------------------------------------------------------


def loop_group_expectation(logits, q, group_size, advantage_fn):
    """Independent enumeration with nested index arithmetic instead of itertools."""
    pi = np.exp(logits - logits.max())
    pi /= pi.sum()
    num_actions = len(q)
    total = np.zeros(num_actions)
    for code in range(num_actions**group_size):
        group = [(code // num_actions**i) % num_actions for i in range(group_size)]
        probability = np.prod([pi[a] for a in group])
        advantages = advantage_fn(np.array([q[a] for a in group]))
        for i, a in enumerate(group):
            total += probability * advantages[i] * (np.eye(num_actions)[a] - pi) / group_size
    return total


@given(seed=seeds, group_size=st.integers(2, 4))
def test_leave_one_out_group_gradient_is_exact(seed, group_size):
    rng = np.random.default_rng(seed)
    logits, q = rng.normal(size=3), rng.normal(size=3)
    expectation = enumerate_group_gradient(logits, q, group_size, leave_one_out_advantages)
    np.testing.assert_allclose(expectation, exact_bandit_gradient(logits, q), atol=1e-12)


@given(seed=seeds, group_size=st.integers(1, 4))
def test_mean_including_self_shrinks_by_g_minus_one_over_g(seed, group_size):
    rng = np.random.default_rng(seed)
    logits, q = rng.normal(size=3), rng.normal(size=3)

    def centred(rewards):
        return rewards - rewards.mean()

    expectation = enumerate_group_gradient(logits, q, group_size, centred)
    np.testing.assert_allclose(
        expectation, (group_size - 1) / group_size * exact_bandit_gradient(logits, q), atol=1e-12
    )


@given(seed=seeds, group_size=st.integers(1, 3))
def test_enumerate_group_gradient_matches_independent_loop(seed, group_size):
    rng = np.random.default_rng(seed)
    logits, q = rng.normal(size=3), rng.normal(size=3)
    for advantage_fn in (lambda r: r**2 - 1.0, lambda r: np.cumsum(r)):
        np.testing.assert_allclose(
            enumerate_group_gradient(logits, q, group_size, advantage_fn),
            loop_group_expectation(logits, q, group_size, advantage_fn),
            atol=1e-12,
        )


@pytest.mark.parametrize("group_size", [2, 3, 5])
def test_constant_reward_gives_zero_expected_centred_gradient(group_size):
    # Section-19 invariant: if every action earns the same reward there is nothing to learn,
    # and a valid baseline-centred estimator has expectation exactly 0.
    logits = np.array([0.4, -1.0, 1.3])
    q = np.full(3, 0.7)
    for advantage_fn in (
        leave_one_out_advantages,
        lambda rewards: rewards - 0.25,  # constant baseline, wrong on purpose
        lambda rewards: rewards - rewards.mean(),
        group_normalized_advantages,
    ):
        np.testing.assert_allclose(
            enumerate_group_gradient(logits, q, group_size, advantage_fn), 0.0, atol=1e-15
        )
    np.testing.assert_allclose(exact_bandit_gradient(logits, q), 0.0, atol=1e-15)


def test_trajectory_log_probability_ignores_rows_of_terminal_states():
    # State 1 is terminal and its rows are all zero: they are never used.
    transition = np.zeros((2, 2, 2))
    transition[0, :, :] = [[0.25, 0.75], [0.5, 0.5]]
    logits = np.array([[0.0, np.log(3.0)], [0.0, 0.0]])
    terminal = np.array([False, True])
    log_p = trajectory_log_probability(
        logits, transition, [1.0, 0.0], states=[0, 0, 1], actions=[1, 0], terminal=terminal
    )
    # pi(1|0) = 3/4, P(0|0,1) = 1/2, pi(0|0) = 1/4, P(1|0,0) = 3/4
    assert np.isclose(log_p, np.log(0.75 * 0.5 * 0.25 * 0.75))
    with pytest.raises(ValueError, match=r"^transition"):
        trajectory_log_probability(logits, transition, [1.0, 0.0], states=[0, 1], actions=[0])
    with pytest.raises(ValueError, match=r"^actions must end"):
        trajectory_log_probability(
            logits, transition, [0.0, 1.0], states=[1, 0], actions=[0], terminal=terminal
        )
