"""rlfound.advantages: TD errors, k-step advantages, GAE, and GAE over packed streams.

References: the definitions as explicit loops (tests.oracles.td_loop, k_step_loop, gae_loop)
and, for packed streams, the per-episode loop tests.oracles.packed_gae_loop.
"""

from __future__ import annotations

import inspect
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from rlfound.advantages import (
    gae_explicit,
    gae_recursive,
    k_step_advantages,
    packed_gae,
    td_errors,
    whiten_advantages,
)
from rlfound.returns import discounted_returns, packed_discounted_returns
from tests.oracles import (
    episode_segments,
    fold_truncations,
    gae_loop,
    k_step_loop,
    packed_batches,
    packed_gae_loop,
    per_trajectory,
    td_loop,
)

finite = st.floats(min_value=-10.0, max_value=10.0, allow_nan=False, allow_infinity=False)
unit = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
GAE_FORMS = [gae_recursive, gae_explicit]


@st.composite
def trajectories(draw):
    """rewards (..., T) and values (..., T + 1) with a random batch shape."""
    batch = draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=1, max_side=3))
    horizon = draw(st.integers(1, 10))
    rewards = draw(hnp.arrays(np.float64, (*batch, horizon), elements=finite))
    values = draw(hnp.arrays(np.float64, (*batch, horizon + 1), elements=finite))
    return rewards, values


# A trajectory by hand, γ = λ = 0.5:
# δ = (1 + 0.5 * 1 - 0.5, 0 + 0.5 * 0 - 1, 2 + 0.5 * 0.3 - 0) = (1, -1, 2.15);
# A_2 = 2.15, A_1 = -1 + 0.25 * 2.15 = -0.4625, A_0 = 1 + 0.25 * (-0.4625) = 0.884375.
HAND_REWARDS = np.array([1.0, 0.0, 2.0])
HAND_VALUES = np.array([0.5, 1.0, 0.0, 0.3])


# --- td_errors ----------------------------------------------------------------------------------


def test_td_errors_by_hand():
    np.testing.assert_allclose(td_errors(HAND_REWARDS, HAND_VALUES, 0.5), [1.0, -1.0, 2.15])


@pytest.mark.equation("eq-td-error")
@given(trajectory=trajectories(), gamma=unit)
def test_td_errors_equal_the_definition(trajectory, gamma):
    rewards, values = trajectory
    np.testing.assert_allclose(
        td_errors(rewards, values, gamma),
        per_trajectory(td_loop, rewards, values, gamma),
        atol=1e-12,
    )


# --- k_step_advantages --------------------------------------------------------------------------


def test_k_step_advantages_by_hand():
    # k = 2: A_0 = 1 + 0.5 * 0 + 0.25 * V_2 - V_0 = 0.5, A_1 = 0 + 0.5 * 2 + 0.25 * V_3 - V_1
    # = 0.075, and A_2 = 2 + 0.5 * V_3 - V_2 = 2.15 has only one reward left.
    np.testing.assert_allclose(
        k_step_advantages(HAND_REWARDS, HAND_VALUES, 0.5, 2), [0.5, 0.075, 2.15], rtol=1e-14
    )


@pytest.mark.equation("eq-k-step")
@given(trajectory=trajectories(), gamma=unit, k=st.integers(1, 12))
def test_k_step_advantages_equal_the_definition(trajectory, gamma, k):
    rewards, values = trajectory
    np.testing.assert_allclose(
        k_step_advantages(rewards, values, gamma, k),
        per_trajectory(k_step_loop, rewards, values, gamma, k),
        atol=1e-9,
    )


@pytest.mark.equation("eq-k-step-telescoping")
@given(trajectory=trajectories(), gamma=unit, k=st.integers(1, 12))
def test_k_step_advantages_are_discounted_sums_of_k_td_errors(trajectory, gamma, k):
    # A_t^(k) = Σ_{l<n} γ^l δ_{t+l}, n = min(k, T - t) (eq-k-step-telescoping).
    rewards, values = trajectory

    def telescoped(r, v, g, k):
        deltas, horizon = td_loop(r, v, g), len(r)
        return [
            sum(g**step * deltas[t + step] for step in range(min(k, horizon - t)))
            for t in range(horizon)
        ]

    np.testing.assert_allclose(
        k_step_advantages(rewards, values, gamma, k),
        per_trajectory(telescoped, rewards, values, gamma, k),
        atol=1e-9,
    )


# --- gae_recursive and gae_explicit -------------------------------------------------------------


