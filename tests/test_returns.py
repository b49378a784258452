"""Discounted returns, eq-return: G_t = sum_k gamma^k r_{t+k}, checked against explicit sums."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from rlfound.returns import discounted_returns

finite = st.floats(min_value=-10.0, max_value=10.0, allow_nan=False, allow_infinity=False)
gammas = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


def double_sum_returns(rewards, gamma):
    """G_t = sum_{k=0}^{T-1-t} gamma^k r_{t+k}, one explicit sum per t (Python ``**``: 0**0 = 1)."""
    rewards = [float(r) for r in rewards]
    horizon = len(rewards)
    return np.array(
        [sum(gamma**k * rewards[t + k] for k in range(horizon - t)) for t in range(horizon)]
    )


def test_hand_computed_example():
    # G_2 = 3, G_1 = 2 + 0.5 * 3 = 3.5, G_0 = 1 + 0.5 * 3.5 = 2.75
    np.testing.assert_allclose(discounted_returns([1.0, 2.0, 3.0], 0.5), [2.75, 3.5, 3.0])


def test_gamma_zero_returns_the_rewards():
    rewards = np.array([1.5, -2.0, 0.25, 4.0])
    np.testing.assert_allclose(discounted_returns(rewards, 0.0), rewards, rtol=0, atol=0)


def test_gamma_one_is_the_reverse_cumulative_sum():
    rewards = np.array([1.0, -2.0, 0.5, 3.0])
    np.testing.assert_allclose(discounted_returns(rewards, 1.0), [2.5, 1.5, 3.5, 3.0])


def test_sparse_terminal_reward_is_discounted_back():
    # An LLM-style episode: one reward at the end, so G_t = gamma^(T-1-t).
    rewards = np.zeros(5)
    rewards[-1] = 1.0
    np.testing.assert_allclose(discounted_returns(rewards, 0.9), 0.9 ** np.arange(4, -1, -1))


def test_single_step():
    np.testing.assert_allclose(discounted_returns([2.0], 0.3), [2.0])


def test_output_is_float64_and_input_is_not_modified():
    rewards = np.array([1, 2, 3])
    copy = rewards.copy()
    out = discounted_returns(rewards, 0.5)
    assert out.dtype == np.float64
    assert out.shape == (3,)
    np.testing.assert_array_equal(rewards, copy)


@given(rewards=st.lists(finite, min_size=1, max_size=30), gamma=gammas)
def test_matches_explicit_double_sum(rewards, gamma):
    np.testing.assert_allclose(
        discounted_returns(np.array(rewards), gamma),
        double_sum_returns(rewards, gamma),
        rtol=1e-10,
        atol=1e-10,
    )


@given(
    rewards=hnp.arrays(
        np.float64,
        hnp.array_shapes(min_dims=2, max_dims=4, min_side=1, max_side=5),
        elements=finite,
    ),
    gamma=gammas,
)
def test_batched_leading_axes_match_per_trajectory_sums(rewards, gamma):
    out = discounted_returns(rewards, gamma)
    assert out.shape == rewards.shape
    for index in np.ndindex(rewards.shape[:-1]):
        np.testing.assert_allclose(
            out[index], double_sum_returns(rewards[index], gamma), rtol=1e-10, atol=1e-10
        )


@pytest.mark.parametrize("gamma", [0.0, 0.5, 0.99, 1.0])
def test_recursion_holds(gamma):
    rng = np.random.default_rng(3)
    rewards = rng.normal(size=(4, 12))
    returns = discounted_returns(rewards, gamma)
    # G_t - gamma G_{t+1} = r_t, and the last return is the last reward (G_T = 0).
    np.testing.assert_allclose(
        returns[:, :-1] - gamma * returns[:, 1:], rewards[:, :-1], rtol=1e-12, atol=1e-12
    )
    np.testing.assert_allclose(returns[:, -1], rewards[:, -1], rtol=0, atol=0)
