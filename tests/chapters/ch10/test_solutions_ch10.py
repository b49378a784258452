"""The reference solution of chapter 10's code exercise is right, and so are the numbers of
the solutions page.

The solution is checked against entropies written out by hand and central differences, on
extreme logits. Its specification (the reference passes every check, the starter none) is
checked with every exercise's in ``test_exercises.py``, and its typical mistakes in
``test_mutants.py``. The numbers the solutions page states for the derivation exercises are
recomputed with ``tests.oracles``. The file itself (markers, starter, imports, docstring
examples) is checked with every other solution file in ``test_solution_files.py``."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rlfound import entropy
from tests._solutions import (
    load_solution,
)
from tests.oracles import (
    BIGRAM_TABLE,
    bigram_by_hand,
    central_differences,
    entropy_by_hand,
    first_letter,
    softmax_rows,
)

solution = load_solution("entropy_gradient")


# --- the functions themselves ------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(1,), (4,), (3, 5), (2, 2, 7)])
def test_entropy_matches_the_sum_by_hand(shape):
    logits = 2.0 * np.random.default_rng(len(shape)).normal(size=shape)
    expected = np.zeros(shape[:-1])
    for index in np.ndindex(shape[:-1]):
        expected[index] = entropy_by_hand(softmax_rows(logits[index]))
    np.testing.assert_allclose(solution.softmax_entropy(logits), expected, rtol=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_gradient_matches_central_differences(seed):
    logits = 3.0 * np.random.default_rng(seed).normal(size=(2, 5))
    numerical = central_differences(lambda z: np.sum(solution.softmax_entropy(z)), logits)
    np.testing.assert_allclose(
        solution.softmax_entropy_gradient(logits), numerical, rtol=1e-5, atol=1e-8
    )


def test_solution_agrees_with_the_library():
    logits = np.random.default_rng(9).normal(size=(3, 4, 6)) * 4
    np.testing.assert_allclose(
        solution.softmax_entropy(logits), entropy.categorical_entropy(logits)
    )
    np.testing.assert_allclose(
        solution.softmax_entropy_gradient(logits),
        entropy.entropy_logit_gradient(logits),
        atol=1e-15,
    )


def test_extreme_logits_give_exact_answers():
    rows = np.array([[1000.0, 0.0, -1000.0], [1.7e308, -1.7e308, 0.0], [1e300, 1e300, -1e300]])
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        h = solution.softmax_entropy(rows)
        gradient = solution.softmax_entropy_gradient(rows)
    np.testing.assert_allclose(h, [0.0, 0.0, math.log(2.0)], atol=1e-15)
    np.testing.assert_allclose(gradient, 0.0, atol=1e-15)


@pytest.mark.parametrize("bad", [np.array([0.0, np.nan]), np.array(2.0), np.zeros((2, 0))])
@pytest.mark.parametrize("name", ["softmax_entropy", "softmax_entropy_gradient"])
def test_bad_input_raises_a_value_error_naming_the_logits(bad, name):
    with pytest.raises(ValueError, match=r"^logits"):
        getattr(solution, name)(bad)


# --- the specification ---------------------------------------------------------------------------


# --- the numbers of the solutions page ------------------------------------------------------


NEVER = -20.0


def test_parser_entropy_exercise():
    # (b) by hand; (c) "A, then anything" and the 1/L dilution.
    anything = np.zeros((5, 4))
    anything[4] = [-NEVER, NEVER, NEVER, NEVER]
    responses, probs, entropies = bigram_by_hand(anything, 3)
    assert (probs @ entropies).mean() == pytest.approx(4 / 3 * math.log(2), abs=1e-6)
    assert (probs @ entropies).mean() > math.log(2)
    assert all(first_letter(x, 2) == 0 for x, p in zip(responses, probs, strict=True) if p > 1e-6)
    assert math.log(2) / 3 == pytest.approx(0.2310, abs=5e-5)
    assert math.log(2) / 300 == pytest.approx(0.0023, abs=5e-5)


def test_temperature_exercise():
    q = np.array([1.0, 0.8, 0.0])
    theta = np.log([0.2, 0.5, 0.3])
    pi = softmax_rows(theta)

    def naive_best(zeta):
        pi_zeta = softmax_rows(theta / zeta)
        return pi_zeta[0] * q[0] - (pi_zeta @ q) * pi[0]

    grid = np.round(np.arange(0.3, 1.0 + 1e-9, 0.05), 2)
    positive = [z for z in grid if naive_best(z) > 0]
    assert min(positive) == pytest.approx(0.6)
    assert naive_best(0.55) < 0 < naive_best(0.6)
    # (d) the greedy limit q(a*)(e_a* - pi), a* = action 1.
    pi_zeta = softmax_rows(theta / 0.02)
    np.testing.assert_allclose(
        pi_zeta * q - (pi_zeta @ q) * pi, q[1] * (np.eye(3)[1] - pi), atol=1e-6
    )


@pytest.mark.parametrize("eps", [0.1, 0.01, 0.001])
def test_entropy_dynamics_exercise_formulas(eps):
    k = 3
    probs = np.array([1 - eps] + [eps / (k - 1)] * (k - 1))
    h = entropy_by_hand(probs)
    gap = math.log((1 - eps) * (k - 1) / eps)
    varentropy = sum(p * math.log(p) ** 2 for p in probs) - h**2
    assert varentropy == pytest.approx(eps * (1 - eps) * gap**2, rel=1e-9)
    gradient = central_differences(lambda z: entropy_by_hand(softmax_rows(z)), np.log(probs))
    assert np.sum(gradient**2) == pytest.approx(
        eps**2 * (1 - eps) ** 2 * gap**2 * k / (k - 1), rel=1e-5
    )


def test_entropy_dynamics_exercise_coefficient():
    q = np.array([1.0, 0.8, 0.0])
    pi = np.array([0.90, 0.08, 0.02])
    advantage = q - pi @ q
    centered = np.log(pi) + entropy_by_hand(pi)
    coef = np.sum(pi**2 * centered * advantage) / np.sum(pi**2 * centered**2)
    assert coef == pytest.approx(0.1228, abs=5e-5)  # "c_H = 0.12"
    gradient = central_differences(lambda z: entropy_by_hand(softmax_rows(z)), np.log(pi))
    step = 1e-4 * (pi * advantage + coef * gradient)
    change = entropy_by_hand(softmax_rows(np.log(pi) + step)) - entropy_by_hand(pi)
    without = entropy_by_hand(softmax_rows(np.log(pi) + 1e-4 * pi * advantage)) - entropy_by_hand(
        pi
    )
    assert abs(change) < 1e-11 and without == pytest.approx(-1.15e-6, abs=5e-9)


def test_sequence_entropy_exercise():
    # The missing term E[sum_j H_j grad log pi(x_<j)], by loops; the trainer's term by
    # central differences of the entropies at fixed prefixes; their sum is grad H(X).
    responses, probs, entropies = bigram_by_hand(BIGRAM_TABLE, 3)
    table = np.array(BIGRAM_TABLE, dtype=float)

    def response_entropy(t):
        return entropy_by_hand(bigram_by_hand(t, 3)[1])

    missing = np.zeros_like(table)
    for response, p, position_h in zip(responses, probs, entropies, strict=True):
        for k, token in enumerate(response):
            row = response[k - 1] if k > 0 else 4
            future = sum(position_h[k + 1 :])
            missing[row] += p * future * (np.eye(4)[token] - softmax_rows(table[row]))

    def fixed_prefix_entropy(t):
        _, _, current = bigram_by_hand(t, 3)
        return float(probs @ current.sum(axis=1))

    trainer = central_differences(fixed_prefix_entropy, table)
    np.testing.assert_allclose(
        trainer + missing, central_differences(response_entropy, table), atol=1e-7
    )
    assert np.linalg.norm(missing[4]) == pytest.approx(0.0724, abs=5e-5)
    assert np.linalg.norm(trainer[4]) == pytest.approx(0.1681, abs=5e-5)
    assert missing[4, 0] < 0 and np.all(missing[4, 1:] > 0)
    assert np.argmax(missing[4]) == 3  # most of it to the full stop
    assert all(np.linalg.norm(trainer[r]) > np.linalg.norm(missing[r]) for r in range(5))
    # The entropy still to come is smallest after "A" and largest after ".".
    future_by_first = []
    for first in range(4):
        members = [i for i, x in enumerate(responses) if x[0] == first]
        weights = probs[members]
        future_by_first.append(weights @ entropies[members, 1:].sum(axis=1) / weights.sum())
    assert np.argmin(future_by_first) == 0 and np.argmax(future_by_first) == 3
    np.testing.assert_allclose(future_by_first, [2.0186, 2.2603, 2.2427, 2.4602], atol=5e-5)
