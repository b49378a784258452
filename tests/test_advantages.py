"""TD errors, k-step advantages and GAE (eq-td-error, eq-k-step, eq-gae, eq-gae-recursion)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from rlfound.advantages import gae_explicit, gae_recursive, k_step_advantages, td_errors
from rlfound.returns import discounted_returns

GRID = [0.0, 0.5, 0.9, 1.0]
SHAPES = [(1,), (2,), (7,), (1, 1), (3, 1), (2, 6), (2, 3, 4)]  # (..., T); T = 1 included

finite = st.floats(min_value=-10.0, max_value=10.0, allow_nan=False, allow_infinity=False)
unit = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


def loop_td(rewards, values, gamma):
    """delta_t = r_t + gamma V_{t+1} - V_t, one trajectory, plain Python floats."""
    return [rewards[t] + gamma * values[t + 1] - values[t] for t in range(len(rewards))]


def loop_gae(rewards, values, gamma, lam):
    """A_t = sum_{l=0}^{T-t-1} (gamma lam)^l delta_{t+l}: the definition as a double loop."""
    rewards = [float(r) for r in rewards]
    values = [float(v) for v in values]
    horizon = len(rewards)
    advantages = []
    for t in range(horizon):
        total = 0.0
        for step in range(horizon - t):
            delta = rewards[t + step] + gamma * values[t + step + 1] - values[t + step]
            total += (gamma * lam) ** step * delta  # Python: 0.0 ** 0 == 1.0
        advantages.append(total)
    return np.array(advantages)


def loop_k_step(rewards, values, gamma, k):
    """A^(k)_t = sum_{l<n} gamma^l r_{t+l} + gamma^n V_{t+n} - V_t with n = min(k, T - t)."""
    horizon = len(rewards)
    out = []
    for t in range(horizon):
        n = min(k, horizon - t)
        out.append(
            sum(gamma**step * float(rewards[t + step]) for step in range(n))
            + gamma**n * float(values[t + n])
            - float(values[t])
        )
    return np.array(out)


def per_trajectory(reference, rewards, values, *args):
    """Apply a one-trajectory reference to every leading index of a batch."""
    out = np.zeros(rewards.shape)
    for index in np.ndindex(rewards.shape[:-1]):
        out[index] = reference(rewards[index], values[index], *args)
    return out


def random_inputs(shape, seed):
    rng = np.random.default_rng(seed)
    rewards = rng.normal(size=shape)
    values = rng.normal(size=(*shape[:-1], shape[-1] + 1))
    return rewards, values


@st.composite
def trajectories(draw):
    batch = draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=1, max_side=3))
    horizon = draw(st.integers(1, 10))
    rewards = draw(hnp.arrays(np.float64, (*batch, horizon), elements=finite))
    values = draw(hnp.arrays(np.float64, (*batch, horizon + 1), elements=finite))
    return rewards, values


# --- hand-computed example ------------------------------------------------------------------

HAND_REWARDS = np.array([1.0, 0.0, 2.0])
HAND_VALUES = np.array([0.5, 1.0, 0.0, 0.3])
# gamma = lam = 0.5: delta = (1 + 0.5 - 0.5, 0 + 0 - 1, 2 + 0.15 - 0) = (1, -1, 2.15)
HAND_DELTAS = np.array([1.0, -1.0, 2.15])
# A_2 = 2.15, A_1 = -1 + 0.25 * 2.15 = -0.4625, A_0 = 1 + 0.25 * (-0.4625) = 0.884375
HAND_GAE = np.array([0.884375, -0.4625, 2.15])


def test_td_errors_by_hand():
    np.testing.assert_allclose(td_errors(HAND_REWARDS, HAND_VALUES, 0.5), HAND_DELTAS, rtol=1e-14)


@pytest.mark.parametrize("gae", [gae_recursive, gae_explicit])
def test_gae_by_hand(gae):
    np.testing.assert_allclose(gae(HAND_REWARDS, HAND_VALUES, 0.5, 0.5), HAND_GAE, rtol=1e-14)


def test_k_step_by_hand():
    # k = 2, gamma = 0.5: A_0 = 1 + 0.5 * 0 + 0.25 * V_2 - V_0 = 0.5,
    # A_1 = 0 + 0.5 * 2 + 0.25 * V_3 - V_1 = 0.075, A_2 = 2 + 0.5 * V_3 - V_2 = 2.15 (n = 1).
    np.testing.assert_allclose(
        k_step_advantages(HAND_REWARDS, HAND_VALUES, 0.5, 2), [0.5, 0.075, 2.15], rtol=1e-14
    )


# --- TD errors ------------------------------------------------------------------------------


@given(trajectories(), unit)
def test_td_errors_match_formula(pair, gamma):
    rewards, values = pair
    deltas = td_errors(rewards, values, gamma)
    assert deltas.shape == rewards.shape
    np.testing.assert_allclose(
        deltas, per_trajectory(loop_td, rewards, values, gamma), rtol=1e-12, atol=1e-12
    )


# --- GAE: recursion == definition == independent double loop ------------------------------


@pytest.mark.parametrize("lam", GRID)
@pytest.mark.parametrize("gamma", GRID)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_gae_forms_agree_on_grid(shape, gamma, lam):
    rewards, values = random_inputs(shape, seed=len(shape) * 100 + shape[-1])
    expected = per_trajectory(loop_gae, rewards, values, gamma, lam)
    recursive = gae_recursive(rewards, values, gamma, lam)
    explicit = gae_explicit(rewards, values, gamma, lam)
    assert recursive.shape == explicit.shape == rewards.shape
    np.testing.assert_allclose(recursive, expected, rtol=1e-11, atol=1e-11)
    np.testing.assert_allclose(explicit, expected, rtol=1e-11, atol=1e-11)


@given(trajectories(), unit, unit)
def test_gae_forms_agree_property(pair, gamma, lam):
    rewards, values = pair
    expected = per_trajectory(loop_gae, rewards, values, gamma, lam)
    np.testing.assert_allclose(gae_recursive(rewards, values, gamma, lam), expected, atol=1e-9)
    np.testing.assert_allclose(gae_explicit(rewards, values, gamma, lam), expected, atol=1e-9)


@given(trajectories(), unit, unit)
def test_gae_satisfies_backward_recursion(pair, gamma, lam):
    # A_t = delta_t + gamma lam A_{t+1} and A_{T-1} = delta_{T-1}, checked on gae_explicit.
    rewards, values = pair
    advantages = gae_explicit(rewards, values, gamma, lam)
    deltas = per_trajectory(loop_td, rewards, values, gamma)
    np.testing.assert_allclose(
        advantages[..., :-1], deltas[..., :-1] + gamma * lam * advantages[..., 1:], atol=1e-9
    )
    np.testing.assert_allclose(advantages[..., -1], deltas[..., -1], atol=1e-12)


@pytest.mark.parametrize("gamma", GRID)
@pytest.mark.parametrize("gae", [gae_recursive, gae_explicit])
def test_lambda_zero_is_td_errors(gae, gamma):
    rewards, values = random_inputs((3, 6), seed=1)
    expected = per_trajectory(loop_td, rewards, values, gamma)
    np.testing.assert_allclose(gae(rewards, values, gamma, 0.0), expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(
        gae(rewards, values, gamma, 0.0), td_errors(rewards, values, gamma), rtol=1e-12, atol=1e-12
    )


@pytest.mark.parametrize("gamma", GRID)
@pytest.mark.parametrize("gae", [gae_recursive, gae_explicit])
def test_lambda_one_is_bootstrapped_monte_carlo_advantage(gae, gamma):
    rewards, values = random_inputs((2, 8), seed=2)
    horizon = rewards.shape[-1]
    to_end = gamma ** (horizon - np.arange(horizon))  # gamma^(T - t)
    expected = discounted_returns(rewards, gamma) + to_end * values[..., -1:] - values[..., :-1]
    np.testing.assert_allclose(gae(rewards, values, gamma, 1.0), expected, rtol=1e-11, atol=1e-11)


@pytest.mark.parametrize("gamma", GRID)
@pytest.mark.parametrize("gae", [gae_recursive, gae_explicit])
def test_lambda_one_after_termination_is_return_minus_value(gae, gamma):
    rewards, values = random_inputs((4, 5), seed=3)
    values[..., -1] = 0.0  # a true termination
    expected = discounted_returns(rewards, gamma) - values[..., :-1]
    np.testing.assert_allclose(gae(rewards, values, gamma, 1.0), expected, rtol=1e-11, atol=1e-11)


@pytest.mark.parametrize("gae", [gae_recursive, gae_explicit])
def test_gamma_zero_is_reward_minus_value(gae):
    rewards, values = random_inputs((6,), seed=4)
    np.testing.assert_allclose(gae(rewards, values, 0.0, 0.7), rewards - values[:-1], atol=1e-14)


@pytest.mark.parametrize("gae", [gae_recursive, gae_explicit])
def test_perfect_values_give_zero_advantages(gae):
    # If V is the exact discounted return (bootstrapped with V_T), every delta is zero.
    gamma = 0.9
    rewards = np.array([0.0, 1.0, -0.5, 2.0])
    values = np.append(discounted_returns(rewards, gamma), 0.0)
    np.testing.assert_allclose(gae(rewards, values, gamma, 0.8), 0.0, atol=1e-13)


@pytest.mark.parametrize("gae", [gae_recursive, gae_explicit, td_errors])
def test_inputs_are_not_modified(gae):
    rewards, values = random_inputs((2, 5), seed=5)
    rewards_copy, values_copy = rewards.copy(), values.copy()
    args = (rewards, values, 0.9) if gae is td_errors else (rewards, values, 0.9, 0.5)
    gae(*args)
    np.testing.assert_array_equal(rewards, rewards_copy)
    np.testing.assert_array_equal(values, values_copy)


def test_lists_are_accepted():
    np.testing.assert_allclose(
        gae_recursive([1.0, 0.0, 2.0], [0.5, 1.0, 0.0, 0.3], 0.5, 0.5), HAND_GAE, rtol=1e-14
    )


# --- k-step advantages and the telescoping identity ----------------------------------------


@pytest.mark.parametrize("k", [1, 2, 3, 5, 20])
@pytest.mark.parametrize("gamma", GRID)
def test_k_step_matches_definition(gamma, k):
    rewards, values = random_inputs((2, 3, 6), seed=k)
    expected = per_trajectory(loop_k_step, rewards, values, gamma, k)
    np.testing.assert_allclose(
        k_step_advantages(rewards, values, gamma, k), expected, rtol=1e-11, atol=1e-11
    )


@given(pair=trajectories(), gamma=unit, k=st.integers(1, 12))
def test_k_step_telescoping_identity(pair, gamma, k):
    # A^(k)_t = sum_{l < n} gamma^l delta_{t+l}, n = min(k, T - t) (eq-k-step-telescoping).
    rewards, values = pair

    def telescoped(r, v, g, k):
        deltas = loop_td(r, v, g)
        horizon = len(r)
        return [
            sum(g**step * deltas[t + step] for step in range(min(k, horizon - t)))
            for t in range(horizon)
        ]

    np.testing.assert_allclose(
        k_step_advantages(rewards, values, gamma, k),
        per_trajectory(telescoped, rewards, values, gamma, k),
        atol=1e-9,
    )


def test_one_step_advantage_is_td_error():
    rewards, values = random_inputs((3, 7), seed=6)
    np.testing.assert_allclose(
        k_step_advantages(rewards, values, 0.95, 1),
        per_trajectory(loop_td, rewards, values, 0.95),
        rtol=1e-12,
        atol=1e-12,
    )


@pytest.mark.parametrize("gamma", GRID)
def test_k_at_least_horizon_is_gae_with_lambda_one(gamma):
    rewards, values = random_inputs((2, 5), seed=7)
    expected = per_trajectory(loop_gae, rewards, values, gamma, 1.0)
    for k in (5, 6, 100):
        np.testing.assert_allclose(
            k_step_advantages(rewards, values, gamma, k), expected, rtol=1e-11, atol=1e-11
        )
