"""POMDP beliefs (chapter 2, eq-belief-update): the Bayes filter against brute force."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rlfound.mdp import belief_by_enumeration, belief_filter, belief_update

# A door that is open (0) or shut (1) and stays so; action 0 waits, action 1 toggles it.
DOOR = np.stack([np.eye(2), np.eye(2)[::-1]], axis=1)  # DOOR[s, a, s']
SENSOR = np.array([[0.8, 0.2], [0.2, 0.8]])  # reports the truth 80% of the time


def random_distribution_rows(rng, shape, sparse):
    """Rows that sum to 1; with ``sparse`` some entries are exactly 0 (never a whole row)."""
    weights = rng.random(shape)
    if sparse:
        weights[rng.random(shape) < 0.4] = 0.0
        empty = weights.sum(axis=-1) == 0.0
        weights[empty, 0] = 1.0
    return weights / weights.sum(axis=-1, keepdims=True)


@st.composite
def pomdp_histories(draw):
    """A random small POMDP and a history sampled from it (so it has positive probability)."""
    seed = draw(st.integers(0, 2**32 - 1))
    num_states = draw(st.integers(1, 3))
    num_actions = draw(st.integers(1, 2))
    num_observations = draw(st.integers(1, 3))
    steps = draw(st.integers(0, 4))
    sparse = draw(st.booleans())
    with_initial = draw(st.booleans())
    rng = np.random.default_rng(seed)
    transition = random_distribution_rows(rng, (num_states, num_actions, num_states), sparse)
    sensor = random_distribution_rows(rng, (num_states, num_observations), sparse)
    prior = random_distribution_rows(rng, (num_states,), sparse)
    state = rng.choice(num_states, p=prior)
    initial_observation = int(rng.choice(num_observations, p=sensor[state]))
    actions, observations = [], []
    for _ in range(steps):
        action = int(rng.integers(num_actions))
        state = rng.choice(num_states, p=transition[state, action])
        actions.append(action)
        observations.append(int(rng.choice(num_observations, p=sensor[state])))
    return (
        prior,
        np.array(actions, dtype=int),
        np.array(observations, dtype=int),
        transition,
        sensor,
        initial_observation if with_initial else None,
    )


def test_door_update_by_hand():
    # Bayes: 0.8 * 0.5 / (0.8 * 0.5 + 0.2 * 0.5) = 0.8.
    np.testing.assert_allclose(belief_update([0.5, 0.5], 0, 0, DOOR, SENSOR), [0.8, 0.2])
    # Toggling first moves the belief, then the reading "open" is weighed against it:
    # prediction [0.3, 0.7] -> [0.8 * 0.3, 0.2 * 0.7] / 0.38.
    np.testing.assert_allclose(
        belief_update([0.7, 0.3], 1, 0, DOOR, SENSOR), [0.24 / 0.38, 0.14 / 0.38]
    )


@given(history=pomdp_histories())
def test_filter_equals_enumeration(history):
    prior, actions, observations, transition, sensor, initial_observation = history
    beliefs = belief_filter(prior, actions, observations, transition, sensor, initial_observation)
    assert beliefs.shape == (len(actions) + 1, prior.size)
    np.testing.assert_allclose(beliefs.sum(axis=1), 1.0, atol=1e-12)
    assert np.all(beliefs >= 0.0)
    brute = belief_by_enumeration(
        prior, actions, observations, transition, sensor, initial_observation
    )
    np.testing.assert_allclose(beliefs[-1], brute, atol=1e-12)
    # Every prefix of the history gives the filter's intermediate belief too.
    for t in range(len(actions) + 1):
        prefix = belief_by_enumeration(
            prior, actions[:t], observations[:t], transition, sensor, initial_observation
        )
        np.testing.assert_allclose(beliefs[t], prefix, atol=1e-12)


@given(history=pomdp_histories())
def test_filter_is_repeated_update(history):
    prior, actions, observations, transition, sensor, _ = history
    beliefs = belief_filter(prior, actions, observations, transition, sensor)
    np.testing.assert_array_equal(beliefs[0], prior)
    belief = prior
    for t, (action, observation) in enumerate(zip(actions, observations, strict=True)):
        belief = belief_update(belief, action, observation, transition, sensor)
        np.testing.assert_allclose(beliefs[t + 1], belief, atol=1e-14)


def test_initial_observation_weights_the_prior():
    beliefs = belief_filter([0.5, 0.5], [], [], DOOR, SENSOR, initial_observation=1)
    np.testing.assert_allclose(beliefs, [[0.2, 0.8]])


def test_uninformative_sensor_gives_the_prediction():
    blind = np.full((2, 3), 1.0 / 3.0)
    prior = np.array([0.9, 0.1])
    np.testing.assert_allclose(belief_update(prior, 1, 2, DOOR, blind), prior @ DOOR[:, 1, :])


def test_perfect_sensor_gives_certainty():
    perfect = np.eye(2)
    np.testing.assert_allclose(belief_update([0.3, 0.7], 0, 1, DOOR, perfect), [0.0, 1.0])


def test_repeated_readings_converge_to_the_truth():
    beliefs = belief_filter([0.5, 0.5], [0] * 20, [0] * 20, DOOR, SENSOR)
    # Each reading multiplies the odds open:shut by 4.
    np.testing.assert_allclose(beliefs[:, 0] / beliefs[:, 1], 4.0 ** np.arange(21), rtol=1e-9)


def test_impossible_observation_is_refused():
    perfect = np.eye(2)
    with pytest.raises(ValueError, match=r"^observation\b"):
        belief_update([1.0, 0.0], 0, 1, DOOR, perfect)
    with pytest.raises(ValueError, match=r"^observations"):
        belief_filter([1.0, 0.0], [0, 0], [0, 1], DOOR, perfect)
    with pytest.raises(ValueError, match=r"^observations"):
        belief_by_enumeration([1.0, 0.0], [0, 0], [0, 1], DOOR, perfect)
    with pytest.raises(ValueError, match=r"^initial_observation"):
        belief_filter([1.0, 0.0], [], [], DOOR, perfect, initial_observation=1)
    with pytest.raises(ValueError, match=r"^initial_observation"):
        belief_by_enumeration([1.0, 0.0], [], [], DOOR, perfect, initial_observation=1)
