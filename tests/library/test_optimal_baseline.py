"""The variance-optimal state baseline, rlfound.policy_gradient.optimal_state_baseline.

Book: equation (eq-optimal-baseline), chapter 3. References, all independent of the library:
the REINFORCE estimate with a baseline written out as an explicit loop over steps
(tests.oracles.reinforce_by_hand), its exact total variance as a probability-weighted sum over
every episode, minimized numerically over the baseline vector (scipy) and by a brute-force
scan; the two-action closed form π(a' | s) q(s, a) + π(a | s) q(s, a') with q by backward
induction (tests.oracles.conversation_values); and the expected update compared with central
differences of the exact return.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import optimize

from rlfound import episodes
from rlfound.policy_gradient import optimal_state_baseline
from tests.oracles import (
    central_differences,
    conversation_arrays,
    conversation_logits,
    conversation_mdp,
    conversation_return,
    conversation_values,
    random_mdp,
    reinforce_by_hand,
    softmax_rows,
)

# ---------------------------------------------------------------------------------------------
# Exact moments of the written-out estimate
# ---------------------------------------------------------------------------------------------


def exact_moments(logits, data, gamma, baseline, reward_to_go=True):
    """Mean and total variance of the estimate, summed over the weighted episodes."""
    states, actions, rewards, weights = data
    values = np.array(
        [
            reinforce_by_hand(logits, s, a, r, gamma, reward_to_go, baseline)
            for s, a, r in zip(states, actions, rewards, strict=True)
        ]
    )
    weights = weights / weights.sum()
    mean = np.tensordot(weights, values, axes=1)
    return mean, float(weights @ np.sum((values - mean) ** 2, axis=(1, 2)))


def minimize_variance(logits, data, gamma, reward_to_go=True):
    """The baseline vector that minimizes the exact variance, found numerically.

    The estimate is affine in b, ĝ(b) = ĝ(0) + Σ_s b(s) (ĝ(e_s) - ĝ(0)), so the exact variance
    of every episode's written-out estimate is evaluated at b = 0 and at each unit vector
    once, and then minimized over b by BFGS.
    """
    num_states = logits.shape[0]
    states, actions, rewards, weights = data
    weights = weights / weights.sum()

    def per_episode(baseline):
        return np.array(
            [
                reinforce_by_hand(logits, s, a, r, gamma, reward_to_go, baseline).ravel()
                for s, a, r in zip(states, actions, rewards, strict=True)
            ]
        )

    at_zero = per_episode(np.zeros(num_states))
    slopes = [per_episode(np.eye(num_states)[s]) - at_zero for s in range(num_states)]

    def variance(baseline):
        values = at_zero + sum(b * slope for b, slope in zip(baseline, slopes, strict=True))
        mean = weights @ values
        return float(weights @ np.sum((values - mean) ** 2, axis=1))

    start = np.zeros(num_states)
    result = optimize.minimize(variance, start, method="BFGS", options={"gtol": 1e-10})
    return result.x, result.fun


def library_episodes(rng, num_states=4, num_actions=2, horizon=3):
    """Every episode of a random MDP (states recur) and its logits, enumerated by the library."""
    transition, reward, policy, terminal, initial = random_mdp(rng, num_states, num_actions)
    logits = np.log(policy)
    listed = episodes.enumerate_episodes(
        transition, reward, softmax_rows(logits), initial, horizon, terminal
    )
    return logits, (listed.states, listed.actions, listed.rewards, listed.weights), terminal


# ---------------------------------------------------------------------------------------------
# Values
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("num_turns", [1, 2, 3])
def test_two_action_closed_form_on_the_conversation(num_turns):
    logits = conversation_logits(num_turns)
    policy = softmax_rows(logits)
    _, q = conversation_values(num_turns)
    expected = policy[:, 1] * q[:, 0] + policy[:, 0] * q[:, 1]  # the other action's probability
    expected[-2:] = 0.0  # terminal states: never visited
    states, actions, rewards, weights = conversation_arrays(num_turns, logits)
    b_star = optimal_state_baseline(logits, states, actions, rewards, 1.0, weights)
    np.testing.assert_allclose(b_star, expected, atol=1e-12)
    assert b_star.dtype == np.float64 and b_star.shape == (2 * num_turns + 1,)


def test_the_chapter_values():
    logits = conversation_logits(2)
    states, actions, rewards, weights = conversation_arrays(2, logits)
    b_star = optimal_state_baseline(logits, states, actions, rewards, 1.0, weights)
    np.testing.assert_allclose(b_star, [1.14, 0.56, 0.46, 0.0, 0.0], atol=1e-12)


@pytest.mark.equation("eq-optimal-baseline")
@pytest.mark.parametrize("gamma", [1.0, 0.9])
@pytest.mark.parametrize("num_turns", [2, 3])
def test_minimizes_the_exact_variance_on_the_conversation(num_turns, gamma):
    logits = conversation_logits(num_turns)
    data = conversation_arrays(num_turns, logits)
    b_star = optimal_state_baseline(logits, *data[:3], gamma, data[3])
    numerical, smallest = minimize_variance(logits, data, gamma)
    live = slice(0, 2 * num_turns - 1)  # terminal states do not affect the variance
    np.testing.assert_allclose(b_star[live], numerical[live], atol=1e-6)
    assert exact_moments(logits, data, gamma, b_star)[1] == pytest.approx(smallest, abs=1e-12)


@pytest.mark.parametrize("reward_to_go", [True, False])
@pytest.mark.parametrize("gamma", [1.0, 0.7])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_minimizes_the_exact_variance_when_states_recur(seed, gamma, reward_to_go):
    logits, data, terminal = library_episodes(np.random.default_rng(seed))
    states, actions = data[0][:, :-1], data[1]
    taken = actions >= 0
    assert any(len(set(s[t])) < t.sum() for s, t in zip(states, taken, strict=True))  # recurs
    assert not taken.all()  # and some episodes end early: their padding must be skipped
    b_star = optimal_state_baseline(logits, *data[:3], gamma, data[3], reward_to_go=reward_to_go)
    numerical, smallest = minimize_variance(logits, data, gamma, reward_to_go)
    np.testing.assert_allclose(b_star[~terminal], numerical[~terminal], atol=1e-6)
    at_b_star = exact_moments(logits, data, gamma, b_star, reward_to_go)[1]
    assert at_b_star == pytest.approx(smallest, abs=1e-12)


def test_a_brute_force_scan_finds_no_smaller_variance():
    logits = conversation_logits(2)
    data = conversation_arrays(2, logits)
    b_star = optimal_state_baseline(logits, *data[:3], 1.0, data[3])
    at_b_star = exact_moments(logits, data, 1.0, b_star)[1]
    for state in range(3):
        for value in np.linspace(-1.0, 3.0, 81):
            trial = b_star.copy()
            trial[state] = value
            assert exact_moments(logits, data, 1.0, trial)[1] >= at_b_star - 1e-15


@pytest.mark.parametrize("gamma", [1.0, 0.9])
def test_every_baseline_gives_the_same_mean(gamma):
    """Unbiasedness, by exact enumeration: b*, v_π, 0 and an arbitrary b all average to ∇J."""
    logits = conversation_logits(2)
    data = conversation_arrays(2, logits)
    gradient = central_differences(lambda x: conversation_return(x, 2, gamma), logits)
    v, _ = conversation_values(2, gamma)
    b_star = optimal_state_baseline(logits, *data[:3], gamma, data[3])
    for baseline in (b_star, v, np.zeros(5), np.array([3.0, -2.0, 7.5, 100.0, -40.0])):
        mean, _ = exact_moments(logits, data, gamma, baseline)
        np.testing.assert_allclose(mean, gradient, atol=1e-8)


# ---------------------------------------------------------------------------------------------
# Weights and edge cases
# ---------------------------------------------------------------------------------------------


def test_only_the_ratios_of_the_weights_matter():
    logits, (states, actions, rewards, weights), _ = library_episodes(np.random.default_rng(3))
    one = optimal_state_baseline(logits, states, actions, rewards, 0.9, weights)
    scaled = optimal_state_baseline(logits, states, actions, rewards, 0.9, 7.0 * weights)
    np.testing.assert_allclose(one, scaled, rtol=1e-12)


def test_a_repeated_episode_counts_like_a_doubled_weight():
    """Sampled episodes (equal weights, repeats) give the same answer as distinct weighted ones."""
    logits, (states, actions, rewards, weights), _ = library_episodes(np.random.default_rng(4))
    doubled = weights.copy()
    doubled[0] *= 2.0
    repeated = [np.concatenate([x, x[:1]]) for x in (states, actions, rewards, weights)]
    np.testing.assert_allclose(
        optimal_state_baseline(logits, states, actions, rewards, 1.0, doubled),
        optimal_state_baseline(logits, *repeated[:3], 1.0, repeated[3]),
        rtol=1e-12,
    )


def test_monte_carlo_estimate_from_sampled_episodes():
    """A sampled batch, weights 1/N, estimates b* within its sampling error."""
    logits = conversation_logits(2)
    transition, reward, terminal, initial = conversation_mdp(2)
    batch = episodes.sample_episodes(
        transition,
        reward,
        softmax_rows(logits),
        initial,
        2,
        num_episodes=4000,
        terminal=terminal,
        rng=0,
    )
    estimated = optimal_state_baseline(
        logits, batch.states, batch.actions, batch.rewards, 1.0, batch.weights
    )
    np.testing.assert_allclose(estimated, [1.14, 0.56, 0.46, 0.0, 0.0], atol=0.05)


def test_states_that_are_never_visited_get_zero():
    # Two episodes from state 0 to state 2 (the end); state 1 is never visited.
    states = [[0, 2], [0, 2]]
    actions = [[0], [1]]
    rewards = [[1.0], [3.0]]
    b_star = optimal_state_baseline(np.zeros((3, 2)), states, actions, rewards, 1.0, [0.5, 0.5])
    np.testing.assert_allclose(b_star, [2.0, 0.0, 0.0])  # uniform policy: the mean of q


# ---------------------------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------------------------

GOOD = {
    "logits": np.zeros((3, 2)),
    "states": np.array([[0, 1, 2], [0, 2, 2]]),
    "actions": np.array([[0, 1], [1, -1]]),
    "rewards": np.array([[1.0, 0.0], [0.5, 0.0]]),
    "gamma": 1.0,
    "weights": np.array([0.5, 0.5]),
}


@pytest.mark.parametrize(
    ("change", "name"),
    [
        ({"logits": np.zeros(3)}, "logits"),
        ({"logits": np.full((3, 2), np.nan)}, "logits"),
        ({"actions": np.array([0, 1])}, "actions"),
        ({"actions": np.array([[0, 2], [1, -1]])}, "actions"),
        ({"actions": np.array([[-1, 1], [1, -1]])}, "actions"),
        ({"states": np.array([[0, 1], [0, 2]])}, "states"),
        ({"states": np.array([[0, 1, 5], [0, 2, 2]])}, "states"),
        ({"rewards": np.array([[1.0, 0.0]])}, "rewards"),
        ({"rewards": np.array([[1.0, 0.0], [0.5, 3.0]])}, "rewards"),
        ({"rewards": np.array([[np.inf, 0.0], [0.5, 0.0]])}, "rewards"),
        ({"gamma": 1.5}, "gamma"),
        ({"weights": np.array([0.5, -0.5])}, "weights"),
        ({"weights": np.array([0.0, 0.0])}, "weights"),
        ({"weights": np.array([1.0, 1.0, 1.0])}, "weights"),
        ({"reward_to_go": 1}, "reward_to_go"),
    ],
)
def test_rejects_bad_input(change, name):
    with pytest.raises(ValueError, match=rf"^{name}"):
        optimal_state_baseline(**{**GOOD, **change})