@pytest.mark.parametrize("gae", GAE_FORMS)
def test_gae_by_hand(gae):
    np.testing.assert_allclose(
        gae(HAND_REWARDS, HAND_VALUES, 0.5, 0.5), [0.884375, -0.4625, 2.15], rtol=1e-14
    )


@pytest.mark.equation("eq-gae", "eq-gae-recursion")
@pytest.mark.parametrize("gae", GAE_FORMS)
@given(trajectory=trajectories(), gamma=unit, lam=unit)
def test_gae_equals_the_definition(gae, trajectory, gamma, lam):
    rewards, values = trajectory
    np.testing.assert_allclose(
        gae(rewards, values, gamma, lam),
        per_trajectory(gae_loop, rewards, values, gamma, lam),
        atol=1e-9,
    )


@pytest.mark.parametrize("gae", GAE_FORMS)
@given(trajectory=trajectories(), gamma=unit)
def test_gae_with_lambda_zero_is_the_td_errors(gae, trajectory, gamma):
    rewards, values = trajectory
    np.testing.assert_allclose(
        gae(rewards, values, gamma, 0.0), per_trajectory(td_loop, rewards, values, gamma)
    )


@pytest.mark.parametrize("gae", GAE_FORMS)
@given(trajectory=trajectories(), gamma=unit)
def test_gae_with_lambda_one_plus_values_is_the_bootstrapped_return(gae, trajectory, gamma):
    # A_t + V(s_t) = Σ_l γ^l r_{t+l} + γ^(T - t) V(s_T).
    rewards, values = trajectory
    horizon = rewards.shape[-1]
    to_end = gamma ** (horizon - np.arange(horizon))
    expected = discounted_returns(rewards, gamma) + to_end * values[..., -1:]
    np.testing.assert_allclose(
        gae(rewards, values, gamma, 1.0) + values[..., :-1], expected, atol=1e-9
    )


@given(trajectory=trajectories(), gamma=unit)
def test_k_step_advantages_with_k_at_least_t_are_gae_with_lambda_one(trajectory, gamma):
    rewards, values = trajectory
    horizon = rewards.shape[-1]
    np.testing.assert_allclose(
        k_step_advantages(rewards, values, gamma, horizon),
        gae_recursive(rewards, values, gamma, 1.0),
        atol=1e-9,
    )


# --- the time axis of the single-trajectory functions ------------------------------------------

# Each function with its one-trajectory reference and the arguments after rewards and values.
ALONG_AXIS = [
    (td_errors, td_loop, (0.9,)),
    (k_step_advantages, k_step_loop, (0.9, 3)),
    (gae_recursive, gae_loop, (0.9, 0.8)),
    (gae_explicit, gae_loop, (0.9, 0.8)),
]


@pytest.mark.parametrize(("function", "reference", "arguments"), ALONG_AXIS)
@given(trajectory=trajectories(), data=st.data())
def test_single_trajectory_functions_along_any_axis_equal_the_definition(
    function, reference, arguments, trajectory, data
):
    # Time moved to a drawn axis (0 is a time-major (T, B) batch, as SB3 stores one), the
    # result compared, moved back, with the definition applied to each time-last row.
    rewards, values = trajectory
    axis = data.draw(st.integers(-rewards.ndim, rewards.ndim - 1))
    moved = [np.ascontiguousarray(np.moveaxis(array, -1, axis)) for array in (rewards, values)]
    result = function(*moved, *arguments, axis=axis)
    assert result.shape == moved[0].shape
    np.testing.assert_allclose(
        np.moveaxis(result, axis, -1),
        per_trajectory(reference, rewards, values, *arguments),
        atol=1e-9,
    )


@pytest.mark.parametrize(("function", "_", "arguments"), ALONG_AXIS)
@pytest.mark.parametrize(
    ("values_shape", "message"),
    [
        (
            (3, 3),
            "values must have one more entry than rewards along axis 0 (T+1 = 4); got shape (3, 3)",
        ),
        (
            (4, 2),
            "values must have the shape of rewards, (3, 3), on every axis but axis 0; "
            "got shape (4, 2)",
        ),
        (
            (4,),
            "values must have the shape of rewards, (3, 3), on every axis but axis 0; "
            "got shape (4,)",
        ),
    ],
)
def test_values_along_a_leading_time_axis_need_one_more_entry_there(
    function, _, arguments, values_shape, message
):
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        function(np.ones((3, 3)), np.ones(values_shape), *arguments, axis=0)


@pytest.mark.parametrize(("function", "_", "arguments"), ALONG_AXIS)
@pytest.mark.parametrize("axis", [2, -3, 1.0, True])
def test_a_time_axis_that_is_not_an_axis_of_rewards_is_refused(function, _, arguments, axis):
    message = f"axis must be an integer in [-2, 2) for arrays of shape (3, 3); got {axis!r}"
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        function(np.ones((3, 3)), np.ones((4, 3)), *arguments, axis=axis)


