"""Group baselines (eq-loo-baseline): leave-one-out and group-normalised advantages."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from rlfound.groups import group_normalized_advantages, leave_one_out_advantages

# Rounded to 1e-6 so that no spread underflows (a std of 1e-302 squared is 0).
finite = st.floats(min_value=-10.0, max_value=10.0, allow_nan=False).map(lambda x: round(x, 6))


@st.composite
def group_rewards(draw, min_group=1):
    batch_shape = draw(st.sampled_from([(), (1,), (3,), (2, 2)]))
    group = draw(st.integers(min_group, 6))
    return draw(hnp.arrays(np.float64, (*batch_shape, group), elements=finite))


def loop_std(values, ddof):
    mean = sum(values) / len(values)
    return math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - ddof))


# --- leave-one-out -------------------------------------------------------------------------------


@given(rewards=group_rewards(min_group=2))
def test_leave_one_out_matches_explicit_formula(rewards):
    advantages = leave_one_out_advantages(rewards)
    assert advantages.shape == rewards.shape
    size = rewards.shape[-1]
    for index in np.ndindex(*rewards.shape[:-1]):
        group = list(rewards[index])
        for i in range(size):
            others = group[:i] + group[i + 1 :]
            expected = group[i] - sum(others) / (size - 1)
            assert math.isclose(advantages[index][i], expected, rel_tol=1e-9, abs_tol=1e-9)
    np.testing.assert_allclose(advantages.sum(axis=-1), 0.0, atol=1e-9)
    centred = rewards - rewards.mean(axis=-1, keepdims=True)
    np.testing.assert_allclose(advantages, size / (size - 1) * centred, atol=1e-9)


def test_leave_one_out_by_hand():
    np.testing.assert_allclose(leave_one_out_advantages([1.0, 0.0]), [1.0, -1.0])
    np.testing.assert_allclose(leave_one_out_advantages([3.0, 1.0, 2.0]), [1.5, -1.5, 0.0])


# --- group-normalised ----------------------------------------------------------------------------


@given(
    rewards=group_rewards(min_group=2),
    ddof=st.integers(0, 1),
    eps=st.sampled_from([0.0, 1e-6, 0.1]),
)
def test_group_normalized_matches_explicit_formula(rewards, ddof, eps):
    advantages = group_normalized_advantages(rewards, eps=eps, ddof=ddof)
    assert advantages.shape == rewards.shape
    for index in np.ndindex(*rewards.shape[:-1]):
        group = list(rewards[index])
        if max(group) == min(group):
            np.testing.assert_array_equal(advantages[index], 0.0)
            continue
        mean, std = sum(group) / len(group), loop_std(group, ddof)
        for i, r in enumerate(group):
            expected = (r - mean) / (std + eps)
            assert math.isclose(advantages[index][i], expected, rel_tol=1e-7, abs_tol=1e-7)


@given(rewards=group_rewards(min_group=3), ddof=st.integers(0, 1), eps=st.sampled_from([1e-6, 0.1]))
def test_group_normalized_without_self_matches_explicit_formula(rewards, ddof, eps):
    advantages = group_normalized_advantages(rewards, eps=eps, ddof=ddof, include_self=False)
    for index in np.ndindex(*rewards.shape[:-1]):
        group = list(rewards[index])
        for i, r in enumerate(group):
            others = group[:i] + group[i + 1 :]
            if max(group) == min(group):
                expected = 0.0
            else:
                mean = sum(others) / len(others)
                expected = (r - mean) / (loop_std(others, ddof) + eps)
            assert math.isclose(advantages[index][i], expected, rel_tol=1e-7, abs_tol=1e-6)


def test_without_self_and_no_std_scaling_is_leave_one_out():
    # With the leave-one-out mean and a unit scale (std replaced by eps = 1 and a constant
    # group of others) the two functions agree; in general they differ by the std.
    rewards = np.array([2.0, 0.0, 0.0])
    np.testing.assert_allclose(
        group_normalized_advantages(rewards, eps=1.0, include_self=False)[0],
        leave_one_out_advantages(rewards)[0],
    )


@given(
    rewards=group_rewards(min_group=2),
    shift=finite,
    scale=st.floats(0.1, 10.0),
    include_self=st.booleans(),
)
def test_group_normalized_is_affine_invariant(rewards, shift, scale, include_self):
    if not include_self and rewards.shape[-1] < 3:
        rewards = np.concatenate([rewards, rewards[..., :1]], axis=-1)
    # Members at least 1 apart, so no statistic is dominated by eps (the invariance holds
    # up to eps, which is tested on its own below).
    rewards = np.sort(rewards, axis=-1) + np.arange(rewards.shape[-1])
    eps = 1e-12
    before = group_normalized_advantages(rewards, eps=eps, include_self=include_self)
    after = group_normalized_advantages(scale * rewards + shift, eps=eps, include_self=include_self)
    np.testing.assert_allclose(after, before, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("eps", [0.0, 1e-6])
@pytest.mark.parametrize("value", [0.0, 0.1, -3.7, 1e6])
def test_all_equal_group_gives_exact_zeros(value, eps, include_self):
    rewards = np.full((2, 5), value)
    advantages = group_normalized_advantages(rewards, eps=eps, include_self=include_self)
    np.testing.assert_array_equal(advantages, 0.0)


def test_group_of_one_gives_zero():
    np.testing.assert_array_equal(group_normalized_advantages([[4.0], [-1.0]]), [[0.0], [0.0]])


def test_group_normalized_by_hand():
    # mean 2, population std 1: A = (-1, 1) / (1 + eps).
    np.testing.assert_allclose(group_normalized_advantages([1.0, 3.0], eps=0.0), [-1.0, 1.0])
    # ddof = 1: std = sqrt(2).
    np.testing.assert_allclose(
        group_normalized_advantages([1.0, 3.0], eps=0.0, ddof=1), [-1 / 2**0.5, 1 / 2**0.5]
    )


def test_groups_are_independent():
    rewards = np.array([[1.0, 2.0, 4.0], [0.0, 0.0, 9.0]])
    for row in range(2):
        np.testing.assert_array_equal(
            group_normalized_advantages(rewards)[row], group_normalized_advantages(rewards[row])
        )
        np.testing.assert_array_equal(
            leave_one_out_advantages(rewards)[row], leave_one_out_advantages(rewards[row])
        )
