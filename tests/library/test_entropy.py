"""rlfound.entropy: categorical entropy, its gradient, entropy along sequences, the sampled
estimate, constrained decoding and the diversity measures of a group of rollouts.

References: the definitions as explicit loops (tests.oracles.entropy_by_hand,
softmax_rows, bigram_by_hand), central differences for the gradient, exact enumeration for the
chain rule, the unbiasedness of the sampled estimate and the bias of the plug-in action entropy,
and Counter/set loops for the group measures.
"""

from __future__ import annotations

import itertools
import math
import statistics
import warnings
from collections import Counter

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from rlfound import groups, tokens
from rlfound.entropy import (
    action_entropy,
    categorical_entropy,
    constrained_probs,
    distribution_entropy,
    entropy_logit_gradient,
    group_reward_variance,
    mean_token_entropy,
    sampled_token_entropy,
    token_entropies,
    unique_successful_strategies,
)
from tests.oracles import (
    BIGRAM_TABLE,
    bigram_by_hand,
    central_differences,
    entropy_by_hand,
    random_distributions,
    softmax_rows,
)

small = st.floats(min_value=-5.0, max_value=5.0, allow_nan=False, allow_infinity=False)
logit_arrays = hnp.arrays(
    np.float64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=5), elements=small
)
vectors = hnp.arrays(np.float64, st.integers(1, 6), elements=small)


def rows(array):
    """The 1-D slices of ``array`` along its last axis, with their index."""
    array = np.asarray(array)
    for index in np.ndindex(array.shape[:-1]):
        yield index, array[index]


# --- categorical_entropy ----------------------------------------------------------------------


@pytest.mark.equation("eq-entropy")
@given(logits=logit_arrays)
def test_categorical_entropy_is_minus_the_sum_of_p_log_p(logits):
    expected = np.zeros(logits.shape[:-1])
    for index, row in rows(softmax_rows(logits)):
        expected[index] = entropy_by_hand(row)
    np.testing.assert_allclose(categorical_entropy(logits), expected, rtol=1e-10, atol=1e-12)


@given(size=st.integers(1, 50), shift=small)
def test_uniform_distribution_has_entropy_log_k_and_one_hot_has_zero(size, shift):
    assert categorical_entropy(np.full(size, shift)) == pytest.approx(np.log(size), rel=1e-12)
    one_hot = np.zeros(size)
    one_hot[0] = 1e4
    assert categorical_entropy(one_hot) == 0.0


@given(logits=logit_arrays, shift=small)
def test_categorical_entropy_ignores_a_constant_added_to_the_logits(logits, shift):
    np.testing.assert_allclose(
        categorical_entropy(logits + shift), categorical_entropy(logits), atol=1e-12
    )


@given(logits=vectors)
def test_categorical_entropy_lies_between_zero_and_log_k(logits):
    h = categorical_entropy(logits)
    assert -1e-15 <= h <= np.log(logits.size) + 1e-12


def test_categorical_entropy_along_another_axis():
    logits = np.log(np.array([[0.5, 0.25], [0.5, 0.75]]))
    np.testing.assert_allclose(
        categorical_entropy(logits, axis=0), categorical_entropy(logits.T, axis=-1), rtol=1e-15
    )


def test_categorical_entropy_is_exact_and_silent_for_extreme_logits():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert categorical_entropy([1000.0, 0.0, -1000.0]) == 0.0
        assert categorical_entropy([1.7e308, -1.7e308]) == 0.0
        assert categorical_entropy([1e300, 1e300]) == pytest.approx(np.log(2.0), rel=1e-15)


def test_categorical_entropy_of_a_single_distribution_is_a_python_float():
    assert type(categorical_entropy([0.0, 1.0])) is float


# --- entropy_logit_gradient -------------------------------------------------------------------


@pytest.mark.equation("eq-entropy-gradient")
@given(logits=vectors)
def test_entropy_gradient_equals_central_differences(logits):
    np.testing.assert_allclose(
        entropy_logit_gradient(logits),
        central_differences(categorical_entropy, logits),
        rtol=1e-5,
        atol=1e-8,
    )


