"""rlfound.importance: importance ratios, ordinary and weighted estimates, variance, ESS.

References: exact enumeration over the K actions (E_μ[f] = Σ_a μ(a) f(a)) and the formulas
written out with explicit sums; for the token-sequence functions of chapter 5, products of
ratios formed factor by factor and exact enumeration of all K^L sequences.
"""

from __future__ import annotations

import itertools

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
    sequence_log_ratio,
    sequence_ratio,
    sequence_ratio_variance,
    token_ratios,
    truncated_importance_weights,
    truncated_ratios,
    weighted_off_policy_value,
)

# The chapter-1 exercise (ex-importance-sampling).
TARGET = np.array([0.25, 0.75])
BEHAVIOR = np.array([0.8, 0.2])
ACTION_REWARDS = np.array([1.0, 3.0])


@st.composite
def distributions(draw, size, low=0.0):
    weights = draw(hnp.arrays(np.float64, (size,), elements=st.floats(low, 1.0)))
    return (weights + 1e-3) / (weights + 1e-3).sum()


@st.composite
def bandit_problems(draw):
    """(target, behavior, action_rewards); the behavior covers every action."""
    k = draw(st.integers(1, 6))
    return (
        draw(distributions(k)),
        draw(distributions(k, low=0.05)),
        draw(hnp.arrays(np.float64, (k,), elements=st.floats(-10.0, 10.0))),
    )


@st.composite
def logged_actions(draw, num_actions):
    return np.array(draw(st.lists(st.integers(0, num_actions - 1), min_size=1, max_size=10)))


# --- importance_ratios ------------------------------------------------------------------------


def test_importance_ratios_by_hand():
    np.testing.assert_allclose(
        importance_ratios([0, 1, 1], TARGET, BEHAVIOR), [0.3125, 3.75, 3.75], rtol=1e-14
    )


@given(problem=bandit_problems(), data=st.data())
def test_importance_ratios_are_target_over_behavior_of_each_logged_action(problem, data):
    target, behavior, _ = problem
    actions = data.draw(logged_actions(len(target)))
    np.testing.assert_allclose(
        importance_ratios(actions, target, behavior),
        [target[a] / behavior[a] for a in actions],
        rtol=1e-14,
    )


# --- off_policy_value -------------------------------------------------------------------------


def test_off_policy_value_by_hand():
    # ρ = (0.3125, 3.75): (0.3125 * 1 + 3.75 * 3) / 2 = 5.78125.
    assert off_policy_value([0, 1], [1.0, 3.0], TARGET, BEHAVIOR) == pytest.approx(5.78125)


@pytest.mark.equation("eq-importance")
@given(problem=bandit_problems())
def test_off_policy_value_is_exactly_unbiased(problem):
    # E_{a ~ μ}[V̂] for one logged action, summed over the K actions, is Σ_a π(a) q(a).
    target, behavior, action_rewards = problem
    expectation = sum(
        behavior[a] * off_policy_value([a], [action_rewards[a]], target, behavior)
        for a in range(len(target))
    )
    assert expectation == pytest.approx(float(target @ action_rewards), abs=1e-10)


def test_off_policy_value_is_unbiased_when_the_behavior_misses_actions_the_target_never_takes():
    target, behavior = np.array([0.3, 0.7, 0.0]), np.array([0.5, 0.5, 0.0])
    action_rewards = np.array([1.0, -2.0, 100.0])
    expectation = sum(
        behavior[a] * off_policy_value([a], [action_rewards[a]], target, behavior) for a in range(2)
    )
    assert expectation == pytest.approx(0.3 - 1.4, rel=1e-14)


@given(problem=bandit_problems(), data=st.data())
def test_off_policy_value_is_the_mean_of_ratio_times_reward(problem, data):
    target, behavior, _ = problem
    actions = data.draw(logged_actions(len(target)))
    rewards = data.draw(hnp.arrays(np.float64, actions.shape, elements=st.floats(-10.0, 10.0)))
    expected = sum(target[a] / behavior[a] * r for a, r in zip(actions, rewards, strict=True))
    assert off_policy_value(actions, rewards, target, behavior) == pytest.approx(
        expected / len(actions), abs=1e-10
    )


