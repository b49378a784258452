"""rlfound.distributions: softmax, log-softmax and the categorical score e_a - π.

References: tests.oracles.softmax_rows (the softmax written out) and central differences of its
logarithm for the score.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from rlfound.distributions import categorical_score, log_softmax, softmax
from tests.oracles import central_differences, softmax_rows

small = st.floats(min_value=-5.0, max_value=5.0, allow_nan=False, allow_infinity=False)
logit_arrays = hnp.arrays(
    np.float64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=5), elements=small
)


@st.composite
def logits_and_action(draw):
    logits = draw(hnp.arrays(np.float64, (draw(st.integers(1, 6)),), elements=small))
    return logits, draw(st.integers(0, logits.size - 1))


# --- softmax ------------------------------------------------------------------------------------


def test_softmax_by_hand():
    np.testing.assert_allclose(softmax([0.0, np.log(3.0)]), [0.25, 0.75], rtol=1e-14)


def test_softmax_of_a_table_is_one_distribution_per_row():
    # The tabular softmax policy: row s is π(· | s).
    np.testing.assert_allclose(
        softmax([[0.0, 0.0, 0.0], [np.log(2.0), 0.0, np.log(5.0)]]),
        [[1 / 3, 1 / 3, 1 / 3], [0.25, 0.125, 0.625]],
        rtol=1e-14,
    )


@pytest.mark.equation("eq-softmax-policy")
@given(logits=logit_arrays)
def test_softmax_equals_the_written_out_softmax(logits):
    np.testing.assert_allclose(softmax(logits), softmax_rows(logits), rtol=1e-12)


def test_softmax_axis_selects_the_categories():
    logits = np.array([[0.0, 1.0, 2.0], [3.0, -1.0, 0.5]])
    np.testing.assert_allclose(softmax(logits, axis=0), softmax_rows(logits.T).T, rtol=1e-12)


@given(logits=hnp.arrays(np.float64, (3, 4), elements=small), shift=st.floats(-500.0, 500.0))
def test_softmax_is_invariant_to_shifting_the_logits(logits, shift):
    np.testing.assert_allclose(softmax(logits + shift), softmax(logits), rtol=1e-9)


def test_softmax_of_huge_logits_stays_finite():
    np.testing.assert_allclose(softmax([1e4, 0.0, -1e4]), [1.0, 0.0, 0.0], rtol=0, atol=0)
    np.testing.assert_allclose(softmax([1e4, 1e4]), [0.5, 0.5], rtol=1e-14)


# --- log_softmax --------------------------------------------------------------------------------


def test_log_softmax_by_hand():
    np.testing.assert_allclose(log_softmax([0.0, np.log(3.0)]), np.log([0.25, 0.75]), rtol=1e-14)


@pytest.mark.equation("eq-softmax-policy")
@given(logits=logit_arrays)
def test_log_softmax_equals_the_log_of_the_written_out_softmax(logits):
    np.testing.assert_allclose(log_softmax(logits), np.log(softmax_rows(logits)), atol=1e-12)


def test_log_softmax_axis_selects_the_categories():
    logits = np.array([[0.0, 1.0, 2.0], [3.0, -1.0, 0.5]])
    np.testing.assert_allclose(
        log_softmax(logits, axis=0), np.log(softmax_rows(logits.T).T), atol=1e-12
    )


@given(logits=hnp.arrays(np.float64, (3, 4), elements=small), shift=st.floats(-500.0, 500.0))
def test_log_softmax_is_invariant_to_shifting_the_logits(logits, shift):
    np.testing.assert_allclose(log_softmax(logits + shift), log_softmax(logits), atol=1e-9)


def test_log_softmax_stays_finite_where_softmax_underflows():
    # softmax gives exp(-2e4) = 0, whose log would be -inf; θ - logsumexp(θ) does not.
    np.testing.assert_allclose(log_softmax([1e4, 0.0, -1e4]), [0.0, -1e4, -2e4], rtol=1e-14)


# --- categorical_score --------------------------------------------------------------------------


def test_categorical_score_by_hand():
    # π = (1/4, 1/4, 1/2); e_1 - π = (-1/4, 3/4, -1/2).
    np.testing.assert_allclose(
        categorical_score([0.0, 0.0, np.log(2.0)], 1), [-0.25, 0.75, -0.5], rtol=1e-14
    )


@pytest.mark.equation("eq-score-softmax")
@given(pair=logits_and_action())
def test_categorical_score_is_the_gradient_of_the_log_probability(pair):
    logits, action = pair
    numerical = central_differences(lambda theta: np.log(softmax_rows(theta)[action]), logits)
    np.testing.assert_allclose(categorical_score(logits, action), numerical, atol=1e-7)


def test_categorical_score_of_one_distribution_scores_every_action():
    logits = np.array([0.3, -1.2, 2.0])
    actions = np.array([[2, 0], [1, 2]])
    scores = categorical_score(logits, actions)
    assert scores.shape == (2, 2, 3)
    for index in np.ndindex(actions.shape):
        np.testing.assert_allclose(
            scores[index], np.eye(3)[actions[index]] - softmax_rows(logits), atol=1e-15
        )


def test_categorical_score_of_one_distribution_per_action():
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(2, 3, 4))
    actions = np.array([[0, 3, 1], [2, 2, 0]])
    scores = categorical_score(logits, actions)
    assert scores.shape == (2, 3, 4)
    for index in np.ndindex(actions.shape):
        np.testing.assert_allclose(
            scores[index], np.eye(4)[actions[index]] - softmax_rows(logits[index]), atol=1e-15
        )


@pytest.mark.equation("eq-baseline", "sol-score-zero-mean")
@given(logits=hnp.arrays(np.float64, st.integers(1, 6), elements=small))
def test_categorical_score_has_zero_mean_under_the_policy(logits):
    # Σ_a π(a) (e_a - π) = 0: why a baseline costs no bias (eq-score-softmax).
    probs = softmax_rows(logits)
    scores = categorical_score(logits, np.arange(logits.size))
    np.testing.assert_allclose(probs @ scores, 0.0, atol=1e-15)
