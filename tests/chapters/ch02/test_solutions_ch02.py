"""Chapter 2's reference solutions are right, and so are the claims of its solutions page.

Every solution is checked against the library and against an independent hand computation.
The numbers and identities the solutions page states for the derivation exercises are
checked here too, except those that rest on the chapter's runs of figure fig-format-drift
(solution (c) of "Credit to formatting"), which ``test_chapter02_claims.py`` checks where it
repeats those runs. The files themselves (solution markers, starters, imports, docstring
examples) are checked for every exercise in ``test_solution_files.py``.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from rlfound import pomdp, tokens
from tests._solutions import load_solution
from tests.oracles import BIGRAM_TABLE, central_differences, random_distributions, softmax_rows

TIGER_STAY = np.eye(2)[:, None, :]
TIGER_SENSOR = np.array([[0.85, 0.15], [0.15, 0.85]])

parser = load_solution("parser_marginal")
bayes = load_solution("belief_update")

# The chapter's bigram model.
BOOK_TABLE = BIGRAM_TABLE  # tests.oracles
BOOK_ACTIONS = np.array([0, 1, -1, -1])


# --- The action probability of a parser --------------------------------------------------


def by_hand(table, length, token_actions, num_actions):
    """Plain loops over every response: probability products and the first-action parser."""
    vocab_size = table.shape[1]
    next_token = softmax_rows(table)
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
    first = softmax_rows(table[3])
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
        transition = random_distributions(rng, (states, actions, states))
        sensor = random_distributions(rng, (states, observations))
        prior = random_distributions(rng, (states,))
        history_a = rng.integers(actions, size=5)
        history_o = rng.integers(observations, size=5)
        belief = prior
        for a, o in zip(history_a, history_o, strict=True):
            library = pomdp.belief_update(belief, int(a), int(o), transition, sensor)
            belief = bayes.belief_update(belief, int(a), int(o), transition, sensor)
            np.testing.assert_allclose(belief, library, atol=1e-14)
        brute = pomdp.belief_by_enumeration(prior, history_a, history_o, transition, sensor)
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


def tiger_posterior(heard):
    """Pr(tiger left, tiger right | heard) for a static tiger, by Bayes' rule written out."""
    joint = np.array([0.5, 0.5])
    for o in heard:
        joint = joint * TIGER_SENSOR[:, o]
    return joint / joint.sum()


def door_values(belief):
    """Expected reward of opening (left, right): +10 if the tiger is behind the other door."""
    return np.array([-100 * belief[0] + 10 * belief[1], 10 * belief[0] - 100 * belief[1]])


def test_after_left_left_the_belief_is_0_7225_over_0_745():
    np.testing.assert_allclose(tiger_posterior([0, 0]), [0.7225 / 0.745, 0.0225 / 0.745])
    assert tiger_posterior([0, 0])[0] == pytest.approx(0.9698, abs=5e-5)


def test_after_left_left_opening_right_earns_6_678_and_opening_left_minus_96_68():
    left, right = door_values(tiger_posterior([0, 0]))
    assert right == pytest.approx(4.975 / 0.745) == pytest.approx(6.678, abs=5e-4)
    assert left == pytest.approx(-96.68, abs=5e-3)


def test_after_left_right_the_belief_is_back_at_the_prior_and_either_door_earns_minus_45():
    np.testing.assert_allclose(tiger_posterior([0, 1]), [0.5, 0.5], atol=1e-15)
    np.testing.assert_allclose(door_values(tiger_posterior([0, 1])), [-45, -45])


def test_after_left_right_one_more_listen_then_opening_is_worth_minus_7_5():
    belief = tiger_posterior([0, 1])
    value = -1.0
    for o in (0, 1):
        hear_o = belief @ TIGER_SENSOR[:, o]  # Pr(o | history)
        value += hear_o * door_values(tiger_posterior([0, 1, o])).max()
    assert value == pytest.approx(-7.5, abs=1e-12)
    assert door_values(tiger_posterior([0, 1, 0])).max() == pytest.approx(-6.5, abs=1e-12)


def forward_recursion(table, length, token_actions, num_actions):
    """Pr(a) by the solution's forward recursion over alpha_j, written with explicit loops."""
    vocab_size = table.shape[1]
    next_token = softmax_rows(table)
    alpha = np.zeros(vocab_size + 1)
    alpha[vocab_size] = 1.0  # all mass on the start row
    result = np.zeros(num_actions)
    for _ in range(length):
        new_alpha = np.zeros(vocab_size + 1)
        for w in range(vocab_size + 1):
            for y in range(vocab_size):
                mass = alpha[w] * next_token[w, y]
                if token_actions[y] >= 0:
                    result[token_actions[y]] += mass
                else:
                    new_alpha[y] += mass
        alpha = new_alpha
    return result


def test_the_forward_recursion_of_the_solution_equals_enumeration():
    rng = np.random.default_rng(15)
    cases = [(BOOK_TABLE, 3, BOOK_ACTIONS, 2)]
    for vocab_size, length in [(2, 5), (3, 4), (5, 3)]:
        table = rng.normal(scale=2.0, size=(vocab_size + 1, vocab_size))
        cases.append((table, length, rng.integers(-1, 3, size=vocab_size), 3))
    for case in cases:
        np.testing.assert_allclose(forward_recursion(*case), by_hand(*case), atol=1e-14)


def test_the_nll_is_minimized_at_the_empirical_next_token_frequencies():
    """Solution of "Where teacher forcing stops": zero gradient and the count formula."""
    rng = np.random.default_rng(16)
    texts = np.array(list(itertools.product(range(4), repeat=3)))
    multiplicity = rng.integers(1, 6, size=len(texts)).astype(float)
    previous = np.concatenate([np.full((len(texts), 1), 4), texts[:, :-1]], axis=1)
    counts = np.zeros((5, 4))
    for rows, text, m in zip(previous, texts, multiplicity, strict=True):
        for w, y in zip(rows, text, strict=True):
            counts[w, y] += m

    def nll(table):
        logp = np.log(softmax_rows(table))
        return -sum(
            m * logp[rows, text].sum()
            for rows, text, m in zip(previous, texts, multiplicity, strict=True)
        )

    empirical = counts / counts.sum(axis=1, keepdims=True)
    mle_table = np.log(empirical)
    assert np.abs(central_differences(nll, mle_table)).max() < 1e-5
    assert nll(mle_table) == pytest.approx(-np.sum(counts * np.log(empirical)), rel=1e-12)
    for _ in range(5):
        assert nll(mle_table + 0.1 * rng.normal(size=mle_table.shape)) > nll(mle_table)


def test_the_pushed_table_of_solution_c_has_pr_a_0_99():
    pushed = BOOK_TABLE.copy()
    pushed[4, 0] += 5.0
    assert by_hand(pushed, 3, BOOK_ACTIONS, 2)[0] == pytest.approx(0.99, abs=5e-3)


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
