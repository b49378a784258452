"""Labeled equations of chapter 10 that no other test computes, checked on concrete numbers
(the rule: tests/chapters/test_equations.py)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from rlfound.distributions import softmax
from rlfound.entropy import distribution_entropy
from tests.oracles import (
    central_differences,
    entropy_by_hand,
    softmax_rows,
)

# ---------------------------------------------------------------------------------------------
# Chapter 10: entropy and temperature
# ---------------------------------------------------------------------------------------------


@pytest.mark.equation("eq-entropy-decomposition")
def test_text_entropy_is_action_entropy_plus_the_conditional_entropy():
    rng = np.random.default_rng(15)
    texts = list(itertools.product(range(3), repeat=3))
    probs = rng.dirichlet(np.ones(len(texts)))
    parse = [(x[0] + x[2]) % 2 for x in texts]
    action_probs = [sum(p for p, a in zip(probs, parse, strict=True) if a == b) for b in (0, 1)]
    conditional = sum(
        action_probs[b]
        * entropy_by_hand(
            [p / action_probs[b] for p, a in zip(probs, parse, strict=True) if a == b]
        )
        for b in (0, 1)
    )
    assert conditional >= 0
    assert distribution_entropy(probs) == pytest.approx(
        entropy_by_hand(action_probs) + conditional, abs=1e-12
    )


TEMPERATURE_LOGITS = np.array([1.2, -0.4, 0.3, 0.0])
TEMPERATURE_REWARDS = np.array([1.0, 0.2, 0.6, -0.3])


@pytest.mark.equation("eq-temperature")
@pytest.mark.parametrize("zeta", [0.3, 1.0, 2.5])
def test_a_tempered_softmax_is_the_normalized_power_of_the_policy(zeta):
    power = softmax_rows(TEMPERATURE_LOGITS) ** (1 / zeta)
    np.testing.assert_allclose(softmax(TEMPERATURE_LOGITS / zeta), power / power.sum(), rtol=1e-12)


def tempered(theta, zeta):
    return softmax_rows(np.asarray(theta) / zeta)


def log_prob_gradients(zeta):
    """∇_θ log π^ζ(a) of every action a, by central differences: rows a."""
    return np.array(
        [
            central_differences(lambda t, a=a: math.log(tempered(t, zeta)[a]), TEMPERATURE_LOGITS)
            for a in range(len(TEMPERATURE_LOGITS))
        ]
    )


@pytest.mark.equation("eq-naive-temperature", "eq-tempered-gradient", "eq-score-temperature")
@pytest.mark.parametrize("zeta", [0.5, 2.0])
def test_sampling_at_a_temperature_and_the_gradients_it_estimates(zeta):
    pi, pi_zeta = tempered(TEMPERATURE_LOGITS, 1.0), tempered(TEMPERATURE_LOGITS, zeta)
    scores, tempered_scores = log_prob_gradients(1.0), log_prob_gradients(zeta)
    naive = (pi_zeta * TEMPERATURE_REWARDS) @ scores
    reweighted = (pi * (pi_zeta / pi) * TEMPERATURE_REWARDS) @ scores
    np.testing.assert_allclose(naive, reweighted, atol=1e-12)
    tempered_objective = central_differences(
        lambda t: float(tempered(t, zeta) @ TEMPERATURE_REWARDS), TEMPERATURE_LOGITS
    )
    np.testing.assert_allclose(
        (pi_zeta * TEMPERATURE_REWARDS) @ tempered_scores, tempered_objective, atol=1e-8
    )
    np.testing.assert_allclose(scores, zeta * tempered_scores + (pi_zeta - pi), atol=1e-8)