@pytest.mark.equation("eq-entropy-gradient")
@given(logits=vectors)
def test_entropy_gradient_is_minus_p_times_log_p_plus_h(logits):
    probs = softmax_rows(logits)
    h = entropy_by_hand(probs)
    expected = [-p * (math.log(p) + h) for p in probs]
    np.testing.assert_allclose(entropy_logit_gradient(logits), expected, rtol=1e-9, atol=1e-12)


@given(logits=logit_arrays)
def test_entropy_gradient_components_sum_to_zero(logits):
    np.testing.assert_allclose(entropy_logit_gradient(logits).sum(axis=-1), 0.0, atol=1e-12)


@given(size=st.integers(1, 20), shift=small)
def test_entropy_gradient_vanishes_at_the_uniform_distribution(size, shift):
    np.testing.assert_allclose(entropy_logit_gradient(np.full(size, shift)), 0.0, atol=1e-15)


@given(logits=vectors)
def test_entropy_gradient_raises_exactly_the_tokens_rarer_than_typical(logits):
    # sign of dH/dθ_a = sign of (-log π(a) - H): up for surprisal above the entropy.
    probs = softmax_rows(logits)
    surprisal_gap = -np.log(probs) - entropy_by_hand(probs)
    gradient = entropy_logit_gradient(logits)
    clear = np.abs(surprisal_gap) > 1e-6
    assert np.all(np.sign(gradient[clear]) == np.sign(surprisal_gap[clear]))


def test_entropy_gradient_row_by_row_along_any_axis():
    logits = np.random.default_rng(1).normal(size=(3, 4, 5))
    along_middle = entropy_logit_gradient(logits, axis=1)
    for i, k in itertools.product(range(3), range(5)):
        np.testing.assert_allclose(along_middle[i, :, k], entropy_logit_gradient(logits[i, :, k]))


def test_entropy_gradient_is_exact_and_silent_for_extreme_logits():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(entropy_logit_gradient([1.7e308, -1.7e308]), [0.0, 0.0])
        gradient = entropy_logit_gradient([1000.0, 0.0, 0.0])
    assert np.all(np.isfinite(gradient)) and np.all(gradient == 0.0)


# --- distribution_entropy ---------------------------------------------------------------------


@given(data=st.data())
def test_distribution_entropy_equals_the_sum_by_hand_with_exact_zeros(data):
    size = data.draw(st.integers(1, 7))
    seed = data.draw(st.integers(0, 2**32 - 1))
    probs = random_distributions(np.random.default_rng(seed), (3, size), sparse=True)
    expected = [entropy_by_hand(row) for row in probs]
    np.testing.assert_allclose(distribution_entropy(probs), expected, rtol=1e-12, atol=1e-15)


@given(logits=vectors)
def test_distribution_entropy_agrees_with_categorical_entropy(logits):
    assert distribution_entropy(softmax_rows(logits)) == pytest.approx(
        categorical_entropy(logits), rel=1e-9, abs=1e-12
    )


def test_zero_probabilities_add_nothing():
    assert distribution_entropy([0.5, 0.5, 0.0]) == distribution_entropy([0.5, 0.5])
    assert distribution_entropy([0.0, 1.0, 0.0]) == 0.0


# --- token_entropies and mean_token_entropy ---------------------------------------------------


@given(data=st.data())
def test_token_entropies_equal_a_loop_over_positions(data):
    shape = data.draw(hnp.array_shapes(min_dims=2, max_dims=3, max_side=4))
    logits = data.draw(hnp.arrays(np.float64, (*shape, 3), elements=small))
    mask = data.draw(hnp.arrays(np.bool_, shape))
    expected = np.zeros(shape)
    for index, row in rows(logits):
        expected[index] = entropy_by_hand(softmax_rows(row)) if mask[index] else 0.0
    np.testing.assert_allclose(token_entropies(logits, mask), expected, rtol=1e-10, atol=1e-12)


