"""The reference solutions of chapter 1's code exercises are right.

Every solution is checked two ways: against the library and against an independent hand
computation. The files themselves (solution markers, starters, imports, docstring examples)
are checked for every exercise in ``test_solution_files.py``.
"""

from __future__ import annotations

import numpy as np
import pytest

from rlfound import advantages, gradcheck, importance, mdp, policy_gradient
from tests._solutions import load_solution

bellman = load_solution("bellman_arithmetic")
score = load_solution("score_function_gradient")
sampling = load_solution("importance_sampling")
gae = load_solution("gae_recursion")


# --- Bellman arithmetic ------------------------------------------------------------------


def test_chain_values_for_the_exercise_numbers():
    np.testing.assert_allclose(bellman.chain_values(0.8), [0.8, 1.0, 0.0], rtol=0, atol=1e-12)


@pytest.mark.parametrize("gamma", [0.0, 0.3, 0.8, 0.9, 0.99, 1.0])
def test_chain_values_match_hand_values_and_the_library(gamma):
    values = bellman.chain_values(gamma)
    assert values.shape == (3,)
    assert values.dtype == np.float64
    # By hand: v(terminal) = 0, v(1) = 1 + gamma * 0, v(0) = 0 + gamma * v(1).
    np.testing.assert_allclose(values, [gamma, 1.0, 0.0], rtol=0, atol=1e-12)
    np.testing.assert_allclose(values, mdp.tiny_chain(gamma), rtol=0, atol=1e-12)
    transition, reward, _ = mdp.tiny_chain_model()
    residual = mdp.bellman_residual(values, transition, reward, gamma)
    np.testing.assert_allclose(residual, 0.0, atol=1e-12)


@pytest.mark.parametrize("gamma", [-0.1, 1.5, float("nan")])
def test_chain_values_rejects_a_bad_gamma(gamma):
    with pytest.raises(ValueError, match=r"^gamma"):
        bellman.chain_values(gamma)


# --- Score-function gradient -------------------------------------------------------------


def hand_bandit_objective(logits: np.ndarray, action_values: np.ndarray) -> float:
    """J(theta) = sum_a softmax(theta)_a q(a), written out independently of both codes."""
    weights = np.exp(logits - np.max(logits))
    return float(weights @ action_values / weights.sum())


def test_bandit_gradient_matches_the_library_and_finite_differences():
    rng = np.random.default_rng(1)
    for num_actions in (1, 2, 3, 7):
        for _ in range(5):
            logits = rng.normal(scale=2.0, size=num_actions)
            action_values = rng.normal(size=num_actions)
            gradient = score.bandit_gradient(logits, action_values)
            assert gradient.shape == (num_actions,)
            expected = policy_gradient.exact_bandit_gradient(logits, action_values)
            np.testing.assert_allclose(gradient, expected, rtol=1e-10, atol=1e-12)
            # Central differences, one logit at a time.
            eps = 1e-6
            numerical = np.zeros(num_actions)
            for a in range(num_actions):
                step = np.zeros(num_actions)
                step[a] = eps
                numerical[a] = (
                    hand_bandit_objective(logits + step, action_values)
                    - hand_bandit_objective(logits - step, action_values)
                ) / (2 * eps)
            np.testing.assert_allclose(gradient, numerical, rtol=1e-6, atol=1e-8)
            check = gradcheck.check_gradient(
                lambda theta, q=action_values: policy_gradient.bandit_objective(theta, q),
                lambda theta, q=action_values: score.bandit_gradient(theta, q),
                logits,
            )
            assert check.passed, check
            # Shifting every logit leaves the policy unchanged, so the gradient sums to 0.
            assert abs(gradient.sum()) < 1e-12


def test_bandit_gradient_for_the_chapter_bandit_and_extreme_logits():
    q = np.array([0.2, 0.5, 1.0])
    # Uniform policy: pi . q = 17/30, so the gradient is (q - 17/30) / 3.
    np.testing.assert_allclose(score.bandit_gradient(np.zeros(3), q), (q - 17 / 30) / 3)
    gradient = score.bandit_gradient(np.array([800.0, 0.0, -800.0]), q)
    assert np.all(np.isfinite(gradient))
    np.testing.assert_allclose(gradient, 0.0, atol=1e-12)


def test_bandit_gradient_rejects_mismatched_shapes():
    with pytest.raises(ValueError, match=r"^action_values"):
        score.bandit_gradient(np.zeros(3), np.ones(2))


