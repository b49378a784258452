"""The reference solutions of chapter 1's code exercises are right.

Every solution is checked two ways: against the library and against an independent hand
computation. The files themselves (solution markers, starters, imports, docstring examples)
are checked for every exercise in ``test_solution_files.py``.
"""

from __future__ import annotations

import numpy as np
import pytest

from rlfound import advantages, bandits, importance, mdp
from tests._solutions import load_solution
from tests.oracles import bandit_objective_by_hand, central_differences

bellman = load_solution("bellman_arithmetic")
score = load_solution("score_function_gradient")
sampling = load_solution("importance_sampling")
gae = load_solution("gae_recursion")


# --- Bellman arithmetic ------------------------------------------------------------------


def test_chain_values_for_the_exercise_numbers():
    np.testing.assert_allclose(bellman.chain_values(0.8), [0.8, 1.0, 0.0], rtol=0, atol=1e-12)


@pytest.mark.parametrize("gamma", [0.0, 0.3, 0.8, 0.9, 0.99, 1.0])
def test_chain_values_match_the_hand_values(gamma):
    values = bellman.chain_values(gamma)
    assert values.shape == (3,)
    assert values.dtype == np.float64
    # By hand: v(terminal) = 0, v(1) = 1 + gamma * 0, v(0) = 0 + gamma * v(1).
    np.testing.assert_allclose(values, [gamma, 1.0, 0.0], rtol=0, atol=1e-12)


@pytest.mark.parametrize("gamma", [0.0, 0.8, 1.0])
def test_chain_values_match_the_library(gamma):
    np.testing.assert_allclose(bellman.chain_values(gamma), mdp.tiny_chain(gamma), atol=1e-12)


@pytest.mark.parametrize("gamma", [-0.1, 1.5, float("nan")])
def test_chain_values_rejects_a_bad_gamma(gamma):
    with pytest.raises(ValueError, match=r"^gamma"):
        bellman.chain_values(gamma)


# --- Score-function gradient -------------------------------------------------------------


def random_bandits():
    rng = np.random.default_rng(1)
    for num_actions in (1, 2, 3, 7):
        for _ in range(5):
            yield rng.normal(scale=2.0, size=num_actions), rng.normal(size=num_actions)


def test_bandit_gradient_matches_central_differences():
    for logits, action_rewards in random_bandits():
        gradient = score.bandit_gradient(logits, action_rewards)
        assert gradient.shape == logits.shape
        numerical = central_differences(
            lambda theta, q=action_rewards: bandit_objective_by_hand(theta, q), logits
        )
        np.testing.assert_allclose(gradient, numerical, rtol=1e-6, atol=1e-8)


def test_bandit_gradient_matches_the_library():
    for logits, action_rewards in random_bandits():
        np.testing.assert_allclose(
            score.bandit_gradient(logits, action_rewards),
            bandits.exact_bandit_gradient(logits, action_rewards),
            rtol=1e-10,
            atol=1e-12,
        )


def test_bandit_gradient_sums_to_zero():
    # Shifting every logit leaves the policy unchanged, so the gradient has no such component.
    for logits, action_rewards in random_bandits():
        assert abs(score.bandit_gradient(logits, action_rewards).sum()) < 1e-12


def test_bandit_gradient_for_the_chapter_bandit_at_uniform_logits():
    q = np.array([0.2, 0.5, 1.0])
    # Uniform policy: pi . q = 17/30, so the gradient is (q - 17/30) / 3.
    np.testing.assert_allclose(score.bandit_gradient(np.zeros(3), q), (q - 17 / 30) / 3)


def test_bandit_gradient_is_finite_and_zero_at_extreme_logits():
    q = np.array([0.2, 0.5, 1.0])
    gradient = score.bandit_gradient(np.array([800.0, 0.0, -800.0]), q)
    assert np.all(np.isfinite(gradient))
    np.testing.assert_allclose(gradient, 0.0, atol=1e-12)


def test_bandit_gradient_rejects_mismatched_shapes():
    with pytest.raises(ValueError, match=r"^action_rewards"):
        score.bandit_gradient(np.zeros(3), np.ones(2))


# --- Importance sampling -----------------------------------------------------------------


def test_importance_sampling_value_for_the_exercise_numbers():
    value = sampling.importance_sampling_value([0.25, 0.75], [0.8, 0.2], [1.0, 3.0])
    # By hand: 0.8 * (0.25 / 0.8) * 1 + 0.2 * (0.75 / 0.2) * 3 = 0.25 + 2.25.
    assert value == pytest.approx(2.5, abs=1e-12)


