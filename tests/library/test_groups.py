"""rlfound.groups: leave-one-out and group-normalized advantages, and exact group gradients.

References: the advantages written out member by member with explicit means and standard
deviations, an independent enumeration of every group by index arithmetic
(tests.oracles.group_expectation_by_hand), and central differences of the bandit objective
(tests.oracles.bandit_objective_by_hand) for the exact policy gradient.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from rlfound.groups import (
    enumerate_group_gradient,
    group_gradient_moments,
    group_normalized_advantages,
    leave_one_out_advantages,
)
from tests.oracles import bandit_objective_by_hand, central_differences, group_expectation_by_hand

# Rounded to 1e-6 so that no spread underflows (a std of 1e-302 squared is 0).
finite = st.floats(min_value=-10.0, max_value=10.0, allow_nan=False).map(lambda x: round(x, 6))
seeds = st.integers(0, 2**32 - 1)


@st.composite
def group_rewards(draw, min_group=1):
    batch_shape = draw(st.sampled_from([(), (1,), (3,), (2, 2)]))
    return draw(
        hnp.arrays(np.float64, (*batch_shape, draw(st.integers(min_group, 6))), elements=finite)
    )


def loop_std(values, ddof):
    mean = math.fsum(values) / len(values)
    return math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (len(values) - ddof))


def centered(rewards):
    """R_i - mean(R): a baseline that includes the sample itself."""
    return rewards - rewards.mean()


def bandit_gradient(logits, action_rewards):
    """∇_θ Σ_a π_θ(a) q(a), by central differences."""
    return central_differences(
        lambda theta: bandit_objective_by_hand(theta, action_rewards), logits
    )


# --- leave_one_out_advantages -------------------------------------------------------------------


def test_leave_one_out_advantages_by_hand():
    # 3 - (1 + 2)/2 = 1.5, 1 - (3 + 2)/2 = -1.5, 2 - (3 + 1)/2 = 0.
    np.testing.assert_allclose(leave_one_out_advantages([3.0, 1.0, 2.0]), [1.5, -1.5, 0.0])


@given(rewards=group_rewards(min_group=2))
def test_leave_one_out_advantages_subtract_the_mean_of_the_others(rewards):
    advantages = leave_one_out_advantages(rewards)
    assert advantages.shape == rewards.shape
    for index in np.ndindex(rewards.shape[:-1]):
        group = list(rewards[index])
        for i, reward in enumerate(group):
            others = group[:i] + group[i + 1 :]
            assert advantages[index][i] == pytest.approx(
                reward - math.fsum(others) / len(others), abs=1e-9
            )


@given(rewards=group_rewards(min_group=2))
def test_leave_one_out_advantages_are_the_centered_rewards_scaled_by_g_over_g_minus_one(rewards):
    size = rewards.shape[-1]
    np.testing.assert_allclose(
        leave_one_out_advantages(rewards),
        size / (size - 1) * (rewards - rewards.mean(axis=-1, keepdims=True)),
        atol=1e-9,
    )


# --- group_normalized_advantages ----------------------------------------------------------------


def test_group_normalized_advantages_by_hand():
    # Mean 2, population std 1: (-1, 1); with ddof = 1 the std is sqrt(2).
    np.testing.assert_allclose(group_normalized_advantages([1.0, 3.0], eps=0.0), [-1.0, 1.0])
    np.testing.assert_allclose(
        group_normalized_advantages([1.0, 3.0], eps=0.0, ddof=1), [-(0.5**0.5), 0.5**0.5]
    )


def test_group_normalized_advantages_without_self_by_hand():
    # For R_0 = 4 the others (0, 2) have mean 1 and std 1: (4 - 1) / (1 + 1) = 1.5 with eps = 1.
    advantages = group_normalized_advantages([4.0, 0.0, 2.0], eps=1.0, include_self=False)
    np.testing.assert_allclose(advantages, [1.5, -1.5, 0.0])


@given(
    rewards=group_rewards(min_group=2),
    ddof=st.integers(0, 1),
    eps=st.sampled_from([0.0, 1e-6, 0.1]),
)
def test_group_normalized_advantages_standardize_within_each_group(rewards, ddof, eps):
    advantages = group_normalized_advantages(rewards, eps=eps, ddof=ddof)
    for index in np.ndindex(rewards.shape[:-1]):
        group = list(rewards[index])
        if max(group) == min(group):
            np.testing.assert_array_equal(advantages[index], 0.0)
            continue
        mean, std = math.fsum(group) / len(group), loop_std(group, ddof)
        for i, reward in enumerate(group):
            assert advantages[index][i] == pytest.approx((reward - mean) / (std + eps), abs=1e-7)


@given(rewards=group_rewards(min_group=3), ddof=st.integers(0, 1), eps=st.sampled_from([1e-6, 0.1]))
def test_group_normalized_advantages_without_self_use_the_others_statistics(rewards, ddof, eps):
    advantages = group_normalized_advantages(rewards, eps=eps, ddof=ddof, include_self=False)
    for index in np.ndindex(rewards.shape[:-1]):
        group = list(rewards[index])
        for i, reward in enumerate(group):
            if max(group) == min(group):
                expected = 0.0
            else:
                others = group[:i] + group[i + 1 :]
                mean = math.fsum(others) / len(others)
                expected = (reward - mean) / (loop_std(others, ddof) + eps)
            assert advantages[index][i] == pytest.approx(expected, rel=1e-7, abs=1e-6)


@pytest.mark.equation("eq-standardized-invariance")
@given(
    rewards=group_rewards(min_group=3),
    shift=finite,
    scale=st.floats(0.1, 10.0),
    include_self=st.booleans(),
)
def test_group_normalized_advantages_are_invariant_under_positive_affine_maps(
    rewards, shift, scale, include_self
):
    # Members at least 1 apart, so that eps (1e-12) is negligible next to every std.
    rewards = np.sort(rewards, axis=-1) + np.arange(rewards.shape[-1])
    before = group_normalized_advantages(rewards, eps=1e-12, include_self=include_self)
    after = group_normalized_advantages(
        scale * rewards + shift, eps=1e-12, include_self=include_self
    )
    np.testing.assert_allclose(after, before, rtol=1e-6, atol=1e-6)


@pytest.mark.equation("eq-constant-reward")
@pytest.mark.parametrize("scale", ["group", "batch", None])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("eps", [0.0, 1e-6])
@pytest.mark.parametrize("value", [0.0, 0.1, -3.7, 1e6])
def test_a_group_of_equal_rewards_gets_exact_zeros(value, eps, include_self, scale):
    advantages = group_normalized_advantages(np.full((2, 5), value), eps, 0, include_self, scale)
    np.testing.assert_array_equal(advantages, 0.0)
    np.testing.assert_array_equal(leave_one_out_advantages(np.full((2, 5), value)), 0.0)


@pytest.mark.parametrize("scale", ["group", "batch", None])
def test_an_equal_group_next_to_a_spread_one_gets_exact_zeros(scale):
    # With "batch" the std is shared, but the equal group's centered rewards are exactly 0.
    rewards = np.array([[0.3, 0.3, 0.3], [0.0, 1.0, 5.0]])
    advantages = group_normalized_advantages(rewards, scale=scale)
    np.testing.assert_array_equal(advantages[0], 0.0)
    assert np.all(advantages[1] != 0.0)


@pytest.mark.parametrize("scale", ["group", "batch", None])
def test_a_group_of_one_raises(scale):
    # A group of one has no other member to compare with; verl would return the raw reward.
    with pytest.raises(ValueError, match="rewards must have at least 2 members per group"):
        group_normalized_advantages([[4.0], [-1.0]], scale=scale)
    with pytest.raises(ValueError, match="rewards must have at least 2 members per group"):
        leave_one_out_advantages([[4.0], [-1.0]])


# --- enumerate_group_gradient -------------------------------------------------------------------


def test_enumerate_group_gradient_by_hand():
    # π = (1/2, 1/2), q = (1, 3), G = 2, leave-one-out: equal pairs get A = 0; the pairs (0, 1)
    # and (1, 0), each of probability 1/4, get A = (-2, 2) and the estimate
    # (1/2)[-2 (1/2, -1/2) + 2 (-1/2, 1/2)] = (-1, 1). The expectation is (-1/2, 1/2).
    np.testing.assert_allclose(
        enumerate_group_gradient([0.0, 0.0], [1.0, 3.0], 2, leave_one_out_advantages),
        [-0.5, 0.5],
        rtol=1e-14,
    )


@given(seed=seeds, group_size=st.integers(1, 3))
def test_enumerate_group_gradient_equals_an_independent_enumeration(seed, group_size):
    rng = np.random.default_rng(seed)
    logits, action_rewards = rng.normal(size=3), rng.normal(size=3)

    def advantage_fn(rewards):
        return np.cumsum(rewards) - rewards**2  # any function of the whole group

    np.testing.assert_allclose(
        enumerate_group_gradient(logits, action_rewards, group_size, advantage_fn),
        group_expectation_by_hand(logits, action_rewards, group_size, advantage_fn),
        atol=1e-12,
    )


@given(seed=seeds, group_size=st.integers(2, 4))
def test_leave_one_out_group_gradient_is_the_exact_policy_gradient(seed, group_size):
    rng = np.random.default_rng(seed)
    logits, action_rewards = rng.normal(size=3), rng.normal(size=3)
    np.testing.assert_allclose(
        enumerate_group_gradient(logits, action_rewards, group_size, leave_one_out_advantages),
        bandit_gradient(logits, action_rewards),
        atol=1e-8,
    )


@given(seed=seeds, group_size=st.integers(1, 4))
def test_a_group_mean_that_includes_the_sample_shrinks_the_gradient_by_g_minus_one_over_g(
    seed, group_size
):
    rng = np.random.default_rng(seed)
    logits, action_rewards = rng.normal(size=3), rng.normal(size=3)
    np.testing.assert_allclose(
        enumerate_group_gradient(logits, action_rewards, group_size, centered),
        (group_size - 1) / group_size * bandit_gradient(logits, action_rewards),
        atol=1e-8,
    )


@pytest.mark.equation("eq-constant-reward")
@pytest.mark.parametrize(
    "advantage_fn",
    [leave_one_out_advantages, centered, group_normalized_advantages, lambda r: r - 0.25],
    ids=["leave-one-out", "centered", "group-normalized", "constant-baseline"],
)
def test_a_constant_reward_has_zero_expected_group_gradient(advantage_fn):
    # Nothing to learn when every action earns the same: each estimator averages to exactly 0.
    expectation = enumerate_group_gradient([0.4, -1.0, 1.3], np.full(3, 0.7), 3, advantage_fn)
    np.testing.assert_allclose(expectation, 0.0, atol=1e-15)


# --- group_normalized_advantages: the scale argument (chapter 7) ---------------------------------


def batch_std_loop(batch, ddof):
    values = [float(v) for v in np.ravel(batch)]
    return loop_std(values, ddof)


def test_the_default_scale_is_the_group_std():
    rewards = np.array([[1.0, 0.0, 3.0], [2.0, 2.5, -1.0]])
    np.testing.assert_array_equal(
        group_normalized_advantages(rewards), group_normalized_advantages(rewards, scale="group")
    )


def test_scale_none_by_hand():
    # Dr. GRPO: the centered rewards, mean 4/3.
    np.testing.assert_allclose(
        group_normalized_advantages([3.0, 1.0, 0.0], scale=None), [5 / 3, -1 / 3, -4 / 3]
    )


def test_scale_batch_by_hand():
    # Group means 1 and 3; the four rewards (0, 2, 2, 4) have mean 2 and population std sqrt(2).
    advantages = group_normalized_advantages([[0.0, 2.0], [2.0, 4.0]], eps=0.0, scale="batch")
    np.testing.assert_allclose(advantages, [[-(0.5**0.5), 0.5**0.5], [-(0.5**0.5), 0.5**0.5]])


@given(rewards=group_rewards(min_group=2), include_self=st.booleans())
def test_scale_none_subtracts_the_mean_of_the_group_or_of_the_others(rewards, include_self):
    advantages = group_normalized_advantages(rewards, include_self=include_self, scale=None)
    for index in np.ndindex(rewards.shape[:-1]):
        group = list(rewards[index])
        for i, reward in enumerate(group):
            members = group if include_self else group[:i] + group[i + 1 :]
            expected = reward - math.fsum(members) / len(members)
            assert advantages[index][i] == pytest.approx(expected, abs=1e-9)


@given(rewards=group_rewards(min_group=2), ddof=st.integers(0, 1), eps=st.sampled_from([1e-6, 0.1]))
def test_scale_batch_divides_by_the_std_of_every_reward_in_the_array(rewards, ddof, eps):
    advantages = group_normalized_advantages(rewards, eps=eps, ddof=ddof, scale="batch")
    std = batch_std_loop(rewards, ddof)
    for index in np.ndindex(rewards.shape[:-1]):
        group = list(rewards[index])
        mean = math.fsum(group) / len(group)
        for i, reward in enumerate(group):
            expected = 0.0 if max(group) == min(group) else (reward - mean) / (std + eps)
            assert advantages[index][i] == pytest.approx(expected, rel=1e-7, abs=1e-7)


@given(rewards=hnp.arrays(np.float64, st.integers(2, 6), elements=finite), ddof=st.integers(0, 1))
def test_scale_batch_of_a_single_group_is_the_group_std(rewards, ddof):
    np.testing.assert_allclose(
        group_normalized_advantages(rewards, ddof=ddof, scale="batch"),
        group_normalized_advantages(rewards, ddof=ddof, scale="group"),
        atol=1e-12,
    )


def test_scale_batch_keeps_the_relative_size_of_groups_and_scale_group_erases_it():
    # Two groups with the same pattern, one spread 100 times less: "group" gives both unit
    # advantages; "batch" and None keep the factor 100 between them.
    rewards = np.array([[0.0, 1.0, 1.0, 0.0], [0.50, 0.51, 0.51, 0.50]])
    for scale, ratio in (("group", 1.0), ("batch", 100.0), (None, 100.0)):
        advantages = group_normalized_advantages(rewards, eps=0.0, scale=scale)
        np.testing.assert_allclose(advantages[0], ratio * advantages[1], rtol=1e-9)


# --- identities and invariants (section 19 of the source; chapter 7) ----------------------------


@pytest.mark.equation("eq-rloo-identity")
@given(rewards=group_rewards(min_group=2))
def test_rloo_identity_and_dr_grpo_is_loo_times_n_minus_one_over_n(rewards):
    size = rewards.shape[-1]
    centered = rewards - rewards.mean(axis=-1, keepdims=True)
    loo = leave_one_out_advantages(rewards)
    np.testing.assert_allclose(loo, size / (size - 1) * centered, atol=1e-9)
    np.testing.assert_allclose(
        group_normalized_advantages(rewards, scale=None), (size - 1) / size * loo, atol=1e-9
    )
    np.testing.assert_allclose(
        group_normalized_advantages(rewards, include_self=False, scale=None), loo, atol=1e-9
    )


@given(rewards=group_rewards(min_group=2))
def test_leave_one_out_and_centered_advantages_sum_to_zero_in_every_group(rewards):
    for advantages in (
        leave_one_out_advantages(rewards),
        group_normalized_advantages(rewards, scale=None),
    ):
        sums = advantages.sum(axis=-1)
        np.testing.assert_allclose(sums, 0.0, atol=1e-9 * (1.0 + np.abs(rewards).sum()))


@pytest.mark.equation("eq-shift-invariance")
@given(
    rewards=group_rewards(min_group=2),
    data=st.data(),
    scale=st.sampled_from(["group", None]),
    include_self=st.booleans(),
)
def test_adding_a_constant_to_each_group_changes_no_advantage(rewards, data, scale, include_self):
    # One shift per group (a different constant for every group of the batch).
    shifts = data.draw(hnp.arrays(np.float64, (*rewards.shape[:-1], 1), elements=finite))
    kwargs = {"eps": 1e-6, "include_self": include_self, "scale": scale}
    if include_self is False and scale == "group":
        rewards = np.sort(rewards, axis=-1) + np.arange(rewards.shape[-1])  # no zero std
    before = group_normalized_advantages(rewards, **kwargs)
    after = group_normalized_advantages(rewards + shifts, **kwargs)
    np.testing.assert_allclose(after, before, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(
        leave_one_out_advantages(rewards + shifts), leave_one_out_advantages(rewards), atol=1e-6
    )


@given(rewards=group_rewards(min_group=2), shift=finite, factor=st.floats(0.1, 10.0))
def test_scale_batch_is_invariant_to_a_positive_affine_map_of_the_whole_batch(
    rewards, shift, factor
):
    rewards = np.sort(rewards, axis=-1) + np.arange(rewards.shape[-1])  # batch std >= 0.5
    before = group_normalized_advantages(rewards, eps=1e-12, scale="batch")
    after = group_normalized_advantages(factor * rewards + shift, eps=1e-12, scale="batch")
    np.testing.assert_allclose(after, before, rtol=1e-6, atol=1e-6)


def test_scale_batch_is_not_invariant_to_shifting_one_group():
    # Shifting one group moves it away from the others and inflates the batch's std.
    rewards = np.array([[0.0, 1.0], [0.0, 1.0]])
    shifted = rewards + np.array([[0.0], [10.0]])
    before = group_normalized_advantages(rewards, scale="batch")
    after = group_normalized_advantages(shifted, scale="batch")
    assert np.all(np.abs(after) < 0.2 * np.abs(before))


@given(rewards=group_rewards(min_group=2), factor=st.floats(0.1, 10.0))
def test_scale_none_is_proportional_to_the_rewards(rewards, factor):
    np.testing.assert_allclose(
        group_normalized_advantages(factor * rewards, scale=None),
        factor * group_normalized_advantages(rewards, scale=None),
        rtol=1e-9,
        atol=1e-9,
    )


# --- bad input -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"rewards": [[1.0], [2.0]]}, "rewards must have at least 2 members per group"),
        ({"rewards": [1.0, np.inf]}, "rewards must be finite"),
        ({"rewards": [1.0, 2.0], "scale": "mean"}, "scale must be 'group', 'batch' or None"),
        ({"rewards": [1.0, 2.0], "scale": False}, "scale must be 'group', 'batch' or None"),
        ({"rewards": [1.0, 2.0], "eps": -1e-8}, "eps must be a non-negative finite number"),
        ({"rewards": [1.0, 2.0], "ddof": 2}, "ddof must be smaller than the number of members"),
        (
            {"rewards": [1.0, 2.0, 3.0], "ddof": 2, "include_self": False},
            "ddof must be smaller than the number of members in each statistic (2)",
        ),
        (
            {"rewards": [1.0, 2.0], "ddof": 2, "scale": "batch"},
            "ddof must be smaller than the number of rewards in the batch (2)",
        ),
    ],
)
def test_bad_input_raises_naming_the_argument(kwargs, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        group_normalized_advantages(**kwargs)


def test_scale_none_ignores_ddof_and_eps_values_that_would_not_fit_a_std():
    # No std is computed, so ddof >= N is harmless; eps is still checked for its sign.
    np.testing.assert_allclose(
        group_normalized_advantages([1.0, 3.0], ddof=5, scale=None), [-1.0, 1.0]
    )


# --- group_gradient_moments ----------------------------------------------------------------------


def moments_by_hand(probs, outcome_rewards, scores, group_size, advantage_fn):
    """Mean, per-member and group total variance, by index arithmetic over all K^N groups."""
    k = len(probs)
    flat = np.asarray(scores, dtype=np.float64).reshape(k, -1)
    first, second = np.zeros(flat.shape[1]), 0.0
    member_first = [np.zeros(flat.shape[1]) for _ in range(group_size)]
    member_second = [0.0] * group_size
    for code in range(k**group_size):
        group = [(code // k**i) % k for i in range(group_size)]
        probability = math.prod(probs[j] for j in group)
        advantages = advantage_fn(np.array([outcome_rewards[j] for j in group], dtype=float))
        terms = [advantages[i] * flat[j] for i, j in enumerate(group)]
        estimate = sum(terms) / group_size
        first += probability * estimate
        second += probability * float(estimate @ estimate)
        for i, term in enumerate(terms):
            member_first[i] += probability * term
            member_second[i] += probability * float(term @ term)
    per_member = [
        member_second[i] - float(member_first[i] @ member_first[i]) for i in range(group_size)
    ]
    return first, sum(per_member) / group_size, second - float(first @ first)


def test_group_gradient_moments_by_hand():
    # Outcomes 1 and 0, each with probability 1/2, scores +-1/2. Plain REINFORCE: x = R psi is
    # 1/2 or 0, mean 1/4, variance 1/16; the mean of two independent terms has variance 1/32.
    # Leave-one-out on a pair: (1, 0) and (0, 1) give x = (1/2, 1/2), equal pairs give 0, so
    # the group estimate is 1/2 with probability 1/2: mean 1/4, variance 1/16.
    mean, per_sample, per_group = group_gradient_moments(
        [0.5, 0.5], [1.0, 0.0], [0.5, -0.5], 2, lambda r: r
    )
    assert (float(mean), per_sample, per_group) == pytest.approx((0.25, 1 / 16, 1 / 32))
    mean, per_sample, per_group = group_gradient_moments(
        [0.5, 0.5], [1.0, 0.0], [0.5, -0.5], 2, leave_one_out_advantages
    )
    assert (float(mean), per_sample, per_group) == pytest.approx((0.25, 1 / 16, 1 / 16))


@given(seed=seeds, group_size=st.integers(1, 3))
def test_group_gradient_moments_equal_an_independent_enumeration(seed, group_size):
    rng = np.random.default_rng(seed)
    probs = rng.dirichlet(np.ones(3))
    outcome_rewards, scores = rng.normal(size=3), rng.normal(size=(3, 2, 2))

    def advantage_fn(rewards):
        return np.cumsum(rewards) - rewards**2  # treats the members differently

    mean, per_sample, per_group = group_gradient_moments(
        probs, outcome_rewards, scores, group_size, advantage_fn
    )
    first, sample, group = moments_by_hand(probs, outcome_rewards, scores, group_size, advantage_fn)
    assert mean.shape == (2, 2)
    np.testing.assert_allclose(mean.ravel(), first, atol=1e-12)
    assert per_sample == pytest.approx(sample, abs=1e-12)
    assert per_group == pytest.approx(group, abs=1e-12)


@given(seed=seeds, group_size=st.integers(1, 4))
def test_group_gradient_moments_on_a_bandit_match_enumerate_group_gradient(seed, group_size):
    rng = np.random.default_rng(seed)
    logits, q = rng.normal(size=3), rng.normal(size=3)
    probs = np.exp(logits) / np.exp(logits).sum()
    scores = np.eye(3) - probs  # e_a - pi
    for rule in (leave_one_out_advantages, centered):
        if group_size == 1 and rule is leave_one_out_advantages:
            continue
        mean, _, _ = group_gradient_moments(probs, q, scores, group_size, rule)
        np.testing.assert_allclose(
            mean, enumerate_group_gradient(logits, q, group_size, rule), atol=1e-12
        )


@given(seed=seeds, group_size=st.integers(1, 4))
def test_independent_terms_divide_the_variance_by_the_group_size(seed, group_size):
    # Plain REINFORCE (A_i = R_i): the N terms are independent, so tr Cov of their mean is
    # tr Cov of one term over N; a shared baseline would correlate them.
    rng = np.random.default_rng(seed)
    probs = rng.dirichlet(np.ones(3))
    _, per_sample, per_group = group_gradient_moments(
        probs, rng.normal(size=3), rng.normal(size=(3, 4)), group_size, lambda r: r
    )
    assert per_group == pytest.approx(per_sample / group_size, rel=1e-10, abs=1e-14)


@pytest.mark.equation("eq-binomial-expectation")
@pytest.mark.parametrize("p", [0.1, 0.5, 0.8])
@pytest.mark.parametrize("group_size", [2, 3, 6])
def test_leave_one_out_variance_on_binary_rewards_matches_the_binomial_sum(p, group_size):
    # Two actions, rewards 1 and 0: a group with k successes updates by
    # k (N - k) / (N (N - 1)) (1, -1) (chapter 3's solution), so tr Cov = 2 Var[h(M)],
    # M ~ Binomial(N, p).
    probs = np.array([p, 1.0 - p])
    mean, _, per_group = group_gradient_moments(
        probs, [1.0, 0.0], np.eye(2) - probs, group_size, leave_one_out_advantages
    )
    weights = [
        math.comb(group_size, k) * p**k * (1 - p) ** (group_size - k) for k in range(group_size + 1)
    ]
    h = [k * (group_size - k) / (group_size * (group_size - 1)) for k in range(group_size + 1)]
    mean_h = math.fsum(w * x for w, x in zip(weights, h, strict=True))
    var_h = math.fsum(w * x * x for w, x in zip(weights, h, strict=True)) - mean_h**2
    np.testing.assert_allclose(mean, [p * (1 - p), -p * (1 - p)], atol=1e-14)
    assert per_group == pytest.approx(2 * var_h, rel=1e-10)


def test_outcomes_of_probability_zero_are_skipped():
    scores = np.array([[1.0, -1.0], [0.5, 0.5], [9.0, 9.0]])
    with_zero = group_gradient_moments([0.4, 0.6, 0.0], [1.0, 2.0, 5.0], scores, 3, centered)
    without = group_gradient_moments([0.4, 0.6], [1.0, 2.0], scores[:2], 3, centered)
    np.testing.assert_allclose(with_zero[0], without[0], atol=1e-15)
    assert with_zero[1:] == pytest.approx(without[1:], abs=1e-15)