def test_masked_positions_give_exactly_zero_whatever_their_logits():
    logits = np.zeros((2, 3, 4))
    logits[0, 1] = [1e308, -1e308, 0.0, 5.0]
    result = token_entropies(logits, mask=[[1, 0, 1], [0, 0, 1]])
    np.testing.assert_array_equal(result[0, 1], 0.0)
    np.testing.assert_array_equal(result[1, :2], 0.0)
    assert result[0, 0] == pytest.approx(np.log(4.0))


@pytest.mark.equation("eq-entropy-chain")
@pytest.mark.parametrize("length", [1, 2, 3])
def test_the_chain_rule_holds_by_enumeration(length):
    # eq-entropy-chain: Σ_j E[H(π(. | x_<j))] = -Σ_x π(x) log π(x), every response listed.
    sequences = tokens.enumerate_sequences(4, length)
    logits = tokens.bigram_logits(BIGRAM_TABLE, sequences)
    _, probs, _ = bigram_by_hand(BIGRAM_TABLE, length)
    per_position = probs @ token_entropies(logits)
    assert per_position.sum() == pytest.approx(entropy_by_hand(probs), rel=1e-12)


@given(data=st.data())
def test_mean_token_entropy_is_the_masked_mean_by_hand(data):
    logits = data.draw(hnp.arrays(np.float64, (3, 4, 5), elements=small))
    mask = data.draw(hnp.arrays(np.bool_, (3, 4)).filter(lambda m: m.any()))
    values = [
        entropy_by_hand(softmax_rows(logits[i, j]))
        for i in range(3)
        for j in range(4)
        if mask[i, j]
    ]
    assert mean_token_entropy(logits, mask) == pytest.approx(np.mean(values), rel=1e-10)


def test_mean_token_entropy_without_a_mask_counts_every_position():
    logits = np.log(np.array([[[0.5, 0.5], [1.0, 1e-300]]]))
    assert mean_token_entropy(logits) == pytest.approx(np.log(2.0) / 2, rel=1e-12)


# --- sampled_token_entropy --------------------------------------------------------------------


@given(data=st.data())
def test_sampled_token_entropy_is_the_masked_mean_of_surprisals(data):
    logprobs = -data.draw(hnp.arrays(np.float64, (3, 4), elements=st.floats(0.0, 20.0)))
    mask = data.draw(hnp.arrays(np.bool_, (3, 4)).filter(lambda m: m.any()))
    expected = np.mean(
        [-lp for lp, keep in zip(logprobs.ravel(), mask.ravel(), strict=True) if keep]
    )
    assert sampled_token_entropy(logprobs, mask) == pytest.approx(expected, rel=1e-12)


@pytest.mark.equation("eq-entropy-sampled")
@given(logits=vectors)
def test_the_sampled_estimate_is_unbiased_for_one_distribution(logits):
    # eq-entropy-sampled by enumeration: Σ_x π(x) (-log π(x)) = H, one term per token.
    probs = softmax_rows(logits)
    estimates = [sampled_token_entropy([math.log(p)]) for p in probs]
    assert float(np.dot(probs, estimates)) == pytest.approx(categorical_entropy(logits), rel=1e-9)


@pytest.mark.parametrize("length", [2, 3])
def test_the_summed_estimate_is_unbiased_for_the_response_entropy(length):
    # E_x[Σ_j -log π(x_j | x_<j)] = H(X), every response of chapter 2's bigram listed.
    sequences = tokens.enumerate_sequences(4, length)
    logprobs = tokens.token_logprobs(tokens.bigram_logits(BIGRAM_TABLE, sequences), sequences)
    _, probs, _ = bigram_by_hand(BIGRAM_TABLE, length)
    per_response = np.array([length * sampled_token_entropy(row) for row in logprobs])
    assert probs @ per_response == pytest.approx(entropy_by_hand(probs), rel=1e-12)


