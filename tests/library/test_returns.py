"""rlfound.returns: the backward scan, discounted returns, and returns of packed streams.

References: explicit double sums (tests.oracles.discounted_sum_loop, returns_loop) and the
per-episode loop of tests.oracles.packed_returns_loop. Bad input is in test_bad_input.py.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from rlfound.returns import discounted_cumsum, discounted_returns, packed_discounted_returns
from tests.oracles import discounted_sum_loop, packed_batches, packed_returns_loop, returns_loop

finite = st.floats(min_value=-10.0, max_value=10.0, allow_nan=False, allow_infinity=False)
unit = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
factors = st.floats(min_value=-1.5, max_value=1.5, allow_nan=False)  # any finite reals
batch_shapes = st.sampled_from([(), (1,), (3,), (2, 2)])


@st.composite
def terms_and_discounts(draw, elements=factors):
    shape = (*draw(batch_shapes), draw(st.integers(1, 8)))
    terms = draw(hnp.arrays(np.float64, shape, elements=finite))
    discounts = draw(hnp.arrays(np.float64, shape, elements=elements))
    return terms, discounts


# --- discounted_cumsum ------------------------------------------------------------------------


def test_discounted_cumsum_scalar_discount_by_hand():
    # y_2 = 3, y_1 = 2 + 0.5 * 3 = 3.5, y_0 = 1 + 0.5 * 3.5 = 2.75
    np.testing.assert_allclose(discounted_cumsum([1.0, 2.0, 3.0], 0.5), [2.75, 3.5, 3.0])


def test_discounted_cumsum_per_step_discounts_by_hand():
    # y_2 = 4, y_1 = -1 + 0.5 * 4 = 1, y_0 = 2 + 1.0 * 1 = 3; c_2 multiplies y_3 = 0.
    np.testing.assert_allclose(discounted_cumsum([2.0, -1.0, 4.0], [1.0, 0.5, 0.25]), [3, 1, 4])


@given(pair=terms_and_discounts())
def test_discounted_cumsum_per_step_equals_explicit_product_sums(pair):
    terms, discounts = pair
    result = discounted_cumsum(terms, discounts)
    assert result.shape == terms.shape
    for index in np.ndindex(terms.shape[:-1]):
        np.testing.assert_allclose(
            result[index], discounted_sum_loop(terms[index], discounts[index]), atol=1e-9
        )


@given(pair=terms_and_discounts(), discount=factors)
def test_discounted_cumsum_scalar_discount_equals_explicit_sums(pair, discount):
    terms, _ = pair
    result = discounted_cumsum(terms, discount)
    for index in np.ndindex(terms.shape[:-1]):
        np.testing.assert_allclose(
            result[index], discounted_sum_loop(terms[index], discount), atol=1e-9
        )


@given(pair=terms_and_discounts(), data=st.data())
def test_a_zero_discount_splits_the_scan_into_independent_sums(pair, data):
    terms, discounts = pair
    cut = data.draw(st.integers(0, terms.shape[-1] - 1))
    discounts[..., cut] = 0.0
    whole = discounted_cumsum(terms, discounts)
    before = discounted_cumsum(terms[..., : cut + 1], discounts[..., : cut + 1])
    np.testing.assert_allclose(whole[..., : cut + 1], before, atol=1e-12)
    if cut + 1 < terms.shape[-1]:
        after = discounted_cumsum(terms[..., cut + 1 :], discounts[..., cut + 1 :])
        np.testing.assert_allclose(whole[..., cut + 1 :], after, atol=1e-12)


# --- discounted_returns -----------------------------------------------------------------------


def test_discounted_returns_by_hand():
    # G = (1 + 0.9 * (0 + 0.9 * 2), 0 + 0.9 * 2, 2) = (2.62, 1.8, 2)
    np.testing.assert_allclose(discounted_returns([1.0, 0.0, 2.0], 0.9), [2.62, 1.8, 2.0])


def test_discounted_returns_with_gamma_zero_are_the_rewards():
    rewards = np.array([1.5, -2.0, 0.25])
    np.testing.assert_array_equal(discounted_returns(rewards, 0.0), rewards)


def test_discounted_returns_with_gamma_one_are_reverse_cumulative_sums():
    np.testing.assert_allclose(discounted_returns([1.0, -2.0, 0.5, 3.0], 1.0), [2.5, 1.5, 3.5, 3])


def test_a_single_final_reward_is_discounted_back():
    # An LLM-style episode: one reward at the end, so G_t = γ^(T-1-t).
    rewards = np.array([0.0, 0.0, 0.0, 0.0, 1.0])
    np.testing.assert_allclose(discounted_returns(rewards, 0.9), 0.9 ** np.arange(4, -1, -1))


@pytest.mark.equation("eq-return")
@given(pair=terms_and_discounts(), gamma=unit)
def test_discounted_returns_equal_explicit_sums(pair, gamma):
    rewards, _ = pair
    result = discounted_returns(rewards, gamma)
    assert result.shape == rewards.shape
    for index in np.ndindex(rewards.shape[:-1]):
        np.testing.assert_allclose(result[index], returns_loop(rewards[index], gamma), atol=1e-9)


@given(pair=terms_and_discounts(), gamma=unit, data=st.data())
def test_discounted_returns_along_any_axis_equal_explicit_sums(pair, gamma, data):
    # Time moved to a drawn axis (0 is a time-major (T, B) batch, as SB3 stores one).
    rewards, _ = pair
    axis = data.draw(st.integers(-rewards.ndim, rewards.ndim - 1))
    moved = np.ascontiguousarray(np.moveaxis(rewards, -1, axis))
    result = np.moveaxis(discounted_returns(moved, gamma, axis=axis), axis, -1)
    for index in np.ndindex(rewards.shape[:-1]):
        np.testing.assert_allclose(result[index], returns_loop(rewards[index], gamma), atol=1e-9)


@pytest.mark.parametrize("axis", [2, -3, 0.0])
def test_discounted_returns_refuse_an_axis_that_rewards_do_not_have(axis):
    message = f"axis must be an integer in [-2, 2) for arrays of shape (2, 3); got {axis!r}"
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        discounted_returns(np.ones((2, 3)), 0.9, axis=axis)


# --- packed_discounted_returns ----------------------------------------------------------------

# One stream, three episodes: A = steps 0-1 terminates at 1; B = step 2 is truncated by a time
# limit and bootstraps from next_values[2] = 4; C = steps 3-4 is cut by the end of the stream
# and bootstraps from next_values[4] = 10. The other next_values are never read.
STREAM_REWARDS = np.ones(5)
STREAM_NEXT_VALUES = np.array([50.0, 100.0, 4.0, 50.0, 10.0])
STREAM_TERMINATED = np.array([False, True, False, False, False])
STREAM_TRUNCATED = np.array([False, False, True, False, False])


def test_packed_returns_terminal_truncated_and_stream_end_by_hand():
    # γ = 0.5: G_1 = 1, G_0 = 1.5; G_2 = 1 + 0.5 * 4 = 3; G_4 = 1 + 0.5 * 10 = 6, G_3 = 4.
    returns = packed_discounted_returns(
        STREAM_REWARDS, STREAM_NEXT_VALUES, STREAM_TERMINATED, STREAM_TRUNCATED, 0.5
    )
    np.testing.assert_allclose(returns, [1.5, 1.0, 3.0, 4.0, 6.0])


def test_packed_returns_terminated_at_the_stream_end_do_not_bootstrap():
    returns = packed_discounted_returns([1.0, 1.0], [0.0, 10.0], [False, True], [False, False], 0.5)
    np.testing.assert_allclose(returns, [1.5, 1.0])


def test_packed_returns_with_zero_next_values_are_the_reward_to_go_within_episodes():
    returns = packed_discounted_returns(
        [1.0, 2.0, 3.0, 4.0], np.zeros(4), [False, True, False, False], [False] * 4, 1.0
    )
    np.testing.assert_allclose(returns, [3.0, 2.0, 7.0, 4.0])


@pytest.mark.equation("eq-returns-timeouts")
@given(batch=packed_batches(), gamma=unit)
def test_packed_returns_equal_the_per_episode_loop(batch, gamma):
    rewards, _, next_values, terminated, truncated = batch
    result = packed_discounted_returns(rewards, next_values, terminated, truncated, gamma)
    assert result.shape == rewards.shape
    expected = packed_returns_loop(rewards, next_values, terminated, truncated, gamma)
    np.testing.assert_allclose(result, expected, rtol=1e-9, atol=1e-9)


@given(batch=packed_batches(), gamma=unit)
def test_packed_returns_read_next_values_only_where_an_episode_is_cut(batch, gamma):
    rewards, _, next_values, terminated, truncated = batch
    cut = truncated.copy()
    cut[..., -1] |= ~terminated[..., -1]
    scrambled = np.where(cut, next_values, next_values + 123.0)
    np.testing.assert_array_equal(
        packed_discounted_returns(rewards, scrambled, terminated, truncated, gamma),
        packed_discounted_returns(rewards, next_values, terminated, truncated, gamma),
    )


@given(batch=packed_batches(), gamma=unit)
def test_packed_returns_fold_a_truncation_into_its_reward(batch, gamma):
    # A truncated step is a terminated one whose reward also carries γ V(final observation).
    rewards, _, next_values, terminated, truncated = batch
    folded = packed_discounted_returns(
        rewards + gamma * np.where(truncated, next_values, 0.0),
        next_values,
        terminated | truncated,
        np.zeros_like(truncated),
        gamma,
    )
    np.testing.assert_allclose(
        packed_discounted_returns(rewards, next_values, terminated, truncated, gamma),
        folded,
        rtol=1e-12,
        atol=1e-12,
    )
