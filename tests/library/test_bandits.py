"""rlfound.bandits: the bandit objective, its exact gradient, and REINFORCE on a bandit.

References: the objective with the softmax written out (tests.oracles.bandit_objective_by_hand),
its central differences, and exact enumeration of every tuple of sampled actions.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from rlfound.bandits import (
    BASELINES,
    bandit_objective,
    exact_bandit_gradient,
    reinforce_bandit,
    reinforce_bandit_history,
    reinforce_gradient_estimate,
)
from tests.oracles import bandit_objective_by_hand, central_differences, softmax_rows

CHAPTER_BANDIT = np.array([0.2, 0.5, 1.0])

small = st.floats(min_value=-5.0, max_value=5.0, allow_nan=False, allow_infinity=False)


@st.composite
def bandits(draw, min_k=1, max_k=6):
    """(logits, action_rewards) of a K-armed bandit."""
    k = draw(st.integers(min_k, max_k))
    return (
        draw(hnp.arrays(np.float64, (k,), elements=small)),
        draw(hnp.arrays(np.float64, (k,), elements=small)),
    )


def expected_estimate(logits, action_rewards, num_samples, baseline_of):
    """E[reinforce_gradient_estimate] over every tuple of N actions drawn from π_θ."""
    probs = softmax_rows(logits)
    total = np.zeros(len(logits))
    for actions in itertools.product(range(len(logits)), repeat=num_samples):
        actions = np.array(actions)
        rewards = action_rewards[actions]
        estimate = reinforce_gradient_estimate(logits, actions, rewards, baseline_of(rewards))
        total += np.prod(probs[actions]) * estimate
    return total


# --- bandit_objective and exact_bandit_gradient -----------------------------------------------


def test_bandit_objective_by_hand():
    # π = (1/4, 1/4, 1/2): J = (0.2 + 0.5) / 4 + 1.0 / 2 = 0.675.
    assert bandit_objective([0.0, 0.0, np.log(2.0)], CHAPTER_BANDIT) == pytest.approx(0.675)


@given(bandit=bandits())
def test_bandit_objective_is_the_policy_average_reward(bandit):
    logits, action_rewards = bandit
    assert bandit_objective(logits, action_rewards) == pytest.approx(
        bandit_objective_by_hand(logits, action_rewards), abs=1e-12
    )


def test_exact_bandit_gradient_by_hand():
    # Uniform π over three arms: ∂J/∂θ_a = (q(a) - mean q) / 3, mean q = 1.7 / 3.
    np.testing.assert_allclose(
        exact_bandit_gradient(np.zeros(3), CHAPTER_BANDIT),
        (CHAPTER_BANDIT - 1.7 / 3) / 3,
        rtol=1e-13,
    )


@pytest.mark.equation("eq-bandit-gradient")
@given(bandit=bandits())
def test_exact_bandit_gradient_equals_central_differences(bandit):
    logits, action_rewards = bandit
    numerical = central_differences(
        lambda theta: bandit_objective_by_hand(theta, action_rewards), logits
    )
    np.testing.assert_allclose(exact_bandit_gradient(logits, action_rewards), numerical, atol=1e-7)


# --- reinforce_gradient_estimate --------------------------------------------------------------


def test_reinforce_gradient_estimate_by_hand():
    # π = (1/2, 1/2); (1/2)[1 * (e_0 - π) + 0 * (e_1 - π)] = (0.25, -0.25).
    np.testing.assert_allclose(
        reinforce_gradient_estimate([0.0, 0.0], [0, 1], [1.0, 0.0]), [0.25, -0.25]
    )


def test_reinforce_gradient_estimate_per_sample_baselines_by_hand():
    # Baselines (1, 0) cancel both rewards exactly; baseline 1 leaves (0, -1) for the two.
    np.testing.assert_array_equal(
        reinforce_gradient_estimate([0.0, 0.0], [0, 1], [1.0, 0.0], [1.0, 0.0]), [0.0, 0.0]
    )
    np.testing.assert_allclose(
        reinforce_gradient_estimate([0.0, 0.0], [0, 1], [1.0, 0.0], 1.0), [0.25, -0.25]
    )


@given(bandit=bandits(), data=st.data())
def test_reinforce_gradient_estimate_is_the_sample_average(bandit, data):
    logits, _ = bandit
    n = data.draw(st.integers(1, 6))
    actions = data.draw(hnp.arrays(np.int64, (n,), elements=st.integers(0, logits.size - 1)))
    rewards = data.draw(hnp.arrays(np.float64, (n,), elements=small))
    baseline = data.draw(hnp.arrays(np.float64, (n,), elements=small))
    probs = softmax_rows(logits)
    expected = sum(
        (r - b) * (np.eye(logits.size)[a] - probs)
        for a, r, b in zip(actions, rewards, baseline, strict=True)
    )
    np.testing.assert_allclose(
        reinforce_gradient_estimate(logits, actions, rewards, baseline), expected / n, atol=1e-12
    )


@given(bandit=bandits(max_k=4), num_samples=st.integers(1, 3), constant=small)
def test_reinforce_gradient_estimate_with_a_constant_baseline_is_exactly_unbiased(
    bandit, num_samples, constant
):
    logits, action_rewards = bandit
    expectation = expected_estimate(logits, action_rewards, num_samples, lambda rewards: constant)
    numerical = central_differences(
        lambda theta: bandit_objective_by_hand(theta, action_rewards), logits
    )
    np.testing.assert_allclose(expectation, numerical, atol=1e-7)


# --- reinforce_bandit_history and reinforce_bandit --------------------------------------------


def test_reinforce_bandit_history_starts_at_zero_and_has_one_row_per_step():
    history = reinforce_bandit_history(CHAPTER_BANDIT, num_steps=7, batch_size=4, rng=0)
    assert history.shape == (8, 3)
    np.testing.assert_array_equal(history[0], 0.0)


@pytest.mark.parametrize("baseline", BASELINES)
def test_reinforce_bandit_history_rows_sum_to_zero(baseline):
    # Every update is a weighted sum of scores e_a - π, and each score sums to zero.
    history = reinforce_bandit_history(CHAPTER_BANDIT, 30, 8, 0.5, baseline, rng=1)
    np.testing.assert_allclose(history.sum(axis=1), 0.0, atol=1e-12)


@pytest.mark.parametrize(
    ("baseline", "factor"), [("leave_one_out", 1.0), ("none", 1.0), ("mean", 0.5)]
)
def test_the_first_update_averages_to_the_gradient_scaled_by_the_baseline_factor(baseline, factor):
    # From θ = 0 with N = 2 samples, E[θ_1] = lr · factor · ∇J(0): leave-one-out and no
    # baseline are unbiased, the batch mean (which contains r_i) shrinks it by (N - 1)/N.
    action_rewards = np.array([0.0, 1.0])
    lr, runs = 2.0, 1000
    rng = np.random.default_rng(2024)
    steps = np.array(
        [
            reinforce_bandit_history(action_rewards, 1, 2, lr, baseline, rng=rng)[1]
            for _ in range(runs)
        ]
    )
    expected = lr * factor * exact_bandit_gradient(np.zeros(2), action_rewards)
    standard_error = steps.std(axis=0, ddof=1) / np.sqrt(runs)
    assert np.all(np.abs(steps.mean(axis=0) - expected) <= 5.0 * standard_error + 1e-12)


@pytest.mark.parametrize("baseline", BASELINES)
def test_reinforce_bandit_learns_the_best_arm_of_the_chapter_bandit(baseline):
    logits, probs = reinforce_bandit(CHAPTER_BANDIT, baseline=baseline, rng=0)
    np.testing.assert_allclose(probs, softmax_rows(logits), rtol=1e-12)
    assert probs[2] > 0.94
    assert np.argmax(probs) == 2
