"""rlfound.pomdp: the Bayes filter (predict, correct, update, filter) and the brute-force belief.

References: the two Bayes steps written as explicit loops, hand-computed beliefs of a door with
a noisy sensor, and belief_by_enumeration (a sum over every hidden state sequence) as the
definition the recursive filter must reproduce. Impossible observations are in
test_bad_input.py.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rlfound.pomdp import (
    belief_by_enumeration,
    belief_filter,
    belief_update,
    correct_belief,
    predict_belief,
)
from tests.oracles import random_distributions

# A door that is open (0) or shut (1) and stays so; action 0 waits, action 1 toggles it.
DOOR = np.stack([np.eye(2), np.eye(2)[::-1]], axis=1)  # DOOR[s, a, s']
SENSOR = np.array([[0.8, 0.2], [0.2, 0.8]])  # reports the truth 80% of the time


def predict_loop(belief, action, transition):
    """b̄(s') = Σ_s P(s' | s, a) b(s), one entry at a time."""
    size = len(belief)
    return np.array(
        [sum(transition[s, action, t] * belief[s] for s in range(size)) for t in range(size)]
    )


def correct_loop(predicted, observation, observation_model):
    """b'(s) = O(o | s) b̄(s) / Σ_s'' O(o | s'') b̄(s'')."""
    joint = [observation_model[s, observation] * p for s, p in enumerate(predicted)]
    return np.array(joint) / sum(joint)


@st.composite
def pomdps(draw):
    """A random POMDP with some zero probabilities: (transition, observation_model, prior)."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    num_states, num_actions = draw(st.integers(1, 3)), draw(st.integers(1, 2))
    num_observations, sparse = draw(st.integers(1, 3)), draw(st.booleans())
    return (
        random_distributions(rng, (num_states, num_actions, num_states), sparse),
        random_distributions(rng, (num_states, num_observations), sparse),
        random_distributions(rng, (num_states,), sparse),
        rng,
    )


@st.composite
def histories(draw):
    """A POMDP and a history sampled from it (so it has positive probability)."""
    transition, sensor, prior, rng = draw(pomdps())
    steps, with_initial = draw(st.integers(0, 4)), draw(st.booleans())
    state = rng.choice(len(prior), p=prior)
    initial_observation = int(rng.choice(sensor.shape[1], p=sensor[state]))
    actions, observations = [], []
    for _ in range(steps):
        actions.append(int(rng.integers(transition.shape[1])))
        state = rng.choice(len(prior), p=transition[state, actions[-1]])
        observations.append(int(rng.choice(sensor.shape[1], p=sensor[state])))
    return (
        prior,
        np.array(actions, dtype=int),
        np.array(observations, dtype=int),
        transition,
        sensor,
        initial_observation if with_initial else None,
    )


# --- predict_belief, correct_belief, belief_update ----------------------------------------------


def test_predict_belief_of_a_toggle_by_hand():
    np.testing.assert_allclose(predict_belief([0.7, 0.3], 1, DOOR), [0.3, 0.7], rtol=1e-15)


@pytest.mark.equation("eq-belief-predict")
@given(model=pomdps(), data=st.data())
def test_predict_belief_is_the_law_of_total_probability(model, data):
    transition, _, belief, _ = model
    action = data.draw(st.integers(0, transition.shape[1] - 1))
    np.testing.assert_allclose(
        predict_belief(belief, action, transition),
        predict_loop(belief, action, transition),
        atol=1e-15,
    )


def test_correct_belief_by_hand():
    # Reading "open" after the prediction (0.3, 0.7): (0.8 * 0.3, 0.2 * 0.7) / 0.38.
    np.testing.assert_allclose(
        correct_belief([0.3, 0.7], 0, SENSOR), [0.24 / 0.38, 0.14 / 0.38], rtol=1e-14
    )


@pytest.mark.equation("eq-belief-correct")
@given(model=pomdps(), data=st.data())
def test_correct_belief_is_bayes_rule(model, data):
    _, sensor, predicted, rng = model
    # An observation of positive probability: one emitted by a state drawn from the belief.
    observation = int(
        rng.choice(sensor.shape[1], p=sensor[rng.choice(len(predicted), p=predicted)])
    )
    np.testing.assert_allclose(
        correct_belief(predicted, observation, sensor),
        correct_loop(predicted, observation, sensor),
        atol=1e-14,
    )


def test_belief_update_toggles_then_weighs_the_reading_by_hand():
    # Predict (0.7, 0.3) through the toggle: (0.3, 0.7); then Bayes with "open" as above.
    np.testing.assert_allclose(
        belief_update([0.7, 0.3], 1, 0, DOOR, SENSOR), [0.24 / 0.38, 0.14 / 0.38], rtol=1e-14
    )


def test_belief_update_with_an_uninformative_sensor_is_the_prediction():
    blind = np.full((2, 3), 1.0 / 3.0)
    np.testing.assert_allclose(belief_update([0.9, 0.1], 1, 2, DOOR, blind), [0.1, 0.9])


def test_belief_update_with_a_perfect_sensor_is_certain():
    np.testing.assert_allclose(belief_update([0.3, 0.7], 0, 1, DOOR, np.eye(2)), [0.0, 1.0])


# --- belief_filter and belief_by_enumeration ----------------------------------------------------


def test_belief_by_enumeration_by_hand():
    # o_0 = open: (0.8, 0.2); toggle: (0.2, 0.8); "shut": ∝ (0.04, 0.64) = (1, 16) / 17;
    # wait, "shut" again: ∝ (1 * 0.2, 16 * 0.8) = (1, 64) / 65.
    belief = belief_by_enumeration([0.5, 0.5], [1, 0], [1, 1], DOOR, SENSOR, initial_observation=0)
    np.testing.assert_allclose(belief, [1 / 65, 64 / 65], rtol=1e-13)


def test_belief_filter_with_an_initial_observation_weighs_the_prior():
    beliefs = belief_filter([0.5, 0.5], [], [], DOOR, SENSOR, initial_observation=1)
    np.testing.assert_allclose(beliefs, [[0.2, 0.8]])


def test_belief_filter_multiplies_the_odds_by_four_at_every_agreeing_reading():
    beliefs = belief_filter([0.5, 0.5], [0] * 20, [0] * 20, DOOR, SENSOR)
    np.testing.assert_allclose(beliefs[:, 0] / beliefs[:, 1], 4.0 ** np.arange(21), rtol=1e-9)


@given(history=histories())
def test_belief_filter_is_repeated_belief_updates(history):
    prior, actions, observations, transition, sensor, initial_observation = history
    beliefs = belief_filter(prior, actions, observations, transition, sensor, initial_observation)
    assert beliefs.shape == (len(actions) + 1, len(prior))
    belief = (
        prior if initial_observation is None else correct_loop(prior, initial_observation, sensor)
    )
    np.testing.assert_allclose(beliefs[0], belief, atol=1e-14)
    for t, (action, observation) in enumerate(zip(actions, observations, strict=True)):
        belief = correct_loop(predict_loop(belief, action, transition), observation, sensor)
        np.testing.assert_allclose(beliefs[t + 1], belief, atol=1e-12)


@given(history=histories())
def test_belief_filter_equals_belief_by_enumeration_at_every_step(history):
    prior, actions, observations, transition, sensor, initial_observation = history
    beliefs = belief_filter(prior, actions, observations, transition, sensor, initial_observation)
    for t in range(len(actions) + 1):
        brute = belief_by_enumeration(
            prior, actions[:t], observations[:t], transition, sensor, initial_observation
        )
        np.testing.assert_allclose(beliefs[t], brute, atol=1e-12)
