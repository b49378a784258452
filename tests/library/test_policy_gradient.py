"""rlfound.policy_gradient: trajectory log-probabilities and scores, the exact expected return,
and REINFORCE from episodes.

References: log-probabilities by explicit loops (tests.oracles.log_probability_by_hand) and
their central differences, the chapter-3 conversation solved by backward induction
(tests.oracles.conversation_return), recursive enumeration of episodes
(tests.oracles.episodes_by_hand), and, for unbiasedness, the exact expectation of each
estimator over every enumerated episode against central differences of expected_return.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rlfound.episodes import enumerate_episodes, sample_episodes
from rlfound.policy_gradient import (
    expected_return,
    reinforce_trajectory_gradient,
    trajectory_log_probability,
    trajectory_score,
)
from tests.oracles import (
    central_differences,
    conversation_logits,
    conversation_mdp,
    conversation_return,
    episodes_by_hand,
    forward_mdp,
    log_probability_by_hand,
    random_mdp,
    softmax_rows,
)

seeds = st.integers(0, 2**32 - 1)

# By hand: state 1 is terminal and its rows are all zero. π(· | 0) = (1/4, 3/4).
HAND_LOGITS = np.array([[0.0, np.log(3.0)], [0.0, 0.0]])
HAND_TRANSITION = np.zeros((2, 2, 2))
HAND_TRANSITION[0] = [[0.25, 0.75], [0.5, 0.5]]
HAND_TERMINAL = np.array([False, True])


def sampled_episodes(seed, horizon=5, count=10):
    """Episodes of a random MDP with a terminal state, and its logits: (logits, transition,
    reward, initial, terminal, episodes)."""
    rng = np.random.default_rng(seed)
    transition, reward, _, terminal, initial = random_mdp(rng, 3, 2)
    logits = rng.normal(size=(3, 2))
    episodes = sample_episodes(
        transition, reward, softmax_rows(logits), initial, horizon, count, terminal, rng=rng
    )
    return logits, transition, reward, initial, terminal, episodes


def expected_estimate(logits, episodes, gamma, **options):
    """Σ_τ p(τ) ĝ(τ) over enumerated episodes: the exact expectation of the estimator."""
    estimates = [
        reinforce_trajectory_gradient(logits, s, a, r, gamma, **options)
        for s, a, r in zip(episodes.states, episodes.actions, episodes.rewards, strict=True)
    ]
    return np.tensordot(episodes.weights, estimates, axes=1)


# --- trajectory_log_probability -----------------------------------------------------------------


def test_trajectory_log_probability_by_hand():
    # π(1|0) P(0|0,1) π(0|0) P(1|0,0) = 3/4 * 1/2 * 1/4 * 3/4; the terminal rows are never used.
    log_p = trajectory_log_probability(
        HAND_LOGITS, HAND_TRANSITION, [1.0, 0.0], [0, 0, 1], [1, 0], HAND_TERMINAL
    )
    assert log_p == pytest.approx(math.log(0.75 * 0.5 * 0.25 * 0.75), rel=1e-14)


@given(seed=seeds)
def test_trajectory_log_probability_of_sampled_padded_episodes_equals_the_loop(seed):
    logits, transition, _, initial, terminal, episodes = sampled_episodes(seed)
    for states, actions in zip(episodes.states, episodes.actions, strict=True):
        log_p = trajectory_log_probability(logits, transition, initial, states, actions, terminal)
        expected = log_probability_by_hand(logits, transition, initial, states, actions)
        assert log_p == pytest.approx(expected, rel=1e-12, abs=1e-12)


def test_an_impossible_episode_has_log_probability_minus_infinity():
    transition, _, _, _, initial = forward_mdp(np.random.default_rng(2))
    # Transitions never move to a lower state, so 1 -> 0 is impossible.
    assert trajectory_log_probability(np.zeros((4, 2)), transition, initial, [1, 0], [0]) == (
        -math.inf
    )


# --- trajectory_score ---------------------------------------------------------------------------


def test_trajectory_score_by_hand():
    # Two visits to state 0: (e_1 - π) + (e_0 - π) = (1 - 2/4, 1 - 2 * 3/4); s_T is not used.
    np.testing.assert_allclose(
        trajectory_score(HAND_LOGITS, [0, 0, 1], [1, 0]), [[0.5, -0.5], [0.0, 0.0]], rtol=1e-14
    )


@pytest.mark.equation("eq-trajectory-score")
@given(seed=seeds)
def test_trajectory_score_is_the_gradient_of_the_log_probability(seed):
    logits, transition, _, initial, _, episodes = sampled_episodes(seed, count=2)
    for states, actions in zip(episodes.states, episodes.actions, strict=True):
        numerical = central_differences(
            lambda theta, s=states, a=actions: log_probability_by_hand(
                theta, transition, initial, s, a
            ),
            logits,
        )
        np.testing.assert_allclose(trajectory_score(logits, states, actions), numerical, atol=1e-7)


def test_trajectory_score_skips_the_padding():
    logits = np.random.default_rng(4).normal(size=(3, 2))
    np.testing.assert_array_equal(
        trajectory_score(logits, [0, 1, 2, 2, 2], [1, 0, -1, -1]),
        trajectory_score(logits, [0, 1, 2], [1, 0]),
    )


# --- expected_return ----------------------------------------------------------------------------


def test_expected_return_by_hand():
    # One step from state 0: action 1 pays 1 and ends, action 0 moves to state 0 again and pays
    # 0; with γ = 0.5 and π(1|0) = 3/4, J = 3/4 + 1/4 * 0.5 * J, so J = 0.75 / 0.875 = 6/7.
    transition = HAND_TRANSITION.copy()
    transition[0] = [[1.0, 0.0], [0.0, 1.0]]
    reward = np.zeros((2, 2, 2))
    reward[0, 1, 1] = 1.0
    value = expected_return(HAND_LOGITS, transition, reward, [1.0, 0.0], 0.5, HAND_TERMINAL)
    assert value == pytest.approx(6.0 / 7.0, rel=1e-14)


@pytest.mark.parametrize("gamma", [1.0, 0.9])
@pytest.mark.parametrize("num_turns", [1, 3])
def test_expected_return_of_the_conversation_equals_backward_induction(num_turns, gamma):
    transition, reward, terminal, initial = conversation_mdp(num_turns)
    logits = conversation_logits(num_turns)
    value = expected_return(logits, transition, reward, initial, gamma, terminal)
    assert value == pytest.approx(conversation_return(logits, num_turns, gamma), rel=1e-12)


@given(seed=seeds, gamma=st.floats(0.0, 1.0))
def test_expected_return_equals_the_enumerated_discounted_return(seed, gamma):
    rng = np.random.default_rng(seed)
    transition, reward, _, terminal, initial = forward_mdp(rng)
    logits = rng.normal(size=(4, 2))
    listed = episodes_by_hand(transition, reward, softmax_rows(logits), initial, 3, terminal)
    exact = sum(p * sum(gamma**t * r for t, r in enumerate(rewards)) for p, _, _, rewards in listed)
    value = expected_return(logits, transition, reward, initial, gamma, terminal)
    assert value == pytest.approx(exact, rel=1e-12, abs=1e-12)


# --- reinforce_trajectory_gradient --------------------------------------------------------------


def test_reinforce_trajectory_gradient_by_hand():
    # One state, actions 0 then 1, rewards 1 then 2, γ = 0.5, uniform π. Scores: (1/2, -1/2)
    # and (-1/2, 1/2). Total return G_0 = 2 weights both; the reward to go weights them by
    # γ^0 G_0 = 2 and γ^1 G_1 = 1; a baseline b = 1 subtracts γ^t b from each weight.
    first, second = np.array([[0.5, -0.5]]), np.array([[-0.5, 0.5]])
    args = (np.zeros((1, 2)), [0, 0, 0], [0, 1], [1.0, 2.0], 0.5)
    np.testing.assert_allclose(
        reinforce_trajectory_gradient(*args, reward_to_go=False), 2.0 * (first + second)
    )
    np.testing.assert_allclose(reinforce_trajectory_gradient(*args), 2.0 * first + 1.0 * second)
    np.testing.assert_allclose(
        reinforce_trajectory_gradient(*args, baseline=[1.0]), 1.0 * first + 0.5 * second
    )


def test_reinforce_trajectory_gradient_skips_the_padding():
    logits = np.random.default_rng(5).normal(size=(3, 2))
    np.testing.assert_array_equal(
        reinforce_trajectory_gradient(logits, [0, 1, 2, 2], [1, 0, -1], [1.0, 2.0, 0.0], 0.9),
        reinforce_trajectory_gradient(logits, [0, 1, 2], [1, 0], [1.0, 2.0], 0.9),
    )


@pytest.mark.equation(
    "eq-pg-theorem",
    "eq-pg-trajectory",
    "eq-reinforce-total",
    "eq-reinforce-rtg",
    "sol-pg-full-return",
)
@pytest.mark.parametrize("with_baseline", [False, True], ids=["no-baseline", "baseline"])
@pytest.mark.parametrize("reward_to_go", [False, True], ids=["total-return", "reward-to-go"])
@pytest.mark.parametrize("gamma", [1.0, 0.8])
def test_reinforce_is_exactly_unbiased_for_the_gradient_of_expected_return(
    gamma, reward_to_go, with_baseline
):
    rng = np.random.default_rng(7)
    transition, reward, _, terminal, initial = forward_mdp(rng)
    logits = rng.normal(size=(4, 2))
    baseline = rng.normal(size=4) * 3 if with_baseline else None
    gradient = central_differences(
        lambda theta: expected_return(theta, transition, reward, initial, gamma, terminal), logits
    )
    episodes = enumerate_episodes(transition, reward, softmax_rows(logits), initial, 3, terminal)
    expectation = expected_estimate(
        logits, episodes, gamma, reward_to_go=reward_to_go, baseline=baseline
    )
    np.testing.assert_allclose(expectation, gradient, atol=1e-8)


@pytest.mark.parametrize("reward_to_go", [False, True], ids=["total-return", "reward-to-go"])
def test_reinforce_is_exactly_unbiased_for_a_horizon_cut_objective(reward_to_go):
    # No terminal state: episodes end only at the horizon H, and the estimator targets
    # J_H(θ) = E[Σ_{t<H} γ^t r_t], computed here by enumeration by hand.
    rng = np.random.default_rng(8)
    transition, reward, _, _, initial = random_mdp(rng, 2, 2, num_terminal=0)
    logits, gamma, horizon = rng.normal(size=(2, 2)), 0.7, 4

    def horizon_objective(theta):
        listed = episodes_by_hand(transition, reward, softmax_rows(theta), initial, horizon)
        return sum(p * sum(gamma**t * r for t, r in enumerate(rs)) for p, _, _, rs in listed)

    episodes = enumerate_episodes(transition, reward, softmax_rows(logits), initial, horizon)
    np.testing.assert_allclose(
        expected_estimate(logits, episodes, gamma, reward_to_go=reward_to_go),
        central_differences(horizon_objective, logits),
        atol=1e-8,
    )
