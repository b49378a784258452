"""The reference solutions of chapter 2's code exercises are right.

Every solution is checked against the library and against an independent hand computation.
The numbers the solutions page states for the derivation exercises are checked here too. The
files themselves (solution markers, starters, imports, docstring examples) are checked for
every exercise in ``test_solution_files.py``.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from rlfound import mdp, tokens
from tests._solutions import load_solution

TIGER_STAY = np.eye(2)[:, None, :]
TIGER_SENSOR = np.array([[0.85, 0.15], [0.15, 0.85]])

parser = load_solution("parser_marginal")
bayes = load_solution("belief_update")

# The chapter's bigram model.
BOOK_TABLE = np.array(
    [
        [-1.5, -1.5, 0.0, 1.5],
        [-1.5, -1.5, 0.5, 0.5],
        [-0.5, 1.0, 0.0, -0.5],
        [-0.5, 0.0, 0.5, 0.5],
        [1.0, 0.6, 0.6, -0.5],
    ]
)
BOOK_ACTIONS = np.array([0, 1, -1, -1])


# --- The action probability of a parser --------------------------------------------------


def by_hand(table, length, token_actions, num_actions):
    """Plain loops over every response: probability products and the first-action parser."""
    vocab_size = table.shape[1]
    z = np.exp(table - table.max(axis=1, keepdims=True))
    next_token = z / z.sum(axis=1, keepdims=True)
    result = np.zeros(num_actions)
    for response in itertools.product(range(vocab_size), repeat=length):
        probability, previous = 1.0, vocab_size
        for token in response:
            probability *= next_token[previous, token]
            previous = token
        actions = [token_actions[t] for t in response if token_actions[t] >= 0]
        if actions:
            result[actions[0]] += probability
    return result


def via_library(table, length, token_actions, num_actions):
    """The same numbers through rlfound.tokens: enumeration, bigram logits, parser marginal."""
    responses = tokens.enumerate_sequences(table.shape[1], length)
    logprobs = tokens.sequence_logprob(
        tokens.token_logprobs(tokens.bigram_logits(table, responses), responses)
    )
    parsed = []
    for response in responses:
        actions = [token_actions[t] for t in response if token_actions[t] >= 0]
        parsed.append(actions[0] if actions else -1)
    return tokens.parser_marginal(logprobs, np.array(parsed), num_actions)


def test_action_probabilities_of_the_book_model():
    got = parser.action_probabilities(BOOK_TABLE, 3, BOOK_ACTIONS, 2)
    assert got.shape == (2,) and got.dtype == np.float64
    np.testing.assert_allclose(got, [0.4507, 0.4812], atol=5e-5)
    np.testing.assert_allclose(got, by_hand(BOOK_TABLE, 3, BOOK_ACTIONS, 2), atol=1e-13)
    np.testing.assert_allclose(got, via_library(BOOK_TABLE, 3, BOOK_ACTIONS, 2), atol=1e-13)


def test_action_probabilities_on_random_models():
    rng = np.random.default_rng(11)
    for vocab_size, length in [(1, 3), (2, 1), (2, 6), (3, 4), (5, 3)]:
        for _ in range(3):
            num_actions = int(rng.integers(1, 4))
            token_actions = rng.integers(-1, num_actions, size=vocab_size)
            table = rng.normal(scale=2.0, size=(vocab_size + 1, vocab_size))
            got = parser.action_probabilities(table, length, token_actions, num_actions)
            want = by_hand(table, length, token_actions, num_actions)
            np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-13)
            np.testing.assert_allclose(
                got, via_library(table, length, token_actions, num_actions), atol=1e-13
            )
            assert got.sum() <= 1 + 1e-12


def test_rows_of_action_tokens_do_not_matter():
    rng = np.random.default_rng(12)
    table = rng.normal(size=(6, 5))
    token_actions = np.array([-1, 0, 1, -1, 2])
    base = parser.action_probabilities(table, 4, token_actions, 3)
    for _ in range(3):
        changed = table.copy()
        changed[[1, 2, 4]] = rng.normal(scale=20.0, size=(3, 5))
        np.testing.assert_allclose(
            parser.action_probabilities(changed, 4, token_actions, 3), base, atol=1e-14
        )


def test_action_probabilities_edge_cases():
    table = np.random.default_rng(13).normal(size=(4, 3))
    # no action token at all: nothing parses
    np.testing.assert_array_equal(parser.action_probabilities(table, 3, [-1, -1, -1], 2), [0, 0])
    # every token is an action: only the first token matters
    z = np.exp(table[3])
    first = z / z.sum()
    got = parser.action_probabilities(table, 3, np.array([0, 1, 1]), 2)
    np.testing.assert_allclose(got, [first[0], first[1] + first[2]], atol=1e-14)
    # huge logits: exact and finite
    huge = np.array([[800.0, 0.0], [0.0, 800.0], [800.0, 799.0]])
    got = parser.action_probabilities(huge, 2, np.array([0, -1]), 1)
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, [1 / (1 + np.exp(-1.0))], rtol=1e-12)


@pytest.mark.parametrize(
    ("arguments", "name"),
    [
        ((np.zeros((4, 4)), 2, [0, 1, -1, -1], 2), "bigram_table"),
        ((np.full((5, 4), np.nan), 2, [0, 1, -1, -1], 2), "bigram_table"),
        ((np.zeros((5, 4)), 0, [0, 1, -1, -1], 2), "length"),
        ((np.zeros((5, 4)), 2.0, [0, 1, -1, -1], 2), "length"),
        ((np.zeros((5, 4)), 20, [0, 1, -1, -1], 2), "length"),
        ((np.zeros((5, 4)), 2, [0, 1, -1], 2), "token_actions"),
        ((np.zeros((5, 4)), 2, [0, 2, -1, -1], 2), "token_actions"),
        ((np.zeros((5, 4)), 2, [0, 1, -2, -1], 2), "token_actions"),
        ((np.zeros((5, 4)), 2, [0.0, 1.0, -1.0, -1.0], 2), "token_actions"),
        ((np.zeros((5, 4)), 2, [0, 1, -1, -1], 0), "num_actions"),
    ],
)
def test_action_probabilities_rejects_bad_input(arguments, name):
    with pytest.raises(ValueError, match=rf"^{name}"):
        parser.action_probabilities(*arguments)


# --- The Bayes filter --------------------------------------------------------------------


def test_belief_update_tiger_numbers_by_hand():
    once = bayes.belief_update([0.5, 0.5], 0, 0, TIGER_STAY, TIGER_SENSOR)
    np.testing.assert_allclose(once, [0.85, 0.15], atol=1e-15)
    twice = bayes.belief_update(once, 0, 0, TIGER_STAY, TIGER_SENSOR)
    np.testing.assert_allclose(twice, [0.7225 / 0.745, 0.0225 / 0.745], atol=1e-15)
    back = bayes.belief_update(once, 0, 1, TIGER_STAY, TIGER_SENSOR)
    np.testing.assert_allclose(back, [0.5, 0.5], atol=1e-15)


def test_belief_update_matches_the_library_and_enumeration():
    rng = np.random.default_rng(14)
    for states, actions, observations in [(2, 1, 2), (3, 2, 3), (5, 3, 2)]:
        transition = rng.dirichlet(np.ones(states), size=(states, actions))
        sensor = rng.dirichlet(np.ones(observations), size=states)
        prior = rng.dirichlet(np.ones(states))
        history_a = rng.integers(actions, size=5)
        history_o = rng.integers(observations, size=5)
        belief = prior
        for a, o in zip(history_a, history_o, strict=True):
            library = mdp.belief_update(belief, int(a), int(o), transition, sensor)
            belief = bayes.belief_update(belief, int(a), int(o), transition, sensor)
            np.testing.assert_allclose(belief, library, atol=1e-14)
        brute = mdp.belief_by_enumeration(prior, history_a, history_o, transition, sensor)
        np.testing.assert_allclose(belief, brute, atol=1e-13)


def test_belief_update_keeps_exact_zeros_and_collapses_with_a_perfect_sensor():
    move = np.roll(np.eye(3), 1, axis=1)[:, None, :]  # s -> s + 1 (mod 3)
    sensor = np.array([[0.9, 0.1, 0.0], [0.0, 0.5, 0.5], [0.2, 0.0, 0.8]])
    got = bayes.belief_update([0.5, 0.5, 0.0], 0, 2, move, sensor)
    # predicted (0, 0.5, 0.5); likelihoods of o = 2: (0, 0.5, 0.8)
    np.testing.assert_allclose(got, [0.0, 0.25 / 0.65, 0.4 / 0.65], atol=1e-15)
    assert got[0] == 0.0
    np.testing.assert_array_equal(
        bayes.belief_update([0.2, 0.3, 0.5], 0, 1, move, np.eye(3)), [0.0, 1.0, 0.0]
    )


@pytest.mark.parametrize(
    ("arguments", "name"),
    [
        (([1.0, 0.0], 0, 1, TIGER_STAY, np.eye(2)), "observation"),
        (([0.5, 0.5], 0, 2, TIGER_STAY, TIGER_SENSOR), "observation"),
        (([0.7, 0.7], 0, 0, TIGER_STAY, TIGER_SENSOR), "belief"),
        (([0.5, 0.3, 0.2], 0, 0, TIGER_STAY, TIGER_SENSOR), "belief"),
        (([0.5, 0.5], 1, 0, TIGER_STAY, TIGER_SENSOR), "action"),
        (([0.5, 0.5], 0.0, 0, TIGER_STAY, TIGER_SENSOR), "action"),
        (([0.5, 0.5], 0, 0, 2 * TIGER_STAY, TIGER_SENSOR), "transition"),
        (([0.5, 0.5], 0, 0, np.eye(2), TIGER_SENSOR), "transition"),
        (([0.5, 0.5], 0, 0, TIGER_STAY, [[0.5, 0.6], [0.5, 0.5]]), "observation_model"),
        (([0.5, 0.5], 0, 0, TIGER_STAY, np.ones((3, 2)) / 2), "observation_model"),
    ],
)
def test_belief_update_rejects_bad_input(arguments, name):
    with pytest.raises(ValueError, match=rf"^{name}\b"):
        bayes.belief_update(*arguments)


# --- Numbers stated in the solutions of the derivation exercises -------------------------


def test_tiger_belief_solution_numbers():
    left_left = np.array([0.7225, 0.0225]) / 0.745
    open_right = 10 * left_left[0] - 100 * left_left[1]
    open_left = -100 * left_left[0] + 10 * left_left[1]
    assert open_right == pytest.approx(4.975 / 0.745) == pytest.approx(6.678, abs=5e-4)
    assert open_left == pytest.approx(-96.678, abs=5e-4)
    beliefs = mdp.belief_filter([0.5, 0.5], [0, 0], [0, 0], TIGER_STAY, TIGER_SENSOR)
    np.testing.assert_allclose(beliefs[-1], left_left, atol=1e-15)
    # after left then right: open now -45; listen once more and open -1 + (8.5 - 15) = -7.5
    assert 0.5 * 10 + 0.5 * -100 == -45
    assert -1 + 0.85 * 10 + 0.15 * -100 == pytest.approx(-7.5)


@pytest.mark.parametrize("batch", [2, 3, 8])
@pytest.mark.parametrize("p", [0.3, 0.9, 0.99])
def test_leave_one_out_weight_second_moment(batch, p):
    """E[(R_i - mean of the others)^2] = p (1 - p) N / (N - 1) for Bernoulli(p) rewards."""
    second_moment = 0.0
    for rewards in itertools.product((0, 1), repeat=batch):
        r = np.array(rewards, dtype=float)
        probability = np.prod(np.where(r == 1, p, 1 - p))
        second_moment += probability * (r[0] - r[1:].mean()) ** 2
    assert second_moment == pytest.approx(p * (1 - p) * batch / (batch - 1), rel=1e-12)