def test_values_with_time_last_keep_the_messages_of_the_last_axis():
    message = "values must have one more entry than rewards along the last axis (T+1 = 4); "
    with pytest.raises(ValueError, match=f"^{re.escape(message)}"):
        gae_recursive(np.ones((2, 3)), np.ones((2, 3)), 0.9, 0.8, axis=1)


# --- packed_gae ---------------------------------------------------------------------------------


def test_packed_gae_and_packed_returns_take_their_shared_arguments_in_the_same_order():
    gae_names = list(inspect.signature(packed_gae).parameters)
    return_names = list(inspect.signature(packed_discounted_returns).parameters)
    assert [name for name in gae_names if name in return_names] == return_names


def test_packed_gae_terminal_truncated_and_stream_end_by_hand():
    # Episode A = steps 0-1 terminates at 1; B = step 2 is truncated and bootstraps from
    # next_values[2] = 4; C = steps 3-4 is cut by the stream's end and bootstraps from 10.
    # γ = 0.5, λ = 1, V = 0 everywhere, so A_t is the bootstrapped return within the episode;
    # the terminated step's next_values (100) is never read.
    rewards = np.ones(5)
    next_values = np.array([0.0, 100.0, 4.0, 0.0, 10.0])
    terminated = np.array([False, True, False, False, False])
    truncated = np.array([False, False, True, False, False])
    advantages = packed_gae(rewards, np.zeros(5), next_values, terminated, truncated, 0.5, 1.0)
    np.testing.assert_allclose(advantages, [1.5, 1.0, 3.0, 4.0, 6.0])


@pytest.mark.equation("eq-gae-timeouts")
@given(batch=packed_batches(), gamma=unit, lam=unit)
def test_packed_gae_equals_the_per_episode_loop(batch, gamma, lam):
    result = packed_gae(*batch, gamma, lam)
    assert result.shape == batch[0].shape
    np.testing.assert_allclose(result, packed_gae_loop(*batch, gamma, lam), rtol=1e-9, atol=1e-9)


@given(batch=packed_batches(), gamma=unit, lam=unit)
def test_packed_gae_on_each_episode_equals_gae_recursive(batch, gamma, lam):
    rewards, values, next_values, terminated, truncated = batch
    result = packed_gae(*batch, gamma, lam)
    for index in np.ndindex(rewards.shape[:-1]):
        for start, stop in episode_segments(terminated[index] | truncated[index]):
            bootstrap = 0.0 if terminated[index][stop - 1] else next_values[index][stop - 1]
            episode_values = np.append(values[index][start:stop], bootstrap)
            np.testing.assert_allclose(
                result[index][start:stop],
                gae_recursive(rewards[index][start:stop], episode_values, gamma, lam),
                atol=1e-9,
            )


@given(batch=packed_batches(), gamma=unit)
def test_packed_gae_with_lambda_one_plus_values_is_the_packed_return(batch, gamma):
    rewards, values, next_values, terminated, truncated = batch
    advantages = packed_gae(*batch, gamma, 1.0)
    returns = packed_discounted_returns(rewards, next_values, terminated, truncated, gamma)
    np.testing.assert_allclose(advantages + values, returns, rtol=1e-9, atol=1e-9)


@given(batch=packed_batches(), gamma=unit, lam=unit)
def test_packed_gae_ignores_next_values_at_terminated_steps(batch, gamma, lam):
    rewards, values, next_values, terminated, truncated = batch
    scrambled = np.where(terminated, next_values + 123.0, next_values)
    np.testing.assert_array_equal(
        packed_gae(rewards, values, scrambled, terminated, truncated, gamma, lam),
        packed_gae(*batch, gamma, lam),
    )


@given(batch=packed_batches(), gamma=unit, lam=unit)
def test_packed_gae_folds_a_truncation_into_its_reward(batch, gamma, lam):
    # A truncated step is a terminated one whose reward also carries γ V(final observation).
    folded = packed_gae(*fold_truncations(*batch, gamma), gamma, lam)
    np.testing.assert_allclose(packed_gae(*batch, gamma, lam), folded, rtol=1e-12, atol=1e-12)


