"""Token sequences as actions (chapter 2): eq-sequence-logprob, eq-parser-marginal, eq-nll."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from rlfound.policy_gradient import categorical_score
from rlfound.tokens import (
    bigram_logits,
    cross_entropy_logit_gradient,
    enumerate_sequences,
    expand_turn_values_to_tokens,
    negative_log_likelihood,
    parser_marginal,
    sequence_logprob,
    token_logprobs,
)

finite = st.floats(min_value=-8.0, max_value=8.0, allow_nan=False, allow_infinity=False)


def loop_log_softmax(row):
    """log softmax of one row with plain Python floats."""
    top = max(row)
    log_total = top + math.log(sum(math.exp(z - top) for z in row))
    return [z - log_total for z in row]


def logits_and_tokens(draw, batch_shape, length, vocab):
    logits = draw(hnp.arrays(np.float64, (*batch_shape, length, vocab), elements=finite))
    tokens = draw(hnp.arrays(np.int64, (*batch_shape, length), elements=st.integers(0, vocab - 1)))
    return logits, tokens


@st.composite
def token_batches(draw):
    batch_shape = draw(st.sampled_from([(), (1,), (3,), (2, 2)]))
    length = draw(st.integers(0, 5))
    vocab = draw(st.integers(1, 5))
    return logits_and_tokens(draw, batch_shape, length, vocab)


# --- enumerate_sequences ---------------------------------------------------------------------


@pytest.mark.parametrize(("vocab", "length"), [(1, 0), (1, 3), (2, 3), (3, 2), (4, 1), (5, 0)])
def test_enumerate_sequences_are_base_v_digits_in_order(vocab, length):
    sequences = enumerate_sequences(vocab, length)
    assert sequences.shape == (vocab**length, length)
    assert sequences.dtype == np.int64
    for index, row in enumerate(sequences):
        # Row i is i written in base V, most significant digit first.
        digits, rest = [], index
        for _ in range(length):
            rest, digit = divmod(rest, vocab)
            digits.append(digit)
        assert list(row) == digits[::-1]
    assert len({tuple(row) for row in sequences}) == vocab**length


# --- token_logprobs and sequence_logprob -----------------------------------------------------


@given(batch=token_batches())
def test_token_logprobs_match_a_scalar_loop(batch):
    logits, tokens = batch
    result = token_logprobs(logits, tokens)
    assert result.shape == tokens.shape
    for index in np.ndindex(*tokens.shape):
        expected = loop_log_softmax(list(logits[index]))[tokens[index]]
        assert math.isclose(result[index], expected, rel_tol=1e-12, abs_tol=1e-12)


def test_token_logprobs_stay_finite_for_huge_logits():
    result = token_logprobs([[1000.0, -1000.0]], [1])
    np.testing.assert_allclose(result, [-2000.0])


@given(batch=token_batches(), data=st.data())
def test_sequence_logprob_is_the_masked_sum(batch, data):
    logits, tokens = batch
    logprobs = token_logprobs(logits, tokens)
    mask = data.draw(hnp.arrays(np.bool_, logprobs.shape))
    result = sequence_logprob(logprobs, mask)
    assert result.shape == logprobs.shape[:-1]
    for index in np.ndindex(*logprobs.shape[:-1]):
        expected = sum(lp for lp, keep in zip(logprobs[index], mask[index], strict=True) if keep)
        assert math.isclose(result[index], expected, rel_tol=1e-12, abs_tol=1e-12)
    np.testing.assert_allclose(sequence_logprob(logprobs), logprobs.sum(axis=-1), atol=1e-12)
    np.testing.assert_array_equal(sequence_logprob(logprobs, mask.astype(int)), result)


def test_sequence_logprob_of_a_probability_product():
    probabilities = [0.5, 0.2, 0.9]
    assert math.isclose(
        float(sequence_logprob(np.log(probabilities))), math.log(0.5 * 0.2 * 0.9), rel_tol=1e-12
    )


# --- bigram model ------------------------------------------------------------------------------


@given(data=st.data())
def test_bigram_logits_use_the_previous_token_row(data):
    vocab = data.draw(st.integers(1, 4))
    table = data.draw(hnp.arrays(np.float64, (vocab + 1, vocab), elements=finite))
    batch_shape = data.draw(st.sampled_from([(), (2,), (2, 3)]))
    length = data.draw(st.integers(0, 5))
    tokens = data.draw(
        hnp.arrays(np.int64, (*batch_shape, length), elements=st.integers(0, vocab - 1))
    )
    logits = bigram_logits(table, tokens)
    assert logits.shape == (*batch_shape, length, vocab)
    for index in np.ndindex(*batch_shape):
        for j in range(length):
            row = vocab if j == 0 else tokens[index][j - 1]
            np.testing.assert_array_equal(logits[index][j], table[row])


@pytest.mark.parametrize(("vocab", "length"), [(1, 3), (2, 1), (2, 4), (3, 3), (4, 2)])
@pytest.mark.parametrize("seed", [0, 1])
def test_bigram_sequence_probabilities_sum_to_one(vocab, length, seed):
    table = np.random.default_rng(seed).normal(scale=2.0, size=(vocab + 1, vocab))
    sequences = enumerate_sequences(vocab, length)
    logprobs = sequence_logprob(token_logprobs(bigram_logits(table, sequences), sequences))
    assert math.isclose(np.exp(logprobs).sum(), 1.0, rel_tol=1e-12)


def test_bigram_prefix_marginal_is_the_shorter_model():
    # Summing the last token out of length-3 probabilities gives the length-2 probabilities:
    # the model is autoregressive, the later tokens do not change earlier ones.
    vocab = 3
    table = np.random.default_rng(3).normal(size=(vocab + 1, vocab))
    long = enumerate_sequences(vocab, 3)
    short = enumerate_sequences(vocab, 2)
    p_long = np.exp(sequence_logprob(token_logprobs(bigram_logits(table, long), long)))
    p_short = np.exp(sequence_logprob(token_logprobs(bigram_logits(table, short), short)))
    np.testing.assert_allclose(p_long.reshape(vocab**2, vocab).sum(axis=1), p_short, rtol=1e-12)


def test_bigram_probability_depends_on_order():
    table = np.array([[0.0, 2.0], [0.0, -1.0], [1.0, 0.0]])
    pair = np.array([[0, 1], [1, 0]])
    logprobs = sequence_logprob(token_logprobs(bigram_logits(table, pair), pair))
    assert abs(logprobs[0] - logprobs[1]) > 0.1


# --- parser_marginal ---------------------------------------------------------------------------


@given(data=st.data())
def test_parser_marginal_equals_explicit_loop(data):
    size = data.draw(st.integers(1, 12))
    num_actions = data.draw(st.integers(1, 4))
    weights = data.draw(
        hnp.arrays(np.float64, (size + 1,), elements=st.floats(0.01, 1.0, allow_nan=False))
    )
    logprobs = np.log(weights[:size] / weights.sum())  # distinct sequences: total mass < 1
    actions = data.draw(hnp.arrays(np.int64, (size,), elements=st.integers(-1, num_actions - 1)))
    marginal = parser_marginal(logprobs, actions, num_actions)
    assert marginal.shape == (num_actions,)
    for action in range(num_actions):
        expected = sum(math.exp(lp) for lp, a in zip(logprobs, actions, strict=True) if a == action)
        assert math.isclose(marginal[action], expected, rel_tol=1e-12, abs_tol=1e-15)
    parsed = sum(math.exp(lp) for lp, a in zip(logprobs, actions, strict=True) if a >= 0)
    assert math.isclose(marginal.sum(), parsed, rel_tol=1e-12, abs_tol=1e-15)


def test_parser_marginal_over_an_enumerated_bigram_model():
    # g(x) = number of 1-tokens (0, 1 or 2), unparseable if the text starts with token 2.
    vocab, length = 3, 3
    table = np.random.default_rng(7).normal(size=(vocab + 1, vocab))
    sequences = enumerate_sequences(vocab, length)
    logprobs = sequence_logprob(token_logprobs(bigram_logits(table, sequences), sequences))
    ones = (sequences == 1).sum(axis=1)
    actions = np.where(sequences[:, 0] == 2, -1, np.minimum(ones, 2))
    marginal = parser_marginal(logprobs, actions, 3)
    probabilities = np.exp(logprobs)
    unparsed = probabilities[sequences[:, 0] == 2].sum()
    assert math.isclose(marginal.sum(), 1.0 - unparsed, rel_tol=1e-12)
    for action in range(3):
        expected = sum(p for p, a in zip(probabilities, actions, strict=True) if a == action)
        assert math.isclose(marginal[action], expected, rel_tol=1e-12)


def test_parser_marginal_is_accurate_for_tiny_probabilities():
    # exp(-800) underflows to 0, but a sum of two such terms is computed in log space.
    marginal = parser_marginal([-700.0, -700.0], [0, 0], 1)
    assert math.isclose(marginal[0], 2.0 * math.exp(-700.0), rel_tol=1e-12)


def test_parser_marginal_action_without_sequences_is_zero():
    np.testing.assert_array_equal(parser_marginal(np.log([0.5, 0.5]), [2, 2], 3), [0, 0, 1])


# --- negative log-likelihood and its gradient --------------------------------------------------


@given(batch=token_batches(), data=st.data())
def test_negative_log_likelihood_is_minus_the_explicit_sum(batch, data):
    logits, tokens = batch
    logprobs = token_logprobs(logits, tokens)
    mask = data.draw(hnp.arrays(np.bool_, logprobs.shape))
    expected = -sum(lp for lp, keep in zip(logprobs.ravel(), mask.ravel(), strict=True) if keep)
    result = negative_log_likelihood(logprobs, mask)
    assert isinstance(result, float)
    assert math.isclose(result, expected, rel_tol=1e-12, abs_tol=1e-12)
    assert result >= 0.0
    assert math.isclose(
        negative_log_likelihood(logprobs),
        -float(np.sum(sequence_logprob(logprobs))),
        rel_tol=1e-12,
        abs_tol=1e-12,
    )


def cross_entropy(z, y):
    return -loop_log_softmax(list(z))[y]


@given(data=st.data())
def test_cross_entropy_gradient_matches_finite_differences(data):
    batch_shape = data.draw(st.sampled_from([(), (2,), (2, 3)]))
    vocab = data.draw(st.integers(1, 5))
    logits = data.draw(hnp.arrays(np.float64, (*batch_shape, vocab), elements=finite))
    targets = data.draw(hnp.arrays(np.int64, batch_shape, elements=st.integers(0, vocab - 1)))
    gradient = cross_entropy_logit_gradient(logits, targets)
    assert gradient.shape == logits.shape
    h = 1e-6
    for index in np.ndindex(*batch_shape):
        z, y = logits[index], int(targets[index])
        for k in range(vocab):
            step = np.zeros(vocab)
            step[k] = h
            numerical = (cross_entropy(z + step, y) - cross_entropy(z - step, y)) / (2 * h)
            assert abs(gradient[index][k] - numerical) < 1e-6
    np.testing.assert_allclose(gradient.sum(axis=-1), 0.0, atol=1e-12)


def test_cross_entropy_gradient_is_minus_the_score():
    logits = np.array([0.3, -1.2, 2.0, 0.0])
    for target in range(4):
        np.testing.assert_allclose(
            cross_entropy_logit_gradient(logits, target), -categorical_score(logits, target)
        )


# --- turn values to tokens ---------------------------------------------------------------------


@given(data=st.data())
def test_expand_turn_values_matches_explicit_loop(data):
    batch_shape = data.draw(st.sampled_from([(), (1,), (3,), (2, 2)]))
    turns = data.draw(st.integers(0, 4))
    length = data.draw(st.integers(0, 8))
    values = data.draw(hnp.arrays(np.float64, (*batch_shape, turns), elements=finite))
    ids = data.draw(
        hnp.arrays(np.int64, (*batch_shape, length), elements=st.integers(-1, turns - 1))
    )
    result = expand_turn_values_to_tokens(values, ids)
    assert result.shape == ids.shape
    for index in np.ndindex(*batch_shape):
        for j in range(length):
            turn = ids[index][j]
            expected = 0.0 if turn == -1 else values[index][turn]
            assert result[index][j] == expected
    # Non-policy tokens get an exact zero, not a tiny number or -0.0 from a product.
    assert not np.signbit(result[ids == -1]).any()
    np.testing.assert_array_equal(result[ids == -1], 0.0)


def test_expand_turn_values_example_with_prompt_and_observation_tokens():
    # prompt, prompt, turn 0 (2 tokens), observation, turn 1 (3 tokens), padding
    ids = [-1, -1, 0, 0, -1, 1, 1, 1, -1]
    np.testing.assert_array_equal(
        expand_turn_values_to_tokens([2.0, -1.0], ids), [0, 0, 2, 2, 0, -1, -1, -1, 0]
    )
