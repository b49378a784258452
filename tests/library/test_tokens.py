"""rlfound.tokens: sequences as actions — log-probabilities, bigram models, parsers, NLL.

References: explicit loops over tokens and sequences, the softmax written out
(tests.oracles.softmax_rows), exact enumeration of every sequence of a bigram model, and
central differences for the cross-entropy gradient.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

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
from tests.oracles import central_differences, softmax_rows

finite = st.floats(min_value=-8.0, max_value=8.0, allow_nan=False, allow_infinity=False)
batch_shapes = st.sampled_from([(), (1,), (3,), (2, 2)])


@st.composite
def token_batches(draw):
    """logits (..., L, V) and tokens (..., L)."""
    batch_shape, length, vocab = (
        draw(batch_shapes),
        draw(st.integers(0, 5)),
        draw(st.integers(1, 5)),
    )
    logits = draw(hnp.arrays(np.float64, (*batch_shape, length, vocab), elements=finite))
    tokens = draw(hnp.arrays(np.int64, (*batch_shape, length), elements=st.integers(0, vocab - 1)))
    return logits, tokens


@st.composite
def logprobs_and_masks(draw):
    """Per-token log-probabilities (..., L) and a bool mask of the same shape."""
    shape = (*draw(batch_shapes), draw(st.integers(0, 5)))
    logprobs = draw(hnp.arrays(np.float64, shape, elements=st.floats(-20.0, 0.0)))
    return logprobs, draw(hnp.arrays(np.bool_, shape))


def bigram_sequence_logprobs(table, sequences):
    """log π(x) of every sequence (rows) of a bigram model."""
    return sequence_logprob(token_logprobs(bigram_logits(table, sequences), sequences))


# --- enumerate_sequences ----------------------------------------------------------------------


@pytest.mark.parametrize(("vocab", "length"), [(1, 0), (1, 3), (2, 3), (3, 2), (4, 1), (5, 0)])
def test_enumerate_sequences_are_the_base_v_digits_of_the_row_index(vocab, length):
    sequences = enumerate_sequences(vocab, length)
    assert sequences.shape == (vocab**length, length)
    for index, row in enumerate(sequences):
        digits, rest = [], index
        for _ in range(length):
            rest, digit = divmod(rest, vocab)
            digits.append(digit)
        assert list(row) == digits[::-1]


# --- token_logprobs and sequence_logprob ------------------------------------------------------


def test_token_logprobs_by_hand():
    logits = [[0.0, 0.0], [0.0, np.log(3.0)]]
    np.testing.assert_allclose(token_logprobs(logits, [1, 0]), np.log([0.5, 0.25]), rtol=1e-14)


@given(batch=token_batches())
def test_token_logprobs_are_the_log_softmax_of_each_chosen_token(batch):
    logits, tokens = batch
    result = token_logprobs(logits, tokens)
    assert result.shape == tokens.shape
    for index in np.ndindex(tokens.shape):
        expected = math.log(softmax_rows(logits[index])[tokens[index]])
        assert result[index] == pytest.approx(expected, abs=1e-12)


def test_token_logprobs_stay_finite_for_huge_logits():
    np.testing.assert_allclose(token_logprobs([[1000.0, -1000.0]], [1]), [-2000.0], rtol=1e-14)


@pytest.mark.equation("eq-sequence-logprob")
def test_sequence_logprob_of_one_sequence_is_the_log_of_the_product():
    logprob = sequence_logprob(np.log([0.5, 0.2, 0.9]))
    assert logprob == pytest.approx(math.log(0.5 * 0.2 * 0.9), rel=1e-14)


@given(pair=logprobs_and_masks())
def test_sequence_logprob_is_the_masked_sum_of_each_sequence(pair):
    logprobs, mask = pair
    result = np.asarray(sequence_logprob(logprobs, mask))
    assert result.shape == logprobs.shape[:-1]
    for index in np.ndindex(logprobs.shape[:-1]):
        expected = sum(lp for lp, keep in zip(logprobs[index], mask[index], strict=True) if keep)
        assert result[index] == pytest.approx(expected, abs=1e-12)


@given(pair=logprobs_and_masks())
def test_sequence_logprob_without_a_mask_counts_every_token(pair):
    logprobs, _ = pair
    result = np.asarray(sequence_logprob(logprobs))
    for index in np.ndindex(logprobs.shape[:-1]):
        assert result[index] == pytest.approx(math.fsum(logprobs[index]), abs=1e-12)


# --- bigram_logits ------------------------------------------------------------------------------


def test_bigram_logits_by_hand():
    # Rows: after token 0, after token 1, at the start.
    table = [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]
    np.testing.assert_array_equal(
        bigram_logits(table, [[0, 0, 1], [1, 1, 0]]),
        [[[4, 5], [0, 1], [0, 1]], [[4, 5], [2, 3], [2, 3]]],
    )


@given(data=st.data())
def test_bigram_logits_use_the_previous_tokens_row(data):
    vocab = data.draw(st.integers(1, 4))
    table = data.draw(hnp.arrays(np.float64, (vocab + 1, vocab), elements=finite))
    shape = (*data.draw(st.sampled_from([(), (2,), (2, 3)])), data.draw(st.integers(0, 5)))
    tokens = data.draw(hnp.arrays(np.int64, shape, elements=st.integers(0, vocab - 1)))
    logits = bigram_logits(table, tokens)
    assert logits.shape == (*shape, vocab)
    for index in np.ndindex(shape):
        j = index[-1]
        previous = vocab if j == 0 else tokens[(*index[:-1], j - 1)]
        np.testing.assert_array_equal(logits[index], table[previous])


@pytest.mark.parametrize(("vocab", "length"), [(1, 3), (2, 1), (2, 4), (3, 3)])
def test_bigram_sequence_probabilities_sum_to_one(vocab, length):
    table = np.random.default_rng(vocab * 10 + length).normal(scale=2.0, size=(vocab + 1, vocab))
    probabilities = np.exp(bigram_sequence_logprobs(table, enumerate_sequences(vocab, length)))
    assert math.fsum(probabilities) == pytest.approx(1.0, rel=1e-12)


def test_bigram_prefix_marginals_are_the_shorter_sequences_probabilities():
    # Summing the last token out of the length-3 probabilities gives the length-2 ones: later
    # tokens do not change earlier ones (the model is autoregressive).
    table = np.random.default_rng(3).normal(size=(4, 3))
    long = np.exp(bigram_sequence_logprobs(table, enumerate_sequences(3, 3)))
    short = np.exp(bigram_sequence_logprobs(table, enumerate_sequences(3, 2)))
    np.testing.assert_allclose(long.reshape(9, 3).sum(axis=1), short, rtol=1e-12)


def test_bigram_sequence_probability_depends_on_the_order_of_the_tokens():
    # π(0, 1) = softmax(1, 0)[0] softmax(0, 2)[1]; π(1, 0) = softmax(1, 0)[1] softmax(0, -1)[0].
    table = np.array([[0.0, 2.0], [0.0, -1.0], [1.0, 0.0]])
    logprobs = bigram_sequence_logprobs(table, np.array([[0, 1], [1, 0]]))
    start = softmax_rows(table[2])
    expected = [
        start[0] * softmax_rows(table[0])[1],
        start[1] * softmax_rows(table[1])[0],
    ]
    np.testing.assert_allclose(np.exp(logprobs), expected, rtol=1e-12)


# --- parser_marginal ----------------------------------------------------------------------------


@given(data=st.data())
def test_parser_marginal_sums_the_probabilities_of_the_texts_of_each_action(data):
    size, num_actions = data.draw(st.integers(1, 12)), data.draw(st.integers(1, 4))
    weights = data.draw(hnp.arrays(np.float64, (size + 1,), elements=st.floats(0.01, 1.0)))
    logprobs = np.log(weights[:size] / weights.sum())  # distinct texts: total mass < 1
    actions = data.draw(hnp.arrays(np.int64, (size,), elements=st.integers(-1, num_actions - 1)))
    marginal = parser_marginal(logprobs, actions, num_actions)
    expected = [
        math.fsum(math.exp(lp) for lp, g in zip(logprobs, actions, strict=True) if g == a)
        for a in range(num_actions)
    ]
    np.testing.assert_allclose(marginal, expected, rtol=1e-12, atol=1e-15)


def test_parser_marginal_over_an_enumerated_bigram_model():
    # g(x) = the number of 1-tokens (capped at 2); unparseable if the text starts with 2.
    sequences = enumerate_sequences(3, 3)
    probabilities = np.exp(
        bigram_sequence_logprobs(np.random.default_rng(7).normal(size=(4, 3)), sequences)
    )
    actions = np.where(sequences[:, 0] == 2, -1, np.minimum((sequences == 1).sum(axis=1), 2))
    marginal = parser_marginal(np.log(probabilities), actions, 3)
    for action in range(3):
        assert marginal[action] == pytest.approx(probabilities[actions == action].sum(), rel=1e-12)
    assert marginal.sum() == pytest.approx(1.0 - probabilities[sequences[:, 0] == 2].sum())


def test_parser_marginal_is_accurate_for_tiny_probabilities():
    marginal = parser_marginal([-700.0, -700.0], [0, 0], 1)
    assert marginal[0] == pytest.approx(2.0 * math.exp(-700.0), rel=1e-12)


def test_parser_marginal_of_an_action_no_text_parses_to_is_zero():
    np.testing.assert_array_equal(parser_marginal(np.log([0.5, 0.5]), [2, 2], 3), [0, 0, 1])


# --- negative_log_likelihood --------------------------------------------------------------------


def test_negative_log_likelihood_by_hand():
    nll = negative_log_likelihood(np.log([[0.5, 0.25], [0.5, 1.0]]), mask=[[1, 1], [0, 1]])
    assert nll == pytest.approx(math.log(8.0), rel=1e-14)


@pytest.mark.equation("eq-nll")
@given(pair=logprobs_and_masks())
def test_negative_log_likelihood_is_minus_the_masked_sum_over_the_batch(pair):
    logprobs, mask = pair
    expected = -math.fsum(
        lp for lp, keep in zip(logprobs.ravel(), mask.ravel(), strict=True) if keep
    )
    assert negative_log_likelihood(logprobs, mask) == pytest.approx(expected, abs=1e-12)


# --- cross_entropy_logit_gradient ---------------------------------------------------------------


def test_cross_entropy_logit_gradient_by_hand():
    np.testing.assert_allclose(
        cross_entropy_logit_gradient([[0.0, 0.0], [0.0, np.log(3.0)]], [0, 0]),
        [[-0.5, 0.5], [-0.75, 0.75]],
        rtol=1e-14,
    )


@given(data=st.data())
def test_cross_entropy_logit_gradient_equals_central_differences(data):
    batch_shape = data.draw(st.sampled_from([(), (2,), (2, 3)]))
    vocab = data.draw(st.integers(1, 5))
    logits = data.draw(hnp.arrays(np.float64, (*batch_shape, vocab), elements=finite))
    targets = data.draw(hnp.arrays(np.int64, batch_shape, elements=st.integers(0, vocab - 1)))
    gradient = cross_entropy_logit_gradient(logits, targets)
    assert gradient.shape == logits.shape
    for index in np.ndindex(batch_shape):
        target = targets[index]
        numerical = central_differences(
            lambda z, target=target: -np.log(softmax_rows(z)[target]), logits[index]
        )
        np.testing.assert_allclose(gradient[index], numerical, atol=1e-7)


# --- expand_turn_values_to_tokens ---------------------------------------------------------------


def test_expand_turn_values_to_tokens_with_prompt_observation_and_padding_tokens():
    # prompt, prompt, turn 0 (2 tokens), observation, turn 1 (3 tokens), padding
    ids = [-1, -1, 0, 0, -1, 1, 1, 1, -1]
    np.testing.assert_array_equal(
        expand_turn_values_to_tokens([2.0, -1.0], ids), [0, 0, 2, 2, 0, -1, -1, -1, 0]
    )


@given(data=st.data())
def test_expand_turn_values_to_tokens_copies_each_turns_value_to_its_tokens(data):
    batch_shape = data.draw(batch_shapes)
    turns, length = data.draw(st.integers(0, 4)), data.draw(st.integers(0, 8))
    values = data.draw(hnp.arrays(np.float64, (*batch_shape, turns), elements=finite))
    ids = data.draw(
        hnp.arrays(np.int64, (*batch_shape, length), elements=st.integers(-1, turns - 1))
    )
    result = expand_turn_values_to_tokens(values, ids)
    assert result.shape == ids.shape
    for index in np.ndindex(ids.shape):
        turn = ids[index]
        assert result[index] == (0.0 if turn < 0 else values[(*index[:-1], turn)])


def test_tokens_the_policy_did_not_generate_get_an_exact_positive_zero():
    # Not -0.0 (a product with a negative value would give one) and not a tiny number.
    result = expand_turn_values_to_tokens([-3.0], [-1, 0, -1])
    assert not np.signbit(result[[0, 2]]).any()
    np.testing.assert_array_equal(result, [0.0, -3.0, 0.0])