# --- weighted_off_policy_value ----------------------------------------------------------------


def test_weighted_off_policy_value_by_hand():
    # ρ = (0.3125, 3.75, 3.75): (0.3125 + 11.25 + 11.25) / 7.8125 = 2.92.
    value = weighted_off_policy_value([0, 1, 1], [1.0, 3.0, 3.0], TARGET, BEHAVIOR)
    assert value == pytest.approx(2.92, rel=1e-14)


@pytest.mark.equation("eq-weighted-importance")
@given(problem=bandit_problems(), data=st.data())
def test_weighted_off_policy_value_is_the_self_normalized_average(problem, data):
    target, behavior, _ = problem
    actions = data.draw(logged_actions(len(target)))
    rewards = data.draw(hnp.arrays(np.float64, actions.shape, elements=st.floats(-10.0, 10.0)))
    ratios = [target[a] / behavior[a] for a in actions]
    expected = sum(w * r for w, r in zip(ratios, rewards, strict=True)) / sum(ratios)
    assert weighted_off_policy_value(actions, rewards, target, behavior) == pytest.approx(
        expected, rel=1e-10, abs=1e-10
    )


def test_weighted_off_policy_value_of_a_constant_reward_is_that_constant():
    # A convex combination of the rewards, unlike the ordinary estimate (here 7 * 4.6875 / 4).
    actions, rewards = [0, 0, 1, 0], np.full(4, 7.0)
    assert weighted_off_policy_value(actions, rewards, TARGET, BEHAVIOR) == pytest.approx(7.0)
    assert off_policy_value(actions, rewards, TARGET, BEHAVIOR) == pytest.approx(8.203125)


# --- importance_sampling_variance -------------------------------------------------------------


def enumerated_variance(target, behavior, action_rewards):
    """Var_{a ~ μ}[ρ(a) q(a)] by summing over the actions μ can take."""
    taken = behavior > 0.0
    estimate = target[taken] / behavior[taken] * action_rewards[taken]
    mean = behavior[taken] @ estimate
    return float(behavior[taken] @ (estimate - mean) ** 2)


def test_importance_sampling_variance_of_the_chapter_exercise():
    # E[(ρq)²] = 0.8 * 0.3125² + 0.2 * 11.25² = 25.390625; (E[ρq])² = 2.5² = 6.25.
    variance = importance_sampling_variance(TARGET, BEHAVIOR, ACTION_REWARDS)
    assert variance == pytest.approx(19.140625, rel=1e-14)


@given(problem=bandit_problems())
def test_importance_sampling_variance_equals_enumeration(problem):
    target, behavior, action_rewards = problem
    assert importance_sampling_variance(target, behavior, action_rewards) == pytest.approx(
        enumerated_variance(target, behavior, action_rewards), rel=1e-9, abs=1e-9
    )


def test_importance_sampling_variance_allows_zero_behavior_where_target_times_reward_is_zero():
    target, behavior = np.array([0.5, 0.5, 0.0]), np.array([0.25, 0.75, 0.0])
    action_rewards = np.array([1.0, 2.0, 5.0])
    assert importance_sampling_variance(target, behavior, action_rewards) == pytest.approx(
        enumerated_variance(target, behavior, action_rewards), rel=1e-12
    )


def test_a_behavior_proportional_to_target_times_reward_has_zero_variance():
    # μ ∝ π q = (0.25, 2.25), i.e. μ = (0.1, 0.9), makes every ρ(a) q(a) equal 2.5.
    variance = importance_sampling_variance(TARGET, [0.1, 0.9], ACTION_REWARDS)
    assert variance == pytest.approx(0.0, abs=1e-12)


# --- effective_sample_size --------------------------------------------------------------------


def test_effective_sample_size_by_hand():
    assert effective_sample_size([1.0, 3.0]) == pytest.approx(16.0 / 10.0, rel=1e-14)


@given(n=st.integers(1, 50), weight=st.floats(1e-3, 1e3))
def test_equal_weights_have_an_effective_sample_size_of_n(n, weight):
    assert effective_sample_size(np.full(n, weight)) == pytest.approx(n, rel=1e-12)


