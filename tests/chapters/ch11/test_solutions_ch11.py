"""The reference solution of chapter 11's code exercise is right, and so are the numbers of the
solutions page.

The solution is checked against hand computations, central differences and rlfound.constrained.
Its specification (the reference passes every check, the starter none) is checked with every
exercise's in ``test_exercises.py``, and its typical mistakes in ``test_mutants.py``. The
numbers the page states for the derivation exercises (switching prices, the dual function, what
a budget buys, the bilinear game) are recomputed here from the chapter's bandit and two-step
task as ``tests.oracles`` builds them. The file itself (solution markers, starter, imports,
docstring examples) is checked with every other solution file in ``test_solution_files.py``."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from rlfound import constrained
from tests._solutions import (
    SOLUTIONS,
    load_solution,
)
from tests.oracles import (
    DEPLOY_UTILITY,
    DEPLOY_VIOLATION,
    FIX,
    INCIDENT,
    TRIAGE,
    bandit_gradient_by_hand,
    bandit_objective_by_hand,
    best_mixture_of_two,
    central_differences,
    expected_total,
    occupancy_lp_by_hand,
    softmax_objective_and_gradient,
    two_step_task,
)

solution = load_solution("lagrangian_bandit")
Q, C = np.asarray(DEPLOY_UTILITY), np.asarray(DEPLOY_VIOLATION)


# --- the functions themselves --------------------------------------------------------------------


@pytest.mark.parametrize("size", [1, 2, 5, 9])
def test_lagrangian_and_gradient_match_hand_computations(size):
    rng = np.random.default_rng(size)
    theta, q, c = 3.0 * rng.normal(size=size), rng.normal(size=size), rng.uniform(size=size)
    nu, budget = float(rng.uniform(0, 10)), float(rng.uniform())

    def lagrangian(t):
        return bandit_objective_by_hand(t, q) - nu * (bandit_objective_by_hand(t, c) - budget)

    assert solution.bandit_lagrangian(theta, q, c, nu, budget) == pytest.approx(lagrangian(theta))
    gradient = solution.bandit_lagrangian_gradient(theta, q, c, nu, budget)
    expected = bandit_gradient_by_hand(theta, q) - nu * bandit_gradient_by_hand(theta, c)
    np.testing.assert_allclose(gradient, expected, atol=1e-12)
    np.testing.assert_allclose(gradient, central_differences(lagrangian, theta), atol=1e-7)


def test_the_functions_match_the_library():
    theta = np.array([0.3, -0.2, 0.5, 0.1])
    grad, _ = constrained.lagrangian_gradients(
        bandit_gradient_by_hand(theta, Q), bandit_gradient_by_hand(theta, C),
        bandit_objective_by_hand(theta, C), 4.0, 0.01,
    )  # fmt: skip
    np.testing.assert_allclose(
        solution.bandit_lagrangian_gradient(theta, Q, C, 4.0, 0.01), grad, atol=1e-15
    )
    for nu, cost, budget, lr in [(2.0, 0.04, 0.01, 10.0), (0.1, 0.0, 0.01, 100.0), (0, 1, 1, 1)]:
        assert solution.projected_multiplier_update(nu, cost, budget, lr) == pytest.approx(
            constrained.multiplier_update(nu, cost, budget, lr)
        )


def test_large_logits_stay_finite():
    theta = np.array([800.0, -800.0, 799.0])
    value = solution.bandit_lagrangian(theta, [1.0, 0.0, 2.0], [0.0, 0.0, 1.0], 1.5, 0.1)
    gradient = solution.bandit_lagrangian_gradient(
        theta, [1.0, 0.0, 2.0], [0.0, 0.0, 1.0], 1.5, 0.1
    )
    assert np.isfinite(value) and np.all(np.isfinite(gradient))


@pytest.mark.parametrize(
    ("function", "change", "name"),
    [
        ("bandit_lagrangian", {"multiplier": -1.0}, "multiplier"),
        ("bandit_lagrangian", {"multiplier": True}, "multiplier"),
        ("bandit_lagrangian", {"budget": [0.1, 0.2]}, "budget"),
        ("bandit_lagrangian", {"budget": float("nan")}, "budget"),
        ("bandit_lagrangian_gradient", {"action_costs": [0.0, 1.0, 2.0]}, "action_costs"),
        ("bandit_lagrangian_gradient", {"logits": [[0.0, 0.0]]}, "logits"),
        ("bandit_lagrangian_gradient", {"action_rewards": [0.0, float("inf")]}, "action_rewards"),
    ],
)
def test_bad_input_raises_a_value_error_naming_the_argument(function, change, name):
    arguments = {
        "logits": [0.0, 0.0],
        "action_rewards": [0.0, 1.0],
        "action_costs": [0.0, 1.0],
        "multiplier": 2.0,
        "budget": 0.1,
    }
    arguments.update(change)
    with pytest.raises(ValueError, match=rf"^{name}"):
        getattr(solution, function)(**arguments)


@pytest.mark.parametrize(
    ("change", "name"),
    [
        ({"multiplier": -0.1}, "multiplier"),
        ({"multiplier_lr": -1.0}, "multiplier_lr"),
        ({"cost_value": float("nan")}, "cost_value"),
        ({"budget": "0.1"}, "budget"),
    ],
)
def test_the_update_refuses_bad_input(change, name):
    arguments = {"multiplier": 2.0, "cost_value": 0.04, "budget": 0.01, "multiplier_lr": 10.0}
    arguments.update(change)
    with pytest.raises(ValueError, match=rf"^{name}"):
        solution.projected_multiplier_update(**arguments)


# --- the grading specification, evaluated in-process -------------------------------------------


# --- the numbers of the solutions page ---------------------------------------------------------


def weighted(w_v, scale=1.0):
    return int(np.argmax(scale * Q - w_v * C))


def test_exchange_rates():
    assert (Q[2] - Q[1]) / (C[2] - C[1]) == pytest.approx(6.25)
    assert (Q[3] - Q[2]) / (C[3] - C[2]) == pytest.approx(0.78125)
    assert [weighted(w) for w in (0.5, 5.0, 10.0, 50.0)] == [3, 2, 1, 1]
    assert [weighted(w, 10.0) for w in (0.5, 5.0, 10.0, 50.0)] == [3, 3, 2, 2]
    assert 10 * Q[3] - 5 * C[3] == pytest.approx(8.25) and 10 * Q[2] - 5 * C[2] == pytest.approx(
        7.8
    )
    rates = {float(C[weighted(w)]) for w in np.linspace(0, 100, 10_001)}
    assert rates == {0.0, 0.04, 0.2}


@pytest.mark.parametrize(
    ("budget", "nu_star", "value", "mixture"),
    [
        (0.01, 6.25, 0.6125, [0.0, 0.75, 0.25, 0.0]),
        (0.1, 0.78125, 0.846875, [0.0, 0.0, 0.625, 0.375]),
        (0.3, 0.0, 0.925, [0.0, 0.0, 0.0, 1.0]),
    ],
)
def test_the_dual_function_table(budget, nu_star, value, mixture):
    def g(nu):
        return nu * budget + max(Q - nu * C)

    nus = np.linspace(0.0, 20.0, 20_001)
    assert nus[np.argmin([g(n) for n in nus])] == pytest.approx(nu_star, abs=1e-3)
    assert g(nu_star) == pytest.approx(value)
    points = list(zip(Q, C, strict=True))
    assert best_mixture_of_two(points, budget) == pytest.approx(value)
    assert np.asarray(mixture) @ Q == pytest.approx(value)
    assert np.asarray(mixture) @ C <= budget + 1e-12


TRANSITION, REWARD, COST, TERMINAL, INITIAL = two_step_task()


def policy_of(a_triage, a_fix):
    policy = np.full((5, 3), 1 / 3)
    policy[TRIAGE], policy[FIX] = np.eye(3)[a_triage], np.eye(3)[a_fix]
    return policy


def test_the_duality_certificate_of_the_budget_exercise():
    nu = 0.28 / 1.5
    penalized = {
        (a, b): expected_total(
            TRANSITION, REWARD - nu * COST, policy_of(a, b), INITIAL, 1.0, TERMINAL
        )
        for a, b in itertools.product(range(3), range(3))
    }
    best = max(penalized.values())
    assert best == pytest.approx(0.55)
    assert sorted(k for k, v in penalized.items() if abs(v - best) < 1e-12) == [(0, 0), (0, 2)]
    # with the filter, at nu = 0.15, the pull request and the merge tie at 0.55
    filtered = {k: v for k, v in penalized.items() if 2 not in k}
    at_015 = {
        k: expected_total(TRANSITION, REWARD - 0.15 * COST, policy_of(*k), INITIAL, 1.0, TERMINAL)
        for k in filtered
    }
    assert max(at_015.values()) == pytest.approx(0.55)
    assert sorted(k for k, v in at_015.items() if abs(v - 0.55) < 1e-12) == [(0, 0), (0, 1)]


def incident_probability(severity, budget, allowed=None):
    transition, reward, cost, terminal, initial = two_step_task(severity)
    _, occupancy, _ = occupancy_lp_by_hand(
        transition, reward, [cost], [budget], initial, 1.0, terminal, allowed=allowed
    )
    # With gamma = 1, the expected number of entries into the terminal incident state.
    return float((occupancy * transition[:, :, INCIDENT]).sum())


@pytest.mark.parametrize("budget", [0.3, 0.5, 1.2, 1.5])
def test_incident_probability_is_budget_over_30(budget):
    assert incident_probability(10.0, budget) == pytest.approx(budget / 30, abs=1e-9)


@pytest.mark.parametrize("budget", [0.5, 1.0])
def test_the_cost_of_the_filter(budget):
    allowed = TRANSITION[:, :, INCIDENT] == 0.0
    plain, _, _ = occupancy_lp_by_hand(TRANSITION, REWARD, [COST], [budget], INITIAL, 1.0, TERMINAL)
    shielded, _, _ = occupancy_lp_by_hand(
        TRANSITION, REWARD, [COST], [budget], INITIAL, 1.0, TERMINAL, allowed=allowed
    )
    assert plain - shielded == pytest.approx((0.28 / 1.5 - 0.15) * budget, abs=1e-9)


def risky_occupancies(severity, budget):
    """(hot-patch occupancy at triage, force-push occupancy at the fix state) of the LP optimum."""
    transition, reward, cost, terminal, initial = two_step_task(severity)
    _, occupancy, _ = occupancy_lp_by_hand(
        transition, reward, [cost], [budget], initial, 1.0, terminal
    )
    return occupancy[TRIAGE, 2], occupancy[FIX, 2]


def test_the_severity_thresholds():
    # Erratum: the page said incidents return only above C_max = 2 for every K > 32.5; between
    # 30.3 and 33 hot-patching is the cheapest switch from (sandbox, merge) and they return
    # above 1. The closed forms of the three prices per unit:
    assert 0.28 / (1 + 0.05 * 17.4) < 0.15 < 0.28 / (1 + 0.05 * 17.3)
    assert 0.2575 / (1 + 0.05 * 14.4) < 0.15 < 0.2575 / (1 + 0.05 * 14.3)

    def hot_patch(k):
        return 0.16 / (0.35 + 0.05 * k)

    assert 2.6 / 30.3 > hot_patch(30.3) and 2.6 / 30.4 < hot_patch(30.4)
    assert hot_patch(32.9) > 0.08 > hot_patch(33.1)

    # The gains, from (sandbox, merge), recomputed from the enumerated policies.
    def value(a, b, severity):
        transition, reward, cost, terminal, initial = two_step_task(severity)
        policy = policy_of(a, b)
        return [
            expected_total(transition, r, policy, initial, 1.0, terminal) for r in (reward, cost)
        ]

    base = value(0, 1, 32.7)
    for (a, b), gain, extra in (((2, 1), 0.16, 0.35 + 0.05 * 32.7), ((0, 2), 0.13, 0.05 * 32.7),
                                ((1, 1), 0.08, 1.0)):  # fmt: skip
        reward, cost = value(a, b, 32.7)
        assert (reward - base[0], cost - base[1]) == pytest.approx((gain, extra), abs=1e-12)
    # The linear program on both sides of each threshold, at budgets just below and above 1 and 2.
    assert incident_probability(17.25, 0.5) > 1e-6
    for severity in (17.35, 30.25, 30.35, 32.7, 32.95):
        assert incident_probability(severity, 0.99) < 1e-9 < incident_probability(severity, 1.01)
    for severity in (17.35, 30.25):
        patch, push = risky_occupancies(severity, 1.5)
        assert patch < 1e-9 < push
    for severity in (30.35, 32.7, 32.95):
        patch, push = risky_occupancies(severity, 1.5)
        assert push < 1e-9 < patch
    assert incident_probability(32.7, 1.2) == pytest.approx(0.005, abs=5e-5)
    for severity in (33.05, 40.0):
        assert incident_probability(severity, 1.99) < 1e-9 < incident_probability(severity, 2.01)
    text = " ".join((SOLUTIONS / "11_constrained_rl.md").read_text(encoding="utf-8").split())
    assert "for larger $K$ reading the logs is" not in text
    assert "for $30.3 < \\kappa < 33$ it hot-patches" in text
    assert "$\\kappa > 33$ does it read the logs" in text


def test_the_bilinear_game():
    eta, steps = 0.3, 400
    x, y = 1.0, 0.0
    for _ in range(steps):
        x, y = x + eta * y, y - eta * x
    assert x * x + y * y == pytest.approx((1 + eta**2) ** steps, rel=1e-9)
    x, y, points = 1.0, 0.0, []
    for _ in range(steps):
        x = x + eta * y
        y = y - eta * x
        points.append((x, y))
        assert x * x + y * y + eta * x * y == pytest.approx(1.0, abs=1e-12)
    assert np.linalg.norm(np.mean(points, axis=0)) == pytest.approx(0.0092, abs=5e-5)


@pytest.mark.slow
def test_the_clipping_identity_of_the_two_runs():
    """mean(J_C - C_max) = (nu_K - nu_0)/K - (clipped)/K, and the numbers of the page."""

    def oracle(logits):
        return (
            *softmax_objective_and_gradient(logits, TRANSITION, REWARD, INITIAL, 1.0, TERMINAL),
            *softmax_objective_and_gradient(logits, TRANSITION, COST, INITIAL, 1.0, TERMINAL),
        )

    expected = {"multiplier_first": (-0.00248, 0.05), "simultaneous": (-0.05226, 0.46)}
    for order, (gap, fraction) in expected.items():
        run = constrained.primal_dual(oracle, np.zeros((5, 3)), 0.0, 0.5, 1.0, 1.0, 8000, order)
        nus, costs = run.multipliers, run.cost_values
        clipped = nus[1:] - nus[:-1] - (costs[:-1] - 0.5)
        assert np.all(clipped >= -1e-12)
        left = np.mean(costs[:-1] - 0.5)
        assert left == pytest.approx((nus[-1] - nus[0]) / 8000 - clipped.sum() / 8000, abs=1e-12)
        assert left == pytest.approx(gap, abs=5e-6)
        assert np.mean(clipped > 1e-12) == pytest.approx(fraction, abs=0.005)
