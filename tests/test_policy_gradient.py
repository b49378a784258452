"""Softmax policies, the exact bandit gradient (eq-bandit-gradient) and REINFORCE."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from rlfound import gradcheck
from rlfound.policy_gradient import (
    bandit_objective,
    categorical_score,
    exact_bandit_gradient,
    log_softmax,
    reinforce_bandit,
    reinforce_bandit_history,
    reinforce_gradient_estimate,
    softmax,
)

CHAPTER_BANDIT = np.array([0.2, 0.5, 1.0])


def reference_softmax(logits):
    z = np.exp(logits - np.max(logits))
    return z / z.sum()


def reference_objective(logits, q):
    return float(reference_softmax(logits) @ q)


def central_differences(f, x, h=1e-6):
    """Independent finite-difference loop (does not use rlfound.gradcheck)."""
    x = np.asarray(x, dtype=np.float64)
    grad = np.zeros_like(x)
    for i in range(x.size):
        step = np.zeros_like(x)
        step.flat[i] = h
        grad.flat[i] = (f(x + step) - f(x - step)) / (2 * h)
    return grad


def enumerated_expectation(logits, q, n_samples, baseline_of):
    """E[reinforce_gradient_estimate] by summing over every tuple of N actions."""
    pi = reference_softmax(logits)
    total = np.zeros(len(q))
    for actions in itertools.product(range(len(q)), repeat=n_samples):
        actions = np.array(actions)
        rewards = q[actions]
        estimate = reinforce_gradient_estimate(logits, actions, rewards, baseline_of(rewards))
        total += np.prod(pi[actions]) * estimate
    return total


small = st.floats(min_value=-5.0, max_value=5.0, allow_nan=False, allow_infinity=False)


@st.composite
def logits_and_values(draw, min_k=2, max_k=6):
    k = draw(st.integers(min_k, max_k))
    logits = draw(hnp.arrays(np.float64, (k,), elements=small))
    q = draw(hnp.arrays(np.float64, (k,), elements=small))
    return logits, q


def leave_one_out(rewards):
    return (rewards.sum() - rewards) / (len(rewards) - 1)


# --- softmax and log_softmax ---------------------------------------------------------------


def test_softmax_by_hand():
    np.testing.assert_allclose(softmax(np.array([0.0, np.log(3.0)])), [0.25, 0.75], rtol=1e-14)
    np.testing.assert_allclose(softmax(np.zeros(4)), np.full(4, 0.25), rtol=1e-14)


@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=6), elements=small))
def test_softmax_rows_sum_to_one_and_are_positive(logits):
    probs = softmax(logits)
    assert probs.shape == logits.shape
    assert np.all(probs > 0)
    np.testing.assert_allclose(probs.sum(axis=-1), 1.0, rtol=1e-12)


def test_softmax_axis_argument():
    logits = np.array([[0.0, 1.0, 2.0], [3.0, -1.0, 0.5]])
    probs = softmax(logits, axis=0)
    np.testing.assert_allclose(probs.sum(axis=0), 1.0, rtol=1e-12)
    np.testing.assert_allclose(probs[:, 0], reference_softmax(logits[:, 0]), rtol=1e-12)
    np.testing.assert_allclose(log_softmax(logits, axis=0), np.log(probs), rtol=1e-12)


@given(
    logits=hnp.arrays(np.float64, (3, 5), elements=small),
    shift=hnp.arrays(np.float64, (3, 1), elements=st.floats(-100.0, 100.0)),
)
def test_softmax_shift_invariance(logits, shift):
    np.testing.assert_allclose(softmax(logits + shift), softmax(logits), rtol=1e-9, atol=1e-15)
    np.testing.assert_allclose(
        log_softmax(logits + shift), log_softmax(logits), rtol=1e-9, atol=1e-9
    )


def test_huge_logits_stay_finite():
    logits = np.array([1e4, 0.0, -1e4])
    probs = softmax(logits)
    assert np.all(np.isfinite(probs))
    np.testing.assert_allclose(probs, [1.0, 0.0, 0.0], atol=1e-300)
    logp = log_softmax(logits)
    assert np.all(np.isfinite(logp))
    np.testing.assert_allclose(logp, [0.0, -1e4, -2e4], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(softmax(np.array([1e4, 1e4])), [0.5, 0.5], rtol=1e-14)


@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=2, max_side=6), elements=small))
def test_log_softmax_is_log_of_softmax(logits):
    np.testing.assert_allclose(log_softmax(logits), np.log(softmax(logits)), rtol=1e-10, atol=1e-12)


# --- score function ------------------------------------------------------------------------


def test_categorical_score_by_hand():
    np.testing.assert_allclose(
        categorical_score(np.zeros(3), 1), [-1 / 3, 2 / 3, -1 / 3], rtol=1e-14
    )


@given(data=st.data(), pair=logits_and_values())
def test_categorical_score_matches_finite_differences(data, pair):
    logits, _ = pair
    action = data.draw(st.integers(0, logits.size - 1))
    score = categorical_score(logits, action)
    numerical = central_differences(lambda th: log_softmax(th)[action], logits)
    np.testing.assert_allclose(score, numerical, atol=1e-7)
    np.testing.assert_allclose(score.sum(), 0.0, atol=1e-12)


def test_expected_score_is_zero():
    # E_pi[grad log pi(a)] = 0: the fact that makes baselines free (eq-baseline).
    logits = np.array([0.3, -1.2, 2.0, 0.0])
    pi = reference_softmax(logits)
    expected = sum(pi[a] * categorical_score(logits, a) for a in range(4))
    np.testing.assert_allclose(expected, 0.0, atol=1e-15)


# --- bandit objective and its exact gradient -----------------------------------------------


def test_bandit_objective_and_gradient_by_hand():
    # Uniform policy: J = mean(q) and grad = (q - mean(q)) / K.
    q = CHAPTER_BANDIT
    assert bandit_objective(np.zeros(3), q) == pytest.approx(1.7 / 3, rel=1e-14)
    np.testing.assert_allclose(
        exact_bandit_gradient(np.zeros(3), q), (q - 1.7 / 3) / 3, rtol=1e-13, atol=1e-15
    )


@given(pair=logits_and_values())
def test_bandit_objective_matches_reference(pair):
    logits, q = pair
    assert bandit_objective(logits, q) == pytest.approx(reference_objective(logits, q), abs=1e-12)


@given(pair=logits_and_values())
def test_exact_gradient_matches_independent_finite_differences(pair):
    logits, q = pair
    numerical = central_differences(lambda th: reference_objective(th, q), logits)
    np.testing.assert_allclose(exact_bandit_gradient(logits, q), numerical, atol=1e-7)


@given(pair=logits_and_values())
def test_exact_gradient_passes_rlfound_gradcheck(pair):
    logits, q = pair
    result = gradcheck.check_gradient(
        lambda th: bandit_objective(th, q),
        lambda th: exact_bandit_gradient(th, q),
        logits,
        rtol=1e-5,
        atol=1e-7,
    )
    assert result.passed, result


@given(pair=logits_and_values())
def test_exact_gradient_sums_to_zero(pair):
    # softmax(theta + c) = softmax(theta), so J has zero derivative along (1, ..., 1).
    logits, q = pair
    assert exact_bandit_gradient(logits, q).sum() == pytest.approx(0.0, abs=1e-12)


def test_exact_gradient_is_invariant_to_shifting_the_rewards():
    logits = np.array([0.5, -0.5, 1.5])
    np.testing.assert_allclose(
        exact_bandit_gradient(logits, CHAPTER_BANDIT + 10.0),
        exact_bandit_gradient(logits, CHAPTER_BANDIT),
        atol=1e-13,
    )


# --- REINFORCE estimator: exact unbiasedness by enumeration --------------------------------


def test_reinforce_estimate_by_hand():
    # pi = (0.5, 0.5); sample 1: 1 * ((1, 0) - pi); sample 2 has reward 0. Mean over N = 2.
    estimate = reinforce_gradient_estimate(np.zeros(2), np.array([0, 1]), np.array([1.0, 0.0]))
    np.testing.assert_allclose(estimate, [0.25, -0.25], rtol=1e-14)
    # Baseline 0.5: (0.5 * (0.5, -0.5) + (-0.5) * (-0.5, 0.5)) / 2 = (0.25, -0.25) as well.
    estimate = reinforce_gradient_estimate(np.zeros(2), [0, 1], [1.0, 0.0], baseline=0.5)
    np.testing.assert_allclose(estimate, [0.25, -0.25], rtol=1e-14)
    # Per-sample baselines (1, 0) cancel every reward.
    estimate = reinforce_gradient_estimate(np.zeros(2), [0, 1], [1.0, 0.0], np.array([1.0, 0.0]))
    np.testing.assert_allclose(estimate, [0.0, 0.0], atol=1e-15)


def test_scalar_baseline_equals_constant_array_baseline():
    logits = np.array([0.1, -0.4, 0.9])
    actions = np.array([2, 0, 2, 1])
    rewards = np.array([1.0, 0.2, 1.0, 0.5])
    np.testing.assert_allclose(
        reinforce_gradient_estimate(logits, actions, rewards, 0.3),
        reinforce_gradient_estimate(logits, actions, rewards, np.full(4, 0.3)),
        rtol=1e-14,
        atol=1e-16,
    )


def test_reinforce_estimate_against_per_sample_formula():
    rng = np.random.default_rng(7)
    logits = rng.normal(size=4)
    actions = rng.integers(0, 4, size=9)
    rewards = rng.normal(size=9)
    baseline = rng.normal(size=9)
    pi = reference_softmax(logits)
    expected = np.zeros(4)
    for a, r, b in zip(actions, rewards, baseline, strict=True):
        expected += (r - b) * (np.eye(4)[a] - pi)
    np.testing.assert_allclose(
        reinforce_gradient_estimate(logits, actions, rewards, baseline), expected / 9, atol=1e-14
    )


@settings(max_examples=30)
@given(pair=logits_and_values(max_k=4), n_samples=st.integers(2, 3), constant=small)
def test_estimate_is_exactly_unbiased_with_constant_baseline(pair, n_samples, constant):
    logits, q = pair
    expected = enumerated_expectation(logits, q, n_samples, lambda rewards: constant)
    pi = reference_softmax(logits)
    np.testing.assert_allclose(expected, exact_bandit_gradient(logits, q), atol=1e-12)
    np.testing.assert_allclose(expected, pi * (q - pi @ q), atol=1e-12)


@settings(max_examples=30)
@given(pair=logits_and_values(max_k=4), n_samples=st.integers(2, 3))
def test_estimate_is_exactly_unbiased_with_leave_one_out_baseline(pair, n_samples):
    logits, q = pair
    expected = enumerated_expectation(logits, q, n_samples, leave_one_out)
    np.testing.assert_allclose(expected, exact_bandit_gradient(logits, q), atol=1e-12)


@settings(max_examples=30)
@given(pair=logits_and_values(max_k=4), n_samples=st.integers(2, 3))
def test_batch_mean_baseline_shrinks_the_gradient_by_n_minus_one_over_n(pair, n_samples):
    # The batch mean contains the sample's own reward, so E[estimate] = (N - 1) / N * grad J.
    logits, q = pair
    expected = enumerated_expectation(logits, q, n_samples, lambda rewards: float(rewards.mean()))
    np.testing.assert_allclose(
        expected, (n_samples - 1) / n_samples * exact_bandit_gradient(logits, q), atol=1e-12
    )


def test_chapter_case_of_batch_mean_bias():
    # K = 3, N = 2 (9 tuples) on the chapter's bandit: the factor is exactly 1/2.
    logits = np.array([0.2, -0.3, 0.4])
    exact = exact_bandit_gradient(logits, CHAPTER_BANDIT)
    mean_baseline = enumerated_expectation(logits, CHAPTER_BANDIT, 2, lambda r: float(r.mean()))
    np.testing.assert_allclose(mean_baseline, 0.5 * exact, atol=1e-14)
    assert np.abs(mean_baseline - exact).max() > 1e-3  # the bias is real, not rounding


@pytest.mark.parametrize("constant_reward", [0.0, 1.0, -2.5])
def test_constant_reward_has_zero_expected_gradient(constant_reward):
    logits = np.array([0.7, -0.1, 0.0])
    q = np.full(3, constant_reward)
    expected = enumerated_expectation(logits, q, 2, lambda rewards: 0.0)
    np.testing.assert_allclose(expected, 0.0, atol=1e-14)
    # With any baseline equal to the constant, every single estimate is zero.
    rng = np.random.default_rng(0)
    actions = rng.integers(0, 3, size=16)
    np.testing.assert_allclose(
        reinforce_gradient_estimate(logits, actions, q[actions], constant_reward), 0.0, atol=1e-15
    )


# --- REINFORCE on the chapter's bandit ------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
def test_reinforce_bandit_learns_the_best_arm(seed):
    logits, probabilities = reinforce_bandit(CHAPTER_BANDIT, seed=seed)
    assert logits.shape == (3,)
    np.testing.assert_allclose(probabilities, reference_softmax(logits), rtol=1e-12)
    assert probabilities[2] > 0.94


def test_reinforce_bandit_accepts_a_list():
    _, probabilities = reinforce_bandit([0.2, 0.5, 1.0], steps=5)
    np.testing.assert_allclose(probabilities.sum(), 1.0, rtol=1e-12)


def test_history_shape_first_row_and_last_row():
    history = reinforce_bandit_history(CHAPTER_BANDIT, steps=30, batch_size=8, seed=5)
    assert history.shape == (31, 3)
    np.testing.assert_array_equal(history[0], 0.0)
    logits, _ = reinforce_bandit(CHAPTER_BANDIT, steps=30, batch_size=8, seed=5)
    np.testing.assert_allclose(history[-1], logits, rtol=0, atol=0)


def test_default_history_shape():
    history = reinforce_bandit_history(CHAPTER_BANDIT)
    assert history.shape == (201, 3)
    np.testing.assert_array_equal(history[0], 0.0)


@pytest.mark.parametrize("baseline", ["mean", "leave_one_out", "none"])
def test_history_rows_sum_to_zero(baseline):
    # Each update is lr * sum of scores (onehot - pi), and each score sums to zero.
    history = reinforce_bandit_history(
        CHAPTER_BANDIT, steps=50, batch_size=16, seed=1, baseline=baseline
    )
    np.testing.assert_allclose(history.sum(axis=1), 0.0, atol=1e-12)


def test_same_seed_is_reproducible_and_different_seeds_differ():
    first = reinforce_bandit_history(CHAPTER_BANDIT, steps=20, batch_size=8, seed=11)
    again = reinforce_bandit_history(CHAPTER_BANDIT, steps=20, batch_size=8, seed=11)
    other = reinforce_bandit_history(CHAPTER_BANDIT, steps=20, batch_size=8, seed=12)
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)
    logits_a, probs_a = reinforce_bandit(CHAPTER_BANDIT, seed=3)
    logits_b, probs_b = reinforce_bandit(CHAPTER_BANDIT, seed=3)
    np.testing.assert_array_equal(logits_a, logits_b)
    np.testing.assert_array_equal(probs_a, probs_b)
    assert not np.array_equal(logits_a, reinforce_bandit(CHAPTER_BANDIT, seed=4)[0])


@pytest.mark.parametrize("baseline", ["none", "leave_one_out"])
def test_other_baselines_run_and_improve(baseline):
    logits, probabilities = reinforce_bandit(CHAPTER_BANDIT, seed=0, baseline=baseline)
    assert np.all(np.isfinite(logits))
    np.testing.assert_allclose(probabilities.sum(), 1.0, rtol=1e-12)
    assert np.argmax(probabilities) == 2
    assert probabilities[2] > 0.5


def test_baselines_give_different_trajectories():
    histories = [
        reinforce_bandit_history(CHAPTER_BANDIT, steps=10, batch_size=8, seed=0, baseline=b)
        for b in ("mean", "leave_one_out", "none")
    ]
    assert not np.array_equal(histories[0], histories[1])
    assert not np.array_equal(histories[0], histories[2])
