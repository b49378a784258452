"""rlfound.episodes: sampled and enumerated episodes in one padded representation.

References: a small MDP whose episodes are listed by hand, a recursive enumeration
(tests.oracles.episodes_by_hand), trajectory log-probabilities, and Monte Carlo averages of
sampled episodes with explicit statistical tolerances.
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rlfound.episodes import Episodes, enumerate_episodes, sample_episodes
from rlfound.policy_gradient import trajectory_log_probability
from tests.oracles import episodes_by_hand, random_distributions, random_mdp, softmax_rows

# By hand: state 1 is terminal. In state 0, action 0 stays in 0 and pays 0; action 1 moves to
# the terminal state and pays 1; π(· | 0) = (1/2, 1/2). With horizon 2 there are three episodes,
# in lexicographic order of (s_0, a_0, s_1, a_1, ...): stay twice (cut by the horizon, 1/4),
# stay then leave (1/4), leave at once (1/2).
HAND_TRANSITION = np.array([[[1.0, 0.0], [0.0, 1.0]], [[0.0, 0.0], [0.0, 0.0]]])
HAND_REWARD = np.array([[[0.0, 0.0], [0.0, 1.0]], [[0.0, 0.0], [0.0, 0.0]]])
HAND_POLICY = np.array([[0.5, 0.5], [0.0, 0.0]])
HAND_TERMINAL = np.array([False, True])
HAND_EPISODES = {
    "states": [[0, 0, 0], [0, 0, 1], [0, 1, 1]],
    "actions": [[0, 0], [0, 1], [1, -1]],
    "rewards": [[0.0, 0.0], [0.0, 1.0], [1.0, 0.0]],
    "terminated": [[False, False], [False, True], [True, False]],
    "truncated": [[False, True], [False, False], [False, False]],
    "weights": [0.25, 0.25, 0.5],
}
FIELDS = ("states", "actions", "rewards", "terminated", "truncated")


def hand_mdp():
    return HAND_TRANSITION, HAND_REWARD, HAND_POLICY, [1.0, 0.0]


def small_mdp(seed=6):
    """Three states (the last terminal, its rows zero), sparse rows, some episodes starting in
    the terminal state: (transition, reward, logits, policy, initial, terminal)."""
    rng = np.random.default_rng(seed)
    transition, reward, _, terminal, _ = random_mdp(rng, 3, 2)
    transition = random_distributions(rng, transition.shape, sparse=True)
    transition[terminal] = 0.0
    logits = rng.normal(size=(3, 2))
    policy = softmax_rows(logits)
    policy[terminal] = 0.0
    return transition, reward, logits, policy, np.array([0.5, 0.3, 0.2]), terminal


def batch_of(kind):
    """Episodes of the small MDP, horizon 3: sampled (N = 400) or every one of them."""
    transition, reward, _, policy, initial, terminal = small_mdp()
    if kind == "sampled":
        return sample_episodes(transition, reward, policy, initial, 3, 400, terminal, rng=0)
    return enumerate_episodes(transition, reward, policy, initial, 3, terminal)


def rows(episodes):
    """Each episode as a hashable tuple of its rows (everything but the weight)."""
    return [
        tuple(tuple(getattr(episodes, field)[i].tolist()) for field in FIELDS)
        for i in range(len(episodes))
    ]


# --- the representation, the same for both ------------------------------------------------------


def test_enumerate_episodes_by_hand():
    episodes = enumerate_episodes(*hand_mdp(), 2, HAND_TERMINAL)
    for field, expected in HAND_EPISODES.items():
        np.testing.assert_array_equal(getattr(episodes, field), expected, err_msg=field)


def test_lengths_and_len_by_hand():
    episodes = enumerate_episodes(*hand_mdp(), 2, HAND_TERMINAL)
    np.testing.assert_array_equal(episodes.lengths, [2, 2, 1])
    assert len(episodes) == 3


def test_sample_episodes_by_hand():
    # Every sampled episode is one of the three listed by hand, with weight 1/N.
    episodes = sample_episodes(*hand_mdp(), 2, 50, HAND_TERMINAL, rng=1)
    listed = rows(enumerate_episodes(*hand_mdp(), 2, HAND_TERMINAL))
    assert set(rows(episodes)) <= set(listed)
    np.testing.assert_array_equal(episodes.weights, np.full(50, 1 / 50))


@pytest.mark.parametrize("kind", ["sampled", "enumerated"])
def test_episodes_arrays_have_the_documented_shapes_and_dtypes(kind):
    episodes = batch_of(kind)
    n = len(episodes)
    expected = {
        "states": ((n, 4), np.int64),
        "actions": ((n, 3), np.int64),
        "rewards": ((n, 3), np.float64),
        "terminated": ((n, 3), np.bool_),
        "truncated": ((n, 3), np.bool_),
        "weights": ((n,), np.float64),
    }
    for field, (shape, dtype) in expected.items():
        array = getattr(episodes, field)
        assert (array.shape, array.dtype) == (shape, dtype), field


@pytest.mark.parametrize("kind", ["sampled", "enumerated"])
def test_steps_after_the_end_are_padding(kind):
    # Action -1, reward 0, the last state repeated, no flag.
    episodes = batch_of(kind)
    for i, length in enumerate(episodes.lengths):
        assert np.all(episodes.actions[i, :length] >= 0)
        np.testing.assert_array_equal(episodes.actions[i, length:], -1)
        np.testing.assert_array_equal(episodes.rewards[i, length:], 0.0)
        np.testing.assert_array_equal(episodes.states[i, length:], episodes.states[i, length])
        assert not (episodes.terminated[i, length:] | episodes.truncated[i, length:]).any()


@pytest.mark.parametrize("kind", ["sampled", "enumerated"])
def test_every_step_follows_the_mdp(kind):
    transition, reward, _, policy, _, terminal = small_mdp()
    episodes = batch_of(kind)
    for i, length in enumerate(episodes.lengths):
        s, a = episodes.states[i], episodes.actions[i]
        for t in range(length):
            assert not terminal[s[t]]
            assert policy[s[t], a[t]] > 0.0 and transition[s[t], a[t], s[t + 1]] > 0.0
            assert episodes.rewards[i, t] == reward[s[t], a[t], s[t + 1]]


@pytest.mark.parametrize("kind", ["sampled", "enumerated"])
def test_terminated_and_truncated_mark_how_each_episode_ended(kind):
    _, _, _, _, _, terminal = small_mdp()
    episodes = batch_of(kind)
    horizon = episodes.actions.shape[1]
    for i, length in enumerate(episodes.lengths):
        last_state = episodes.states[i, length]
        expected_terminated = np.zeros(horizon, dtype=bool)
        expected_truncated = np.zeros(horizon, dtype=bool)
        if length > 0 and terminal[last_state]:
            expected_terminated[length - 1] = True  # the step that entered a terminal state
        elif length == horizon:
            expected_truncated[-1] = True  # still running when the horizon cut it
        else:
            assert length == 0 and terminal[last_state]  # started in a terminal state
        np.testing.assert_array_equal(episodes.terminated[i], expected_terminated)
        np.testing.assert_array_equal(episodes.truncated[i], expected_truncated)


def test_episodes_are_frozen():
    episodes = enumerate_episodes(*hand_mdp(), 2, HAND_TERMINAL)
    with pytest.raises(dataclasses.FrozenInstanceError):
        episodes.weights = np.ones(3)  # type: ignore[misc]


def test_episodes_can_be_built_directly_from_arrays():
    episodes = Episodes(**{k: np.asarray(v) for k, v in HAND_EPISODES.items()})
    np.testing.assert_array_equal(episodes.lengths, [2, 2, 1])
    assert len(episodes) == 3


# --- enumerate_episodes -------------------------------------------------------------------------


@pytest.mark.equation("eq-trajectory-probability", "sol-trajectory-probability")
@given(seed=st.integers(0, 2**32 - 1), horizon=st.integers(1, 4), sparse=st.booleans())
def test_enumerate_episodes_lists_every_episode_with_its_probability(seed, horizon, sparse):
    rng = np.random.default_rng(seed)
    transition, reward, policy, terminal, _ = random_mdp(rng, 3, 2)
    transition = random_distributions(rng, transition.shape, sparse)
    initial = random_distributions(rng, (3,), sparse)
    episodes = enumerate_episodes(transition, reward, policy, initial, horizon, terminal)
    listed = episodes_by_hand(transition, reward, policy, initial, horizon, terminal)
    assert len(episodes) == len(listed)
    for i, (probability, states, actions, rewards) in enumerate(listed):
        length = len(actions)
        assert episodes.lengths[i] == length
        assert tuple(episodes.states[i, : length + 1]) == states
        assert tuple(episodes.actions[i, :length]) == actions
        assert tuple(episodes.rewards[i, :length]) == rewards
        assert episodes.weights[i] == pytest.approx(probability, rel=1e-12)


@given(seed=st.integers(0, 2**32 - 1), horizon=st.integers(1, 4))
def test_enumerated_weights_sum_to_one(seed, horizon):
    rng = np.random.default_rng(seed)
    transition, reward, policy, terminal, initial = random_mdp(rng, 3, 2)
    episodes = enumerate_episodes(transition, reward, policy, initial, horizon, terminal)
    assert math.fsum(episodes.weights) == pytest.approx(1.0, rel=1e-12)


def test_enumerated_weights_are_the_exponentiated_trajectory_log_probabilities():
    transition, reward, logits, policy, initial, terminal = small_mdp()
    episodes = enumerate_episodes(transition, reward, policy, initial, 3, terminal)
    log_probabilities = [
        trajectory_log_probability(logits, transition, initial, s, a, terminal)
        for s, a in zip(episodes.states, episodes.actions, strict=True)
    ]
    np.testing.assert_allclose(episodes.weights, np.exp(log_probabilities), rtol=1e-12)


def test_an_episode_that_starts_in_a_terminal_state_has_no_steps():
    episodes = enumerate_episodes(*hand_mdp()[:3], [0.0, 1.0], 3, HAND_TERMINAL)
    np.testing.assert_array_equal(episodes.states, [[1, 1, 1, 1]])
    np.testing.assert_array_equal(episodes.actions, [[-1, -1, -1]])
    np.testing.assert_array_equal(episodes.weights, [1.0])
    assert not (episodes.terminated.any() or episodes.truncated.any())


# --- sample_episodes ----------------------------------------------------------------------------


def test_sampled_episode_frequencies_approach_the_enumerated_probabilities():
    transition, reward, _, policy, initial, terminal = small_mdp()
    count = 20_000
    sampled = sample_episodes(transition, reward, policy, initial, 3, count, terminal, rng=5)
    enumerated = enumerate_episodes(transition, reward, policy, initial, 3, terminal)
    seen = Counter(rows(sampled))
    probabilities = dict(zip(rows(enumerated), enumerated.weights, strict=True))
    assert set(seen) <= set(probabilities)  # nothing impossible is ever sampled
    for episode, p in probabilities.items():
        # A binomial count: within five standard deviations (and one count for tiny p).
        tolerance = 5.0 * math.sqrt(p * (1.0 - p) / count) + 1.0 / count
        assert abs(seen[episode] / count - p) <= tolerance


def test_sampled_average_return_approaches_the_enumerated_expectation():
    transition, reward, _, policy, initial, terminal = small_mdp()
    count, gamma = 20_000, 0.9
    sampled = sample_episodes(transition, reward, policy, initial, 3, count, terminal, rng=6)
    enumerated = enumerate_episodes(transition, reward, policy, initial, 3, terminal)
    discounts = gamma ** np.arange(3)
    returns = sampled.rewards @ discounts
    exact = enumerated.weights @ (enumerated.rewards @ discounts)
    standard_error = returns.std(ddof=1) / math.sqrt(count)
    assert abs(sampled.weights @ returns - exact) <= 5.0 * standard_error
