"""Importance sampling, eq-importance: E_pi[f] = E_b[(pi / b) f], checked by enumeration."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from rlfound.importance import (
    effective_sample_size,
    importance_ratios,
    importance_sampling_variance,
    off_policy_value,
    weighted_off_policy_value,
)

# The chapter's exercise (ex-importance-sampling).
BEHAVIOR = np.array([0.8, 0.2])
TARGET = np.array([0.25, 0.75])
REWARDS = np.array([1.0, 3.0])


@st.composite
def distributions(draw, size, low=0.0):
    weights = draw(hnp.arrays(np.float64, (size,), elements=st.floats(low, 1.0)))
    weights = weights + 1e-3
    return weights / weights.sum()


@st.composite
def bandit_problems(draw, min_k=1, max_k=6):
    """(target, behaviour, reward per action); the behaviour covers every action."""
    k = draw(st.integers(min_k, max_k))
    target = draw(distributions(k))
    behavior = draw(distributions(k, low=0.05))
    rewards = draw(hnp.arrays(np.float64, (k,), elements=st.floats(-10.0, 10.0)))
    return target, behavior, rewards


def enumerated_variance(target, behavior, rewards):
    """Var_{a ~ b}[rho(a) r(a)] by summing over actions."""
    estimate = target / behavior * rewards
    mean = behavior @ estimate
    return float(behavior @ (estimate - mean) ** 2)


# --- ratios and the ordinary estimator ------------------------------------------------------


def test_ratios_by_hand():
    np.testing.assert_allclose(
        importance_ratios([0, 1, 1], TARGET, BEHAVIOR), [0.3125, 3.75, 3.75], rtol=1e-14
    )


def test_exercise_value_by_enumeration():
    expected = sum(
        BEHAVIOR[a] * off_policy_value([a], [REWARDS[a]], TARGET, BEHAVIOR) for a in range(2)
    )
    assert expected == pytest.approx(2.5, rel=1e-14)
    assert TARGET @ REWARDS == pytest.approx(2.5)


def test_exercise_value_on_a_batch_with_exact_frequencies():
    # Five logged actions in exactly the behaviour proportions 4 : 1.
    actions = np.array([0, 0, 0, 0, 1])
    value = off_policy_value(actions, REWARDS[actions], TARGET, BEHAVIOR)
    assert isinstance(value, float)
    assert value == pytest.approx(2.5, rel=1e-14)


@given(problem=bandit_problems())
def test_ordinary_estimator_is_exactly_unbiased(problem):
    target, behavior, rewards = problem
    enumerated = sum(
        behavior[a] * off_policy_value([a], [rewards[a]], target, behavior)
        for a in range(len(rewards))
    )
    assert enumerated == pytest.approx(float(target @ rewards), abs=1e-10)


def test_unbiased_when_behaviour_misses_actions_the_target_never_takes():
    target = np.array([0.3, 0.7, 0.0])
    behavior = np.array([0.5, 0.5, 0.0])
    rewards = np.array([1.0, -2.0, 100.0])
    enumerated = sum(
        behavior[a] * off_policy_value([a], [rewards[a]], target, behavior) for a in range(2)
    )
    assert enumerated == pytest.approx(0.3 - 1.4, rel=1e-14)


def test_on_policy_data_gives_the_plain_mean():
    probs = np.array([0.1, 0.6, 0.3])
    actions = np.array([1, 1, 2, 0, 1])
    rewards = np.array([0.5, -1.0, 2.0, 4.0, 0.0])
    np.testing.assert_allclose(importance_ratios(actions, probs, probs), 1.0, rtol=1e-15)
    assert off_policy_value(actions, rewards, probs, probs) == pytest.approx(rewards.mean())


@given(problem=bandit_problems(), data=st.data())
def test_ratios_match_definition(problem, data):
    target, behavior, _ = problem
    actions = np.array(
        data.draw(st.lists(st.integers(0, len(target) - 1), min_size=1, max_size=10))
    )
    ratios = importance_ratios(actions, target, behavior)
    assert ratios.shape == actions.shape
    np.testing.assert_allclose(ratios, [target[a] / behavior[a] for a in actions], rtol=1e-14)


# --- exact variance -------------------------------------------------------------------------


def test_exercise_variance():
    variance = importance_sampling_variance(TARGET, BEHAVIOR, REWARDS)
    assert variance == pytest.approx(19.140625, rel=1e-14)
    assert enumerated_variance(TARGET, BEHAVIOR, REWARDS) == pytest.approx(19.140625, rel=1e-14)


@given(problem=bandit_problems())
def test_variance_matches_enumeration(problem):
    target, behavior, rewards = problem
    assert importance_sampling_variance(target, behavior, rewards) == pytest.approx(
        enumerated_variance(target, behavior, rewards), rel=1e-9, abs=1e-9
    )


def test_variance_is_zero_on_policy_with_constant_reward():
    probs = np.array([0.2, 0.3, 0.5])
    assert importance_sampling_variance(probs, probs, np.full(3, 2.0)) == pytest.approx(
        0.0, abs=1e-14
    )


def test_variance_allows_zero_behaviour_where_target_times_reward_is_zero():
    target = np.array([0.5, 0.5, 0.0])
    behavior = np.array([0.25, 0.75, 0.0])
    rewards = np.array([1.0, 2.0, 5.0])
    assert importance_sampling_variance(target, behavior, rewards) == pytest.approx(
        enumerated_variance(target[:2], behavior[:2], rewards[:2]), rel=1e-12
    )


@pytest.mark.parametrize(
    ("target", "rewards"),
    [((0.5, 0.5), (0.0, 1.0)), ((0.25, 0.75), (1.0, 3.0))],
)
def test_variance_grows_as_rewarded_action_becomes_rare(target, rewards):
    grid = np.array([0.9, 0.7, 0.5, 0.3, 0.2, 0.1, 0.05, 0.01])  # b(rewarded action 1)
    variances = np.array(
        [
            importance_sampling_variance(np.array(target), np.array([1 - p, p]), np.array(rewards))
            for p in grid
        ]
    )
    assert np.all(np.diff(variances) > 0)
    assert variances[-1] > 10 * variances[0]


def test_behaviour_proportional_to_target_times_reward_has_zero_variance():
    # b(a) proportional to pi(a) r(a) (here (0.1, 0.9)) makes every rho(a) r(a) equal 2.5.
    variance = importance_sampling_variance(TARGET, np.array([0.1, 0.9]), REWARDS)
    assert variance == pytest.approx(0.0, abs=1e-12)


def test_monte_carlo_variance_agrees_with_exact():
    rng = np.random.default_rng(20240601)
    actions = rng.choice(2, size=200_000, p=BEHAVIOR)
    weighted = importance_ratios(actions, TARGET, BEHAVIOR) * REWARDS[actions]
    np.testing.assert_allclose(weighted.var(ddof=1), 19.140625, rtol=0.03)
    value = off_policy_value(actions, REWARDS[actions], TARGET, BEHAVIOR)
    # Standard error is sqrt(19.14 / 2e5) ~ 0.01; allow about five of them.
    assert value == pytest.approx(2.5, abs=0.05)


# --- self-normalised estimator --------------------------------------------------------------


def test_weighted_estimator_by_hand():
    # rho = (0.3125, 3.75, 3.75): (0.3125 + 11.25 + 11.25) / 7.8125 = 2.92
    value = weighted_off_policy_value([0, 1, 1], [1.0, 3.0, 3.0], TARGET, BEHAVIOR)
    assert isinstance(value, float)
    assert value == pytest.approx(22.8125 / 7.8125, rel=1e-14)


@given(problem=bandit_problems(), data=st.data())
def test_weighted_estimator_matches_self_normalised_formula(problem, data):
    target, behavior, rewards_per_action = problem
    actions = np.array(
        data.draw(st.lists(st.integers(0, len(target) - 1), min_size=1, max_size=12))
    )
    rewards = rewards_per_action[actions]
    rho = target[actions] / behavior[actions]
    if rho.sum() == 0:  # every logged action has target probability 0: no estimate exists
        return
    expected = float(np.sum(rho * rewards) / np.sum(rho))
    value = weighted_off_policy_value(actions, rewards, target, behavior)
    assert value == pytest.approx(expected, rel=1e-10, abs=1e-10)


def test_weighted_estimator_of_constant_reward_is_that_constant():
    # Unlike the ordinary estimator, the self-normalised one is exact for constant rewards.
    actions = np.array([0, 0, 1, 0])
    rewards = np.full(4, 7.0)
    assert weighted_off_policy_value(actions, rewards, TARGET, BEHAVIOR) == pytest.approx(7.0)
    assert off_policy_value(actions, rewards, TARGET, BEHAVIOR) != pytest.approx(7.0)


# --- effective sample size ------------------------------------------------------------------


def test_ess_by_hand():
    assert effective_sample_size(np.array([1.0, 3.0])) == pytest.approx(1.6, rel=1e-14)


@given(n=st.integers(1, 50), weight=st.floats(1e-3, 1e3))
def test_equal_weights_give_n(n, weight):
    assert effective_sample_size(np.full(n, weight)) == pytest.approx(n, rel=1e-12)


@pytest.mark.parametrize("n", [1, 2, 10])
def test_one_non_zero_weight_gives_one(n):
    weights = np.zeros(n)
    weights[n // 2] = 4.2
    assert effective_sample_size(weights) == pytest.approx(1.0, rel=1e-14)


@given(
    weights=hnp.arrays(np.float64, st.integers(1, 20), elements=st.floats(0.0, 100.0)).filter(
        lambda w: w.sum() > 1e-3
    ),
    scale=st.floats(1e-3, 1e3),
)
def test_ess_is_scale_invariant_and_bounded(weights, scale):
    ess = effective_sample_size(weights)
    assert ess == pytest.approx(effective_sample_size(scale * weights), rel=1e-10)
    assert ess == pytest.approx(weights.sum() ** 2 / np.sum(weights**2), rel=1e-12)
    assert 1.0 - 1e-12 <= ess <= len(weights) + 1e-9
