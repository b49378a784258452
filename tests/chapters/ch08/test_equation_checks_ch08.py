"""Labeled equations of chapter 8 that no other test computes, checked on concrete numbers
(the rule: tests/chapters/test_equations.py)."""

from __future__ import annotations

import numpy as np
import pytest

from rlfound.reduction import aggregate_loss, token_weights
from tests.oracles import (
    central_differences,
    softmax_rows,
)

# ---------------------------------------------------------------------------------------------
# Chapter 8: the gradient of a weighted token loss
# ---------------------------------------------------------------------------------------------


@pytest.mark.equation("eq-weighted-gradient")
@pytest.mark.parametrize("mode", ["token-mean", "seq-mean-token-mean", "seq-mean-token-sum"])
def test_minus_the_loss_gradient_is_the_advantage_weighted_sum_of_scores(mode):
    rng = np.random.default_rng(14)
    logits = rng.normal(size=(3, 4, 5))  # (B, L, V)
    tokens = rng.integers(5, size=(3, 4))
    mask = np.array([[1, 1, 1, 0], [1, 1, 0, 0], [1, 1, 1, 1]], dtype=bool)
    advantage = rng.normal(size=3)

    def loss(flat):
        logprobs = np.log(softmax_rows(flat.reshape(logits.shape)))
        chosen = np.take_along_axis(logprobs, tokens[..., None], axis=-1)[..., 0]
        return aggregate_loss(-advantage[:, None] * chosen, mask, mode)

    weights = token_weights(mask, mode)
    scores = np.eye(5)[tokens] - softmax_rows(logits)  # ψ_ij for the logits of position (i, j)
    expected = advantage[:, None, None] * weights[..., None] * scores
    np.testing.assert_allclose(
        -central_differences(loss, logits.ravel()).reshape(logits.shape), expected, atol=1e-8
    )
