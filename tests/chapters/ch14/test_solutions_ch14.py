"""The reference solution of chapter 14's code exercise is right, and so are the numbers of
the solutions page.

``solutions/behavior_kl.py`` is checked against the definitions written out with ``math.log``
(tests.oracles.kl_by_hand) and against the library's ``kl.importance_weighted_kl``. Its
specification (the reference passes every check, the starter none) is checked with every
exercise's in ``test_exercises.py``, and its typical mistakes in ``test_mutants.py``. The
numbers the solutions page states for the derivation exercises are recomputed from closed forms
and loops that share no code with the library."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests._solutions import (
    load_solution,
)
from tests.oracles import (
    CE_BEHAVIOR,
    CE_CURRENT,
    CE_PASS_RATES,
    CE_REF,
    kl_by_hand,
    linear_solve_values,
    quiz_task,
    softmax_rows,
    tilted_by_hand,
    two_prompt_task,
)

solution = load_solution("behavior_kl")


# --- the functions themselves ------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(5))
def test_expectations_match_the_definitions(seed):
    rng = np.random.default_rng([14, seed])
    size = int(rng.integers(2, 7))
    pi, mu, ref = (rng.dirichlet(np.ones(size)) for _ in range(3))
    got = solution.behavior_kl_expectations(pi, mu, ref)
    k1 = [math.log(p / r) for p, r in zip(pi, ref, strict=True)]
    k3 = [r / p - 1 - math.log(r / p) for p, r in zip(pi, ref, strict=True)]
    want = [
        math.fsum(m * k for m, k in zip(mu, k1, strict=True)),
        math.fsum(m * k for m, k in zip(mu, k3, strict=True)),
        math.fsum(p * k for p, k in zip(pi, k1, strict=True)),
        math.fsum(p * k for p, k in zip(pi, k3, strict=True)),
    ]
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
    assert got[2] == pytest.approx(kl_by_hand(pi, ref), abs=1e-13)


def test_token_estimates_match_the_library():
    from rlfound import kl

    rng = np.random.default_rng(140)
    pi, mu, ref = (rng.dirichlet(np.ones(6)) for _ in range(3))
    tokens = rng.choice(6, size=(4, 7), p=mu)
    mask = rng.random((4, 7)) < 0.7
    args = np.log(pi[tokens]), np.log(mu[tokens]), np.log(ref[tokens])
    got = solution.weighted_kl_tokens(args[0], args[1], args[2], mask)
    want = kl.importance_weighted_kl(args[0], args[2], args[1], estimator="k3", mask=mask)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)
    assert np.all(got[~mask] == 0.0)


@pytest.mark.parametrize(
    "call",
    [
        lambda: solution.weighted_kl_tokens([-0.1, -0.2], [-0.1], [-0.3, -0.4], [1, 1]),
        lambda: solution.weighted_kl_tokens([0.1, -0.2], [-0.1, -0.2], [-0.3, -0.4], [1, 1]),
        lambda: solution.weighted_kl_tokens([-0.1, -0.2], [-0.1, -0.2], [-0.3, -0.4], [1, 2]),
        lambda: solution.behavior_kl_expectations([0.5, 0.5], [1.0, 0.0], [0.5, 0.5]),
        lambda: solution.behavior_kl_expectations([1.0, 0.0], [0.5, 0.5], [0.5, 0.5]),
        lambda: solution.behavior_kl_expectations([0.5, 0.5], [0.5, 0.5], [1.0, 0.0]),
        lambda: solution.behavior_kl_expectations([0.5, 0.6], [0.5, 0.5], [0.5, 0.5]),
        lambda: solution.behavior_kl_expectations([0.5, 0.5], [0.5, 0.5], [0.2, 0.3, 0.5]),
    ],
)
def test_bad_input_raises_a_value_error(call):
    with pytest.raises(ValueError):
        call()


# --- the grading specification, evaluated in-process -------------------------------------------


# --- the numbers of the solutions page ---------------------------------------------------------


def test_batch_mean_explained_numbers():
    rates = np.asarray(CE_PASS_RATES)
    v = rates.mean(axis=1)
    j = v.mean()
    var_g = j * (1 - j)
    var_v = ((v - j) ** 2).mean()
    assert (var_g, var_v) == pytest.approx((0.2475, 0.1225))
    assert var_v / var_g == pytest.approx(0.4949, abs=5e-5)
    easy, hard = sorted(rates[0]), sorted(rates[1])
    assert easy == pytest.approx([0.85, 0.95]) and hard == pytest.approx([0.10, 0.30])
    assert max(easy[0], hard[0]) >= min(easy[1], hard[1])  # no constant b works
    transition, reward, terminal, _ = two_prompt_task()
    values, _ = linear_solve_values(transition, reward, np.full((4, 2), 0.5), 1.0, terminal)
    assert values[:2] == pytest.approx(v)


def bandit_run(clip, num_steps=11, lr=0.5):
    rewards = [1.0, 0.5, 0.0]
    old = [1 / 3] * 3
    adv_old = [r - sum(o * x for o, x in zip(old, rewards, strict=True)) for r in rewards]
    logits = np.zeros(3)
    errors = []
    for _ in range(num_steps):
        probs = softmax_rows(logits)
        j = probs @ rewards
        exact = probs * (np.array(rewards) - j)
        step = np.zeros(3)
        for a in range(3):
            rho = probs[a] / old[a]
            if clip and ((adv_old[a] > 0 and rho > 1.2) or (adv_old[a] < 0 and rho < 0.8)):
                derivative = 0.0
            else:
                derivative = rho * adv_old[a]
            step += old[a] * derivative * (np.eye(3)[a] - probs)
        errors.append(np.linalg.norm(step - exact) / np.linalg.norm(exact))
        logits = logits + lr * step
    return errors, softmax_rows(logits) / np.array(old)


def test_bandit_surrogate_numbers():
    clipped, ratios = bandit_run(clip=True)
    assert clipped[:3] == pytest.approx([0.0, 0.0, 0.0], abs=1e-12)
    assert clipped[3:] == pytest.approx([1.0] * 8)  # PPO's gradient is zero from step 3 on
    assert ratios == pytest.approx([1.2648, 0.9662, 0.7690], abs=5e-5)
    unclipped, ratios = bandit_run(clip=False)
    assert max(unclipped) < 1e-12  # on-policy at every step: a bandit has no stale states
    assert ratios == pytest.approx([1.9912, 0.6389, 0.3700], abs=5e-5)


def test_behavior_kl_page_numbers():
    pi, mu, ref = (np.asarray(x, float) for x in (CE_CURRENT, CE_BEHAVIOR, CE_REF))
    got = solution.behavior_kl_expectations(pi, mu, ref)
    assert got == pytest.approx([-0.1813, 0.5882, 0.3759, 0.3759], abs=5e-5)
    on_reference = solution.behavior_kl_expectations(pi, ref, ref)
    chi_square = float(ref @ (ref / pi)) - 1.0
    reverse = kl_by_hand(ref, pi)
    assert on_reference[0] == pytest.approx(-reverse, abs=1e-14)
    assert on_reference[1] == pytest.approx(chi_square - reverse, abs=1e-14)
    assert (on_reference[0], on_reference[1]) == pytest.approx((-0.4028, 0.7191), abs=5e-5)


def test_length_divided_optimum_numbers():
    lengths, success = (3, 12), (0.45, 0.80)
    threshold = (12 * 0.45 - 3 * 0.80) / (12 - 3)
    assert threshold == pytest.approx(1 / 3)
    for b, winner in ((0.0, 0), (0.3, 0), (0.34, 1), (0.625, 1)):
        scores = [(c - b) / n for c, n in zip(success, lengths, strict=True)]
        assert max(range(2), key=lambda k: scores[k]) == winner, b
    divided = tilted_by_hand(
        [0.5, 0.5], [c / n for c, n in zip(success, lengths, strict=True)], 0.05
    )
    summed = tilted_by_hand([0.5, 0.5], list(success), 0.05)
    assert divided == pytest.approx([0.8411, 0.1589], abs=5e-5)
    assert divided @ success == pytest.approx(0.5056, abs=5e-5)
    assert summed[1] == pytest.approx(0.9991, abs=5e-5)
    assert summed @ success == pytest.approx(0.7997, abs=5e-5)


@pytest.mark.parametrize(
    ("cost", "kwargs", "evaluator", "true"),
    [
        (0.1, {}, -0.0210, 0.0735),
        (0.1, {"know": 0.7, "blind_zero": 0.5, "p_check": 0.6}, -0.0240, 0.0240),
        (0.02, {}, -0.0042, 0.0903),
        (0.0, {}, 0.0, 0.0945),
    ],
)
def test_evaluator_critic_numbers(cost, kwargs, evaluator, true):
    """The key + stage critic's TD update is -c p(1 - p) whatever the accuracies; by hand."""
    transition, reward, terminal, _, policy = quiz_task(cost, **kwargs)
    values, _ = linear_solve_values(transition, reward, policy, 1.0, terminal)
    q = np.einsum("sat,sat->sa", transition, reward + values[None, None, :])
    # the critic of the key and the stage: the two answering states of a key are visited with
    # probabilities P(check) / 2 and P(skip) / 2, so it values both by their p-weighted mean
    p = policy[0, 0]
    merged = values.copy()
    for key in (0, 1):
        known, blind = 2 + key, 4 + key
        merged[[known, blind]] = p * values[known] + (1 - p) * values[blind]
    td = np.einsum("sat,sat->sa", transition, reward + merged[None, None, :]) - merged[:, None]
    got_evaluator = sum(0.5 * p * (1 - p) * (td[k, 0] - td[k, 1]) for k in (0, 1))
    got_true = sum(0.5 * p * (1 - p) * (q[k, 0] - q[k, 1]) for k in (0, 1))
    assert got_evaluator == pytest.approx(evaluator, abs=5e-5)
    assert got_evaluator == pytest.approx(-cost * p * (1 - p), abs=1e-14)
    assert got_true == pytest.approx(true, abs=5e-5)