def test_samples_from_another_distribution_estimate_the_cross_entropy():
    # E_{x ~ μ}[-log π(x)] = H(μ) + KL(μ || π): the estimate needs samples of π itself.
    pi = np.array([0.7, 0.1, 0.1, 0.1])
    mu = pi**2 / np.sum(pi**2)  # π at temperature 1/2
    cross = float(np.dot(mu, [sampled_token_entropy([math.log(p)]) for p in pi]))
    kl = sum(m * math.log(m / p) for m, p in zip(mu, pi, strict=True))
    assert cross == pytest.approx(entropy_by_hand(mu) + kl, rel=1e-12)
    assert abs(cross - entropy_by_hand(pi)) > 0.1


# --- constrained_probs ------------------------------------------------------------------------


@pytest.mark.equation("eq-constrained-decoding")
@given(data=st.data())
def test_constrained_probs_renormalize_the_allowed_probabilities(data):
    logits = data.draw(hnp.arrays(np.float64, (3, 5), elements=small))
    allowed = data.draw(hnp.arrays(np.bool_, (3, 5)).filter(lambda a: a.any(axis=-1).all()))
    expected = np.zeros((3, 5))
    for i in range(3):
        probs = softmax_rows(logits[i])
        mass = sum(p for p, keep in zip(probs, allowed[i], strict=True) if keep)
        expected[i] = [p / mass if keep else 0.0 for p, keep in zip(probs, allowed[i], strict=True)]
    got = constrained_probs(logits, allowed)
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-15)
    assert np.all(got[~allowed] == 0.0)


@given(logits=logit_arrays)
def test_allowing_every_token_is_the_softmax(logits):
    np.testing.assert_allclose(
        constrained_probs(logits, np.ones(logits.shape, dtype=bool)), softmax_rows(logits)
    )


def test_constrained_probs_stay_exact_when_the_allowed_tokens_are_improbable():
    # π of the allowed tokens underflows to 0, so π / Σ_allowed π would be 0 / 0.
    got = constrained_probs([0.0, -2000.0, -2001.0], [False, True, True])
    np.testing.assert_allclose(got, [0.0, 1.0 / (1.0 + math.exp(-1.0)), 1.0 / (1.0 + math.e)])


def test_a_constraint_after_the_decision_leaves_the_action_distribution_unchanged():
    # The tidy schema: anything until the first letter, then only full stops. Pr(action) is
    # unchanged because the continuations of a decided prefix sum to one (chapter 10).
    def tidy(prefix):
        decided = any(token < 2 for token in prefix)
        return [False, False, False, True] if decided else [True] * 4

    responses, free, _ = bigram_by_hand(BIGRAM_TABLE, 3)
    sequences = tokens.enumerate_sequences(4, 3)
    allowed = np.array([[tidy(x[:j]) for j in range(3)] for x in sequences])
    next_token = constrained_probs(tokens.bigram_logits(BIGRAM_TABLE, sequences), allowed)
    constrained = np.take_along_axis(next_token, sequences[..., None], -1)[..., 0].prod(-1)
    actions = np.array([next((t for t in x if t < 2), -1) for x in responses])
    for action in (-1, 0, 1):
        assert constrained[actions == action].sum() == pytest.approx(free[actions == action].sum())


# --- action_entropy ---------------------------------------------------------------------------


def plug_in_by_hand(labels, unparsed):
    counts = Counter(labels if unparsed == "category" else [a for a in labels if a >= 0])
    total = sum(counts.values())
    return entropy_by_hand([c / total for c in counts.values()]) if total else 0.0


@pytest.mark.equation("eq-action-entropy")
@given(
    actions=hnp.arrays(np.int64, (4, 6), elements=st.integers(-1, 3)),
    unparsed=st.sampled_from(["exclude", "category"]),
)
def test_action_entropy_is_the_plug_in_entropy_by_counting(actions, unparsed):
    expected = [plug_in_by_hand(list(row), unparsed) for row in actions]
    np.testing.assert_allclose(
        action_entropy(actions, 4, unparsed=unparsed), expected, rtol=1e-12, atol=1e-15
    )