@pytest.mark.parametrize("n", [1, 2, 10])
def test_a_single_non_zero_weight_has_an_effective_sample_size_of_one(n):
    weights = np.zeros(n)
    weights[n // 2] = 4.2
    assert effective_sample_size(weights) == pytest.approx(1.0, rel=1e-14)


@given(
    weights=hnp.arrays(np.float64, st.integers(1, 20), elements=st.floats(0.0, 100.0)).filter(
        lambda w: w.sum() > 1e-3
    )
)
def test_effective_sample_size_is_kish_formula_between_one_and_n(weights):
    ess = effective_sample_size(weights)
    assert ess == pytest.approx(sum(weights) ** 2 / sum(w * w for w in weights), rel=1e-12)
    assert 1.0 - 1e-12 <= ess <= len(weights) + 1e-9


@given(weights=hnp.arrays(np.float64, 5, elements=st.floats(0.1, 10.0)), scale=st.floats(-300, 300))
def test_effective_sample_size_is_invariant_to_scaling_even_near_overflow(weights, scale):
    # Scaling by the largest weight keeps w² finite where the raw squares would overflow.
    assert effective_sample_size(weights * 10.0**scale) == pytest.approx(
        effective_sample_size(weights), rel=1e-10
    )


# --- token sequences (chapter 5) ----------------------------------------------------------------


@st.composite
def token_logprobs(draw, max_len=10):
    """(logprobs, old_logprobs, mask) of shape (B, L): probabilities in [1e-3, 1]."""
    shape = draw(st.tuples(st.integers(1, 3), st.integers(1, max_len)))
    probs = hnp.arrays(np.float64, shape, elements=st.floats(1e-3, 1.0))
    mask = draw(hnp.arrays(np.bool_, shape))
    return np.log(draw(probs)), np.log(draw(probs)), mask


def test_token_ratios_by_hand():
    got = token_ratios(np.log([0.5, 0.2, 0.9]), np.log([0.25, 0.4, 0.1]), mask=[1, 1, 0])
    np.testing.assert_allclose(got, [2.0, 0.5, 1.0], rtol=1e-14)


@pytest.mark.equation("eq-sequence-ratio")
@given(batch=token_logprobs())
def test_sequence_ratio_is_the_product_of_the_valid_token_ratios(batch):
    logprobs, old_logprobs, mask = batch
    expected = []
    for row_lp, row_old, row_mask in zip(logprobs, old_logprobs, mask, strict=True):
        product = 1.0
        for lp, old, m in zip(row_lp, row_old, row_mask, strict=True):
            if m:
                product *= np.exp(lp) / np.exp(old)  # the reference form, factor by factor
        expected.append(product)
    np.testing.assert_allclose(sequence_ratio(logprobs, old_logprobs, mask), expected, rtol=1e-10)
    np.testing.assert_allclose(
        np.prod(token_ratios(logprobs, old_logprobs, mask), axis=-1), expected, rtol=1e-10
    )


@pytest.mark.equation("eq-geometric-ratio")
@given(batch=token_logprobs())
def test_length_normalized_ratio_is_the_geometric_mean_of_the_valid_token_ratios(batch):
    logprobs, old_logprobs, mask = batch
    mask[:, 0] = True  # every sequence has a valid token
    for row in range(len(mask)):
        ratios = np.exp(logprobs[row] - old_logprobs[row])[mask[row]]
        geometric = float(np.prod(ratios) ** (1.0 / ratios.size))
        got = sequence_ratio(logprobs[row], old_logprobs[row], mask[row], length_normalized=True)
        assert got == pytest.approx(geometric, rel=1e-10)


def test_a_single_sequence_gives_a_float():
    lp, old = np.log([0.5, 0.2, 0.9]), np.log([0.25, 0.4, 0.1])
    assert type(sequence_log_ratio(lp, old)) is float
    assert sequence_ratio(lp, old) == pytest.approx(9.0, rel=1e-14)


def test_log_space_keeps_long_sequence_ratios_finite_where_products_of_probabilities_underflow():
    # 2000 tokens of probability 1e-3 under both policies, one token twice as likely: the
    # probabilities underflow to 0 (the ratio of products is 0/0), the log-ratio is exact.
    old = np.full(2000, np.log(1e-3))
    new = old.copy()
    new[7] += np.log(2.0)
    with np.errstate(invalid="ignore"):
        naive = np.prod(np.exp(new)) / np.prod(np.exp(old))
    assert np.isnan(naive)
    assert sequence_ratio(new, old) == pytest.approx(2.0, rel=1e-12)


def test_length_normalized_ratio_without_a_valid_token_is_refused():
    with pytest.raises(ValueError, match="at least one token of every sequence"):
        sequence_log_ratio(np.zeros((2, 2)) - 1, np.zeros((2, 2)) - 1, [[1, 0], [0, 0]], True)


@pytest.mark.equation("eq-sequence-ratio-variance")
@pytest.mark.parametrize("length", [0, 1, 2, 3, 5])
@pytest.mark.parametrize(
    ("target", "behavior"),
    [([0.5, 0.5], [0.25, 0.75]), ([0.2, 0.3, 0.5], [0.4, 0.4, 0.2]), ([0.0, 1.0], [0.5, 0.5])],
)
def test_sequence_ratio_variance_equals_enumeration_of_all_sequences(length, target, behavior):
    target, behavior = np.array(target), np.array(behavior)
    mean = second = 0.0
    for sequence in itertools.product(range(len(target)), repeat=length):
        probability = np.prod(behavior[list(sequence)])
        weight = np.prod(target[list(sequence)] / behavior[list(sequence)])
        mean += probability * weight
        second += probability * weight**2
    assert mean == pytest.approx(1.0, rel=1e-12)  # unbiased: E_μ[ρ(x)] = 1
    assert sequence_ratio_variance(target, behavior, length) == pytest.approx(
        second - mean**2, rel=1e-10, abs=1e-12
    )


@given(problem=bandit_problems(), length=st.integers(0, 50))
def test_sequence_ratio_variance_grows_geometrically(problem, length):
    target, behavior, _ = problem
    chi_square = importance_sampling_variance(target, behavior, np.ones(len(target)))
    assert sequence_ratio_variance(target, behavior, length) == pytest.approx(
        (1.0 + chi_square) ** length - 1.0, rel=1e-8, abs=1e-12
    )


def test_identical_policies_have_zero_variance_at_any_length():
    assert sequence_ratio_variance([0.3, 0.7], [0.3, 0.7], 10_000) == 0.0


@pytest.mark.equation("eq-truncated-ratio")
@given(
    ratio=hnp.arrays(np.float64, st.integers(1, 20), elements=st.floats(1e-3, 50.0)),
    cap=st.floats(0.1, 10.0),
)
def test_truncated_ratios_are_min_of_ratio_and_cap(ratio, cap):
    np.testing.assert_array_equal(truncated_ratios(ratio, cap), [min(r, cap) for r in ratio])


@given(problem=bandit_problems(), cap=st.floats(0.5, 5.0))
def test_truncation_has_mean_at_most_one_and_bounded_second_moment(problem, cap):
    # E_μ[min(ρ, c)] <= E_μ[ρ] = 1 (the bias), and E_μ[min(ρ, c)²] <= c E_μ[ρ] = c.
    target, behavior, _ = problem
    truncated = truncated_ratios(target / behavior, cap)
    assert behavior @ truncated <= 1.0 + 1e-12
    assert behavior @ truncated**2 <= cap + 1e-9


@pytest.mark.equation("eq-tis")
@given(batch=token_logprobs(), cap=st.floats(0.5, 5.0))
def test_truncated_importance_weights_are_the_truncated_token_ratios(batch, cap):
    logprobs, rollout_logprobs, mask = batch
    got = truncated_importance_weights(logprobs, rollout_logprobs, cap, mask)
    expected = truncated_ratios(np.exp(logprobs - rollout_logprobs), cap)
    np.testing.assert_allclose(got[mask], expected[mask], rtol=1e-12)
    assert np.all(got[~mask] == 1.0)


def test_truncated_importance_weights_do_not_overflow():
    got = truncated_importance_weights([-1e-3], [-900.0], cap=2.0)
    np.testing.assert_array_equal(got, [2.0])