def test_marking_a_timeout_as_terminal_drops_its_discounted_bootstrap():
    # One episode truncated at step 2 with V(final observation) = 7: calling it terminal
    # removes γ (γλ)^(2 - t) * 7 from every A_t of that episode.
    gamma, lam = 0.9, 0.8
    rewards, values = np.array([1.0, 0.0, 2.0]), np.array([0.5, 0.4, 0.3])
    next_values = np.array([0.4, 0.3, 7.0])
    no = np.zeros(3, dtype=bool)
    timeout = np.array([False, False, True])
    correct = packed_gae(rewards, values, next_values, no, timeout, gamma, lam)
    wrong = packed_gae(rewards, values, next_values, timeout, no, gamma, lam)
    np.testing.assert_allclose(
        correct - wrong, [gamma * (gamma * lam) ** k * 7.0 for k in (2, 1, 0)], rtol=1e-12
    )


# --- batch whitening (whiten_advantages) ----------------------------------------------------

WHITEN_ADVANTAGES = np.array([[0.5, -1.0, 2.0, 7.0], [3.0, 0.25, -9.0, 4.0]])
WHITEN_MASK = np.array([[1, 1, 1, 0], [1, 1, 0, 0]], dtype=bool)


def _valid_statistics(ddof):
    """Mean and variance of the five valid entries, summed by hand in a loop."""
    valid = [
        float(WHITEN_ADVANTAGES[i, j]) for i in range(2) for j in range(4) if WHITEN_MASK[i, j]
    ]
    mean = sum(valid) / len(valid)
    variance = sum((a - mean) ** 2 for a in valid) / (len(valid) - ddof)
    return mean, variance


@pytest.mark.parametrize(
    ("ddof", "eps", "eps_form", "spread"),
    [
        # verl masked_whiten: Bessel's correction, rsqrt(var + 1e-8)
        (1, 1e-8, "variance", lambda var: np.sqrt(var + 1e-8)),
        # OpenRLHF: ddof 0, var.clamp(min=1e-8).rsqrt()
        (0, 1e-8, "floor", lambda var: np.sqrt(max(var, 1e-8))),
        # Stable-Baselines3 and CleanRL: std (ddof 1) + 1e-8
        (1, 1e-8, "std", lambda var: np.sqrt(var) + 1e-8),
    ],
)
def test_whiten_advantages_equals_each_trainers_formula(ddof, eps, eps_form, spread):
    mean, variance = _valid_statistics(ddof)
    expected = np.where(WHITEN_MASK, (WHITEN_ADVANTAGES - mean) / spread(variance), 0.0)
    got = whiten_advantages(WHITEN_ADVANTAGES, WHITEN_MASK, ddof=ddof, eps=eps, eps_form=eps_form)
    np.testing.assert_allclose(got, expected, rtol=1e-13, atol=0.0)


def test_whiten_advantages_statistics_are_over_the_batch_not_the_rows():
    got = whiten_advantages(WHITEN_ADVANTAGES, WHITEN_MASK, eps=0.0)
    valid = got[WHITEN_MASK]
    assert abs(valid.mean()) < 1e-15
    np.testing.assert_allclose(valid.var(), 1.0, rtol=1e-14)
    assert got[0].sum() != 0.0  # a single row is not centered on its own


def test_whiten_advantages_reads_nothing_outside_the_mask():
    poisoned = np.where(WHITEN_MASK, WHITEN_ADVANTAGES, np.nan)
    np.testing.assert_array_equal(
        whiten_advantages(poisoned, WHITEN_MASK),
        whiten_advantages(WHITEN_ADVANTAGES, WHITEN_MASK),
    )
    assert (whiten_advantages(poisoned, WHITEN_MASK)[~WHITEN_MASK] == 0.0).all()


def test_whiten_advantages_without_shift_adds_the_mean_back():
    mean, variance = _valid_statistics(0)
    got = whiten_advantages(WHITEN_ADVANTAGES, WHITEN_MASK, eps=0.0, shift_mean=False)
    expected = (WHITEN_ADVANTAGES - mean) / np.sqrt(variance) + mean
    np.testing.assert_allclose(got[WHITEN_MASK], expected[WHITEN_MASK], rtol=1e-13)


def test_whiten_advantages_floor_and_sum_differ_only_for_a_small_spread():
    tiny = np.array([1.0, 1.0 + 1e-6, 1.0 - 1e-6])
    floored = whiten_advantages(tiny, eps=1e-8, eps_form="floor")
    added = whiten_advantages(tiny, eps=1e-8, eps_form="variance")
    # var = 2e-12 / 3 is below the floor: s = 1e-4 exactly, and sqrt(var + 1e-8) is larger.
    np.testing.assert_allclose(floored, (tiny - 1.0) / 1e-4, rtol=1e-9)
    assert added[0] == 0.0 and np.all(np.abs(added[1:]) < np.abs(floored[1:]))
