"""The reference solution of chapter 5's code exercise is right, and so are the numbers of
the solutions page.

The solution is checked against a token-by-token loop, against central differences. Its
specification (the reference passes every check, the starter none) is checked with every
exercise's in ``test_exercises.py``, and its typical mistakes in ``test_mutants.py``. The
numbers the solutions page states for the derivation exercises (clip-higher, the surrogate's
gradient, the sequence-ratio length) are recomputed here by independent routes. The file itself
(solution markers, starter, imports, docstring examples) is checked with every other solution
file in ``test_solution_files.py``."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests._solutions import (
    load_solution,
)
from tests.oracles import SUBMIT_OR_WORK, central_differences, linear_solve_values, softmax_rows

solution = load_solution("ppo_clip")


def surrogate_loop(log_ratio, advantages, clip_low, clip_high):
    out = np.zeros(np.shape(log_ratio))
    for index in np.ndindex(out.shape):
        rho, a = math.exp(log_ratio[index]), advantages[index]
        out[index] = min(rho * a, min(max(rho, 1 - clip_low), 1 + clip_high) * a)
    return out


# --- the functions themselves --------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(1,), (9,), (3, 7), (2, 3, 4)])
@pytest.mark.parametrize(("clip_low", "clip_high"), [(0.2, 0.2), (0.2, 0.28), (0.0, 0.0)])
def test_objective_matches_a_token_loop(shape, clip_low, clip_high):
    rng = np.random.default_rng([*shape, round(100 * clip_high)])
    log_ratio, advantages = rng.normal(scale=0.5, size=shape), rng.normal(size=shape)
    got = solution.clipped_surrogate(log_ratio, advantages, clip_low, clip_high)
    np.testing.assert_allclose(
        got, surrogate_loop(log_ratio, advantages, clip_low, clip_high), rtol=1e-13
    )


@pytest.mark.parametrize(("clip_low", "clip_high"), [(0.2, 0.2), (0.1, 0.3)])
def test_gradient_matches_central_differences(clip_low, clip_high):
    rng = np.random.default_rng(5)
    log_ratio, advantages = rng.normal(scale=0.4, size=12), rng.normal(size=12)
    numerical = central_differences(
        lambda x: surrogate_loop(x, advantages, clip_low, clip_high).sum(), log_ratio, eps=1e-7
    )
    got = solution.clipped_surrogate_grad(log_ratio, advantages, clip_low, clip_high)
    np.testing.assert_allclose(got, numerical, rtol=1e-5, atol=1e-7)


def test_the_boundary_counts_as_inside_the_clip():
    got = solution.clipped_surrogate_grad(np.log([0.8, 1.2]), [-1.0, 1.0], 0.2, 0.2)
    np.testing.assert_allclose(got, [-0.8, 1.2], rtol=1e-14)


# --- the grading specification, evaluated in-process ---------------------------------------------


# --- the numbers of the solutions page -----------------------------------------------------------


def test_clip_higher_ceilings_and_rounds():
    # (a) min(1, (1 + eps) p); (b) the first n with 0.01 (1 + eps)^n > 0.5, by counting.
    assert min(1.0, 1.2 * 0.01) == pytest.approx(0.012)
    assert min(1.0, 1.28 * 0.01) == pytest.approx(0.0128)
    assert min(1.0, 1.2 * 0.9) == 1.0
    for eps, rounds in ((0.2, 22), (0.28, 16)):
        n, p = 0, 0.01
        while p <= 0.5:
            p *= 1 + eps
            n += 1
        assert n == rounds


def test_surrogate_and_objective_share_the_gradient_at_the_old_policy():
    task = SUBMIT_OR_WORK
    logits = np.log(task.policy)
    live = task.live

    def objective(theta):
        values, _ = linear_solve_values(
            task.transition,
            task.reward,
            softmax_rows(theta.reshape(logits.shape)),
            task.gamma,
            task.terminal,
        )
        return task.initial @ values

    def surrogate(theta):
        new = softmax_rows(theta.reshape(logits.shape))
        return objective(logits.ravel()) + np.sum(task.occupancy[:, None] * new * task.advantages)

    closed_form = task.occupancy[:, None] * task.policy * task.advantages
    for f in (objective, surrogate):
        gradient = central_differences(f, logits.ravel()).reshape(logits.shape)
        np.testing.assert_allclose(gradient[live], closed_form[live], atol=1e-8)
    np.testing.assert_allclose(
        closed_form[live], [[-0.0689, 0.0689], [-0.0267, 0.0267], [0.0446, -0.0446]], atol=5e-5
    )


def test_the_length_at_which_the_sequence_ratio_ess_falls_below_a_tenth():
    rng = np.random.default_rng(0)
    logits = rng.normal(size=16)
    behavior = np.exp(logits - logits.max()) / np.exp(logits - logits.max()).sum()
    noisy = np.log(behavior) + 0.15 * rng.normal(size=16)
    target = np.exp(noisy - noisy.max()) / np.exp(noisy - noisy.max()).sum()
    second_moment = sum(t * t / b for t, b in zip(target, behavior, strict=True))
    length = next(n for n in range(1, 10_000) if 1.0 / second_moment**n < 0.1)
    assert length == 200
    assert second_moment - 1 == pytest.approx(0.01159, abs=5e-6)
    assert behavior @ np.log(behavior / target) == pytest.approx(0.00563, abs=5e-6)