# --- Importance sampling -----------------------------------------------------------------


def test_importance_sampling_value_for_the_exercise_numbers():
    value = sampling.importance_sampling_value([0.25, 0.75], [0.8, 0.2], [1.0, 3.0])
    # By hand: 0.8 * (0.25 / 0.8) * 1 + 0.2 * (0.75 / 0.2) * 3 = 0.25 + 2.25.
    assert value == pytest.approx(2.5, abs=1e-12)
    # A logged data set whose action frequencies are exactly b = (0.8, 0.2).
    actions = np.array([0] * 8 + [1] * 2)
    rewards = np.array([1.0, 3.0])[actions]
    logged = importance.off_policy_value(actions, rewards, [0.25, 0.75], [0.8, 0.2])
    assert logged == pytest.approx(value, abs=1e-12)


def test_importance_sampling_value_equals_the_target_expectation():
    rng = np.random.default_rng(2)
    for num_actions in (1, 2, 5, 10):
        for _ in range(10):
            target = rng.dirichlet(np.ones(num_actions))
            behavior = rng.dirichlet(np.ones(num_actions))
            rewards = rng.normal(size=num_actions)
            value = sampling.importance_sampling_value(target, behavior, rewards)
            assert value == pytest.approx(float(target @ rewards), rel=1e-10, abs=1e-12)
            # The library's estimator on a data set with one row per action, each reward
            # scaled by K b(a), has mean sum_a b(a) rho(a) r(a): the same expectation.
            actions = np.arange(num_actions)
            scaled = num_actions * behavior * rewards
            logged = importance.off_policy_value(actions, scaled, target, behavior)
            assert logged == pytest.approx(value, rel=1e-10, abs=1e-12)


def test_importance_sampling_allows_zero_behavior_where_the_target_is_zero():
    value = sampling.importance_sampling_value([0.5, 0.5, 0.0], [0.25, 0.25, 0.5], [2.0, 4.0, 9.0])
    assert value == pytest.approx(3.0)


def test_importance_sampling_value_requires_support():
    with pytest.raises(ValueError, match=r"^behavior_probs"):
        sampling.importance_sampling_value([0.5, 0.5], [1.0, 0.0], [1.0, 3.0])
    # The library refuses the same logged action for the same reason.
    with pytest.raises(ValueError, match=r"^behavior_probs"):
        importance.importance_ratios([1], [0.5, 0.5], [1.0, 0.0])


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


def test_the_students_gae_test_passes():
    gae.test_gae_matches_explicit_sum()


@pytest.mark.parametrize("gamma", [0.0, 0.9, 1.0])
@pytest.mark.parametrize("lam", [0.0, 0.95, 1.0])
def test_gae_functions_match_each_other_and_the_library(gamma, lam):
    rng = np.random.default_rng(3)
    for horizon in (1, 2, 8, 33):
        rewards = rng.normal(size=horizon)
        values = rng.normal(size=horizon + 1)
        recursive = gae.gae_recursive(rewards, values, gamma, lam)
        explicit = gae.gae_explicit(rewards, values, gamma, lam)
        assert recursive.shape == explicit.shape == (horizon,)
        np.testing.assert_allclose(recursive, explicit, rtol=1e-10, atol=1e-12)
        library = advantages.gae_explicit(rewards, values, gamma, lam)
        np.testing.assert_allclose(recursive, library, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(
            explicit, advantages.gae_recursive(rewards, values, gamma, lam), rtol=1e-10, atol=1e-12
        )


def test_gae_edge_cases_by_hand():
    rng = np.random.default_rng(4)
    rewards = rng.normal(size=6)
    values = rng.normal(size=7)
    gamma = 0.9
    deltas = rewards + gamma * values[1:] - values[:-1]
    for function in (gae.gae_recursive, gae.gae_explicit):
        # lam = 0 is one-step TD.
        np.testing.assert_allclose(function(rewards, values, gamma, 0.0), deltas, atol=1e-12)
        # lam = 1: discounted rewards to the end plus the discounted bootstrap, minus V(s_t).
        expected = [
            sum(gamma**k * rewards[t + k] for k in range(6 - t))
            + gamma ** (6 - t) * values[6]
            - values[t]
            for t in range(6)
        ]
        np.testing.assert_allclose(function(rewards, values, gamma, 1.0), expected, atol=1e-12)


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
