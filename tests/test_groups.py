"""rlfound.groups: leave-one-out and group-normalized advantages, and exact group gradients.

References: the advantages written out member by member with explicit means and standard
deviations, an independent enumeration of every group by index arithmetic
(tests.oracles.group_expectation_by_hand), and central differences of the bandit objective
(tests.oracles.bandit_objective_by_hand) for the exact policy gradient.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from rlfound.groups import (
    enumerate_group_gradient,
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


@given(rewards=group_rewards(), ddof=st.integers(0, 1), eps=st.sampled_from([0.0, 1e-6, 0.1]))
def test_group_normalized_advantages_standardize_within_each_group(rewards, ddof, eps):
    if rewards.shape[-1] <= ddof:
        rewards = np.concatenate([rewards, rewards + 1.0], axis=-1)
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


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("eps", [0.0, 1e-6])
@pytest.mark.parametrize("value", [0.0, 0.1, -3.7, 1e6])
def test_a_group_of_equal_rewards_gets_exact_zeros(value, eps, include_self):
    advantages = group_normalized_advantages(np.full((2, 5), value), eps, 0, include_self)
    np.testing.assert_array_equal(advantages, 0.0)


def test_a_group_of_one_gets_zero():
    np.testing.assert_array_equal(group_normalized_advantages([[4.0], [-1.0]]), [[0.0], [0.0]])


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


@pytest.mark.parametrize(
    "advantage_fn",
    [leave_one_out_advantages, centered, group_normalized_advantages, lambda r: r - 0.25],
    ids=["leave-one-out", "centered", "group-normalized", "constant-baseline"],
)
def test_a_constant_reward_has_zero_expected_group_gradient(advantage_fn):
    # Nothing to learn when every action earns the same: each estimator averages to exactly 0.
    expectation = enumerate_group_gradient([0.4, -1.0, 1.3], np.full(3, 0.7), 3, advantage_fn)
    np.testing.assert_allclose(expectation, 0.0, atol=1e-15)