@given(actions=hnp.arrays(np.int64, st.integers(1, 9), elements=st.integers(0, 4)))
def test_action_entropy_is_between_zero_and_log_of_the_distinct_actions(actions):
    h = action_entropy(actions, 5)
    assert 0.0 <= h <= math.log(len(set(actions.tolist()))) + 1e-12
    assert h == pytest.approx(action_entropy(actions[::-1], 5), abs=1e-15)


def test_action_entropy_ignores_the_surface_form():
    # Two groups that differ only in formatting have the same actions, hence the same entropy.
    assert action_entropy([0, 0, 0, 0], 2) == 0.0
    assert action_entropy([0, 1, 0, 1], 2) == pytest.approx(math.log(2.0))
    assert action_entropy([-1, -1], 2) == 0.0


@pytest.mark.parametrize("group_size", [2, 4, 8])
def test_the_plug_in_action_entropy_is_biased_low_by_enumeration(group_size):
    # E[Ĥ] < H for a group of N independent draws, every group listed with its probability.
    probs = np.array([0.5, 0.3, 0.2])
    expected = 0.0
    for group in itertools.product(range(3), repeat=group_size):
        weight = math.prod(probs[a] for a in group)
        expected += weight * action_entropy(np.array(group), 3)
    assert expected < entropy_by_hand(probs) - 0.01


# --- unique_successful_strategies -------------------------------------------------------------


@given(
    strategies=hnp.arrays(np.int64, (3, 5), elements=st.integers(-1, 3)),
    rewards=hnp.arrays(np.float64, (3, 5), elements=st.sampled_from([0.0, 0.5, 1.0])),
    threshold=st.sampled_from([0.0, 0.5, 1.0, 2.0]),
)
def test_unique_successful_strategies_counts_a_set(strategies, rewards, threshold):
    expected = [
        len({s for s, r in zip(row, row_rewards, strict=True) if s >= 0 and r >= threshold})
        for row, row_rewards in zip(strategies, rewards, strict=True)
    ]
    np.testing.assert_array_equal(
        unique_successful_strategies(strategies, rewards, 4, threshold=threshold), expected
    )


@pytest.mark.equation("eq-unique-successes")
def test_unique_successful_strategies_by_hand():
    assert unique_successful_strategies([0, 1, 1, 2], [1.0, 1.0, 1.0, 0.0], 3) == 2.0
    assert unique_successful_strategies([-1, -1, 0], [1.0, 1.0, 0.0], 3) == 0.0
    assert unique_successful_strategies([0, 1], [0.8, 0.79], 2, threshold=0.8) == 1.0


# --- group_reward_variance --------------------------------------------------------------------


@pytest.mark.equation("eq-group-variance")
@given(
    rewards=hnp.arrays(np.float64, (3, 6), elements=small),
    ddof=st.sampled_from([0, 1]),
)
def test_group_reward_variance_equals_the_statistics_module(rewards, ddof):
    function = statistics.pvariance if ddof == 0 else statistics.variance
    expected = [function(row.tolist()) for row in rewards]
    np.testing.assert_allclose(
        group_reward_variance(rewards, ddof=ddof), expected, rtol=1e-9, atol=1e-12
    )


@given(rewards=hnp.arrays(np.float64, st.integers(2, 8), elements=small), shift=small)
def test_group_reward_variance_ignores_a_shift_of_the_rewards(rewards, shift):
    assert group_reward_variance(rewards + shift) == pytest.approx(
        group_reward_variance(rewards), rel=1e-6, abs=1e-9
    )


@given(value=small, size=st.integers(1, 9))
def test_a_group_of_equal_rewards_has_exactly_zero_variance(value, size):
    assert group_reward_variance(np.full(size, value)) == 0.0


@given(rewards=hnp.arrays(np.float64, (4, 5), elements=st.sampled_from([0.0, 0.5, 1.0])))
def test_zero_variance_is_exactly_a_group_without_signal(rewards):
    # A group teaches nothing (every RLOO advantage is 0) exactly when its variance is 0.
    no_signal = np.all(groups.leave_one_out_advantages(rewards) == 0.0, axis=-1)
    np.testing.assert_array_equal(group_reward_variance(rewards) == 0.0, no_signal)