def test_importance_sampling_value_matches_the_library_on_exact_frequencies():
    # A logged data set whose action frequencies are exactly mu = (0.8, 0.2).
    actions = np.array([0] * 8 + [1] * 2)
    rewards = np.array([1.0, 3.0])[actions]
    logged = importance.off_policy_value(actions, rewards, [0.25, 0.75], [0.8, 0.2])
    value = sampling.importance_sampling_value([0.25, 0.75], [0.8, 0.2], [1.0, 3.0])
    assert value == pytest.approx(logged, abs=1e-12)


def test_importance_sampling_value_equals_the_target_expectation():
    rng = np.random.default_rng(2)
    for num_actions in (1, 2, 5, 10):
        for _ in range(10):
            target = rng.dirichlet(np.ones(num_actions))
            behavior = rng.dirichlet(np.ones(num_actions))
            rewards = rng.normal(size=num_actions)
            value = sampling.importance_sampling_value(target, behavior, rewards)
            assert value == pytest.approx(float(target @ rewards), rel=1e-10, abs=1e-12)


def test_importance_sampling_allows_zero_behavior_where_the_target_is_zero():
    value = sampling.importance_sampling_value([0.5, 0.5, 0.0], [0.25, 0.25, 0.5], [2.0, 4.0, 9.0])
    assert value == pytest.approx(3.0)


def test_importance_sampling_value_requires_support():
    with pytest.raises(ValueError, match=r"^behavior_probs"):
        sampling.importance_sampling_value([0.5, 0.5], [1.0, 0.0], [1.0, 3.0])


@pytest.mark.parametrize(
    ("arguments", "name"),
    [
        (([0.5, 0.6], [0.5, 0.5], [1.0, 3.0]), "target_probs"),
        (([0.5, 0.5], [1.5, -0.5], [1.0, 3.0]), "behavior_probs"),
        (([0.5, 0.5], [0.2, 0.3, 0.5], [1.0, 3.0]), "behavior_probs"),
        (([0.5, 0.5], [0.5, 0.5], [1.0, 3.0, 4.0]), "rewards"),
    ],
)
def test_importance_sampling_value_rejects_bad_input(arguments, name):
    with pytest.raises(ValueError, match=rf"^{name}"):
        sampling.importance_sampling_value(*arguments)


# --- GAE ---------------------------------------------------------------------------------


def random_trajectories():
    rng = np.random.default_rng(3)
    for horizon in (1, 2, 8, 33):
        yield rng.normal(size=horizon), rng.normal(size=horizon + 1)


@pytest.mark.parametrize("function", ["gae_recursive", "gae_explicit"])
@pytest.mark.parametrize("gamma", [0.0, 0.9, 1.0])
@pytest.mark.parametrize("lam", [0.0, 0.95, 1.0])
def test_gae_matches_the_library(function, gamma, lam):
    for rewards, values in random_trajectories():
        ours = getattr(gae, function)(rewards, values, gamma, lam)
        assert ours.shape == rewards.shape
        library = advantages.gae_explicit(rewards, values, gamma, lam)
        np.testing.assert_allclose(ours, library, rtol=1e-10, atol=1e-12)


GAMMA = 0.9
REWARDS_6 = np.random.default_rng(4).normal(size=6)
VALUES_7 = np.random.default_rng(5).normal(size=7)


@pytest.mark.parametrize("function", ["gae_recursive", "gae_explicit"])
def test_gae_at_lambda_zero_is_the_td_error(function):
    deltas = REWARDS_6 + GAMMA * VALUES_7[1:] - VALUES_7[:-1]
    result = getattr(gae, function)(REWARDS_6, VALUES_7, GAMMA, 0.0)
    np.testing.assert_allclose(result, deltas, atol=1e-12)


@pytest.mark.parametrize("function", ["gae_recursive", "gae_explicit"])
def test_gae_at_lambda_one_is_the_bootstrapped_return_minus_the_value(function):
    expected = [
        sum(GAMMA**k * REWARDS_6[t + k] for k in range(6 - t))
        + GAMMA ** (6 - t) * VALUES_7[6]
        - VALUES_7[t]
        for t in range(6)
    ]
    result = getattr(gae, function)(REWARDS_6, VALUES_7, GAMMA, 1.0)
    np.testing.assert_allclose(result, expected, atol=1e-12)


@pytest.mark.parametrize("function", ["gae_recursive", "gae_explicit"])
@pytest.mark.parametrize(
    ("arguments", "name"),
    [
        (([1.0, 2.0], [0.0, 0.0], 0.9, 0.9), "values"),
        (([1.0, 2.0], [0.0, 0.0, 0.0], 1.5, 0.9), "gamma"),
        (([1.0, 2.0], [0.0, 0.0, 0.0], 0.9, -0.1), "lam"),
    ],
)
def test_gae_rejects_bad_input(function, arguments, name):
    with pytest.raises(ValueError, match=rf"^{name}"):
        getattr(gae, function)(*arguments)
