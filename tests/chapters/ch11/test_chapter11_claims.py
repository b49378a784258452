"""Claims made in chapter 11 (multi-objective and constrained RL), recomputed independently.

The deployment bandit and the two-step agent task are rebuilt in ``tests.oracles`` from their
tables; values come from a linear solve of the policy-averaged model, constrained optima from
brute force over deterministic policies and their mixtures and from the occupancy-measure
linear program written out with loops, the distribution of the episode cost from a recursion
over every path, and the primal-dual runs from a hand-written loop where the chapter calls the
library (the library's runner is compared with it in tests/library/test_constrained.py).

Sections: weights and the Pareto front (eq-switching-weight, fig-weights); the constrained
bandit, its dual function and the Lagrangian (eq-dual-function); the sign conventions; the
bandit's primal-dual cycles (fig-primal-dual); the two-step task, its linear program and the
primal-dual runs; the tail of the episode cost (fig-cost-tail); lexicographic choice and the
filter; the check for understanding.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

from rlfound import constrained
from tests.oracles import (
    DEPLOY_SUCCESS,
    DEPLOY_TIME,
    DEPLOY_UTILITY,
    DEPLOY_VIOLATION,
    FIX,
    INCIDENT,
    TRIAGE,
    bandit_gradient_by_hand,
    bandit_objective_by_hand,
    best_mixture_of_two,
    central_differences,
    deterministic_policies,
    episode_distribution_by_hand,
    expected_total,
    loss_minimizing_trainer,
    occupancy_by_hand,
    occupancy_lp_by_hand,
    softmax_objective_and_gradient,
    softmax_rows,
    two_step_task,
)

Q = np.asarray(DEPLOY_UTILITY)
C = np.asarray(DEPLOY_VIOLATION)
BUDGET = 0.01
ACTIONS = ["escalate", "test", "direct", "override"]


def weighted_choice(w_v, scale=1.0):
    return ACTIONS[int(np.argmax(scale * Q - w_v * C))]


def bandit_points():
    return list(zip(Q, C, strict=True))


# ---------------------------------------------------------------------------------------------
# Weights and the Pareto front
# ---------------------------------------------------------------------------------------------


def test_the_utilities_and_weighted_rewards_printed_by_the_chapter():
    np.testing.assert_allclose(Q, [0.30, 0.55, 0.80, 0.925], atol=1e-12)
    success, time = np.asarray(DEPLOY_SUCCESS), np.asarray(DEPLOY_TIME)
    np.testing.assert_allclose(success - 0.5 * time - 0.5 * C, [0.3, 0.55, 0.78, 0.825])
    np.testing.assert_allclose(success - 0.5 * time - 5.0 * C, [0.3, 0.55, 0.6, -0.075])
    assert [weighted_choice(w) for w in (0.5, 5.0, 10.0)] == ["override", "direct", "test"]


def test_escalate_is_the_only_dominated_action():
    dominated = [
        ACTIONS[i]
        for i in range(4)
        if any(Q[j] >= Q[i] and C[j] <= C[i] and (Q[j], C[j]) != (Q[i], C[i]) for j in range(4))
    ]
    assert dominated == ["escalate"]


@pytest.mark.equation("eq-switching-weight")
def test_switching_prices_are_the_slopes_of_the_front():
    assert (Q[2] - Q[1]) / (C[2] - C[1]) == pytest.approx(6.25)
    assert (Q[3] - Q[2]) / (C[3] - C[2]) == pytest.approx(0.78125)
    for w, expected in [(0.78, "override"), (0.79, "direct"), (6.24, "direct"), (6.26, "test")]:
        assert weighted_choice(w) == expected


def test_no_price_gives_a_violation_rate_between_0_and_4_percent():
    """fig-weights, right panel: the weighted optimum's rate is 0, 0.04 or 0.2."""
    rates = {float(C[np.argmax(Q - w * C)]) for w in np.logspace(-1, 1.5, 4001)}
    assert rates == {0.0, 0.04, 0.2}


def test_a_tenfold_reward_scale_flips_w_v_5_from_direct_to_override():
    assert weighted_choice(5.0) == "direct"
    assert weighted_choice(5.0, scale=10.0) == "override"


def test_a_half_success_price_buys_a_violation_in_one_episode_of_five():
    assert weighted_choice(0.5) == "override"
    assert C[3] == 0.2 and Q[3] - 0.5 * C[3] == pytest.approx(0.825)
    assert (Q[3] - Q[2]) / (C[3] - C[2]) > 0.5  # 0.125 utility for 0.16 violations


# ---------------------------------------------------------------------------------------------
# The constrained bandit, the dual function, the Lagrangian
# ---------------------------------------------------------------------------------------------


def test_the_constrained_bandit_optimum_by_brute_force():
    assert best_mixture_of_two(bandit_points(), BUDGET) == pytest.approx(0.6125, abs=1e-12)
    mixture = np.array([0.0, 0.75, 0.25, 0.0])  # 0.75 test + 0.25 direct spends the budget
    assert mixture @ C == pytest.approx(BUDGET) and mixture @ Q == pytest.approx(0.6125)


def test_the_dual_function_is_minimized_at_the_switching_price():
    def g(nu):
        return nu * BUDGET + max(Q - nu * C)

    kinks = [0.0, 0.78125, 6.25]  # g is piecewise linear, so its minimum is at a kink
    assert min(kinks, key=g) == 6.25
    assert g(6.25) == pytest.approx(0.6125)
    # and it is convex: slopes C_max - c(argmax) increase
    nus = np.linspace(0, 15, 301)
    assert np.all(np.diff([g(n) for n in nus], n=2) >= -1e-12)


def test_the_lagrangian_of_the_optimum_does_not_depend_on_nu():
    pi = np.array([0.0, 0.75, 0.25, 0.0])
    for nu in (0.0, 6.25, 12.0):
        assert pi @ Q - nu * (pi @ C - BUDGET) == pytest.approx(0.6125)


def test_at_nu_star_every_mixture_of_test_and_direct_maximizes_the_lagrangian():
    penalized = Q - 6.25 * C
    assert penalized[1] == pytest.approx(penalized[2]) == pytest.approx(max(penalized))


def test_the_gradient_check_printed_by_the_chapter():
    theta = np.array([0.3, -0.2, 0.5, 0.1])

    def lagrangian(t):
        return bandit_objective_by_hand(t, Q) - 4.0 * (bandit_objective_by_hand(t, C) - BUDGET)

    analytic = bandit_gradient_by_hand(theta, Q) - 4.0 * bandit_gradient_by_hand(theta, C)
    np.testing.assert_allclose(central_differences(lagrangian, theta), analytic, atol=1e-9)
    np.testing.assert_allclose(analytic, [-0.0319, 0.0223, 0.075, -0.0654], atol=5e-5)
    cost = bandit_objective_by_hand(theta, C)
    assert cost == pytest.approx(0.0583, abs=5e-5) and BUDGET - cost == pytest.approx(
        -0.0483, abs=5e-5
    )


# ---------------------------------------------------------------------------------------------
# Sign conventions
# ---------------------------------------------------------------------------------------------


def test_the_sign_table_printed_by_the_chapter():
    nus, costs = loss_minimizing_trainer(1.0, 1.0)
    assert nus[-1] == pytest.approx(11.29, abs=0.01)
    assert costs[-1000:].mean() == pytest.approx(0.0102, abs=5e-5)
    nus, costs = loss_minimizing_trainer(1.0, -1.0)
    assert nus[-1] == 0.0 and costs[-1000:].mean() == pytest.approx(0.1998, abs=5e-5)
    assert costs[-1000:].mean() / BUDGET > 19  # "20 times the allowed violation rate"
    nus, costs = loss_minimizing_trainer(-1.0, 1.0)
    assert nus[-1] == pytest.approx(5688.91, abs=0.01)
    assert (nus[-1] - nus[-1001]) / 1000 == pytest.approx(1.9, abs=1e-3)
    assert costs[-1000:].mean() == pytest.approx(0.2, abs=5e-5)


# ---------------------------------------------------------------------------------------------
# The bandit's primal-dual cycles
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def bandit_run():
    """6001 iterates of eq-primal-dual (multiplier first, steps 1 and 10), by hand."""
    theta, nu = np.zeros(4), 0.0
    policies, nus, costs = [], [], []
    for _ in range(6001):
        pi = softmax_rows(theta)
        j_c = pi @ C
        policies.append(pi)
        nus.append(nu)
        costs.append(j_c)
        nu = max(0.0, nu + 10.0 * (j_c - BUDGET))
        theta = theta + bandit_gradient_by_hand(theta, Q) - nu * bandit_gradient_by_hand(theta, C)
    return np.array(policies), np.array(nus), np.array(costs)


def test_the_bandit_iterates_cycle_and_overshoot_the_budget_threefold(bandit_run):
    _, nus, costs = bandit_run
    late = slice(3000, None)
    assert costs[late].min() == pytest.approx(0.0016, abs=5e-5)
    assert costs[late].max() == pytest.approx(0.0331, abs=5e-5)
    assert costs[late].max() / BUDGET > 3
    assert nus[late].min() == 0.0 and nus[late].max() == pytest.approx(12.58, abs=0.005)
    up = np.flatnonzero(np.diff(np.sign(nus[late] - 6.25)) > 0)
    assert np.diff(up).mean() == pytest.approx(260, abs=0.5)


def test_the_average_bandit_policy_approaches_the_linear_program(bandit_run):
    policies, _, _ = bandit_run
    average = policies.mean(axis=0)  # the chapter averages all 6001 iterates, the start included
    assert average @ Q == pytest.approx(0.6099, abs=5e-5)
    assert average @ C == pytest.approx(0.0098, abs=5e-5)
    assert 0.6125 - average @ Q < 0.005 and average @ C < BUDGET
    np.testing.assert_allclose(average, [0.0024, 0.756, 0.2405, 0.0011], atol=5e-5)


@pytest.mark.slow
@pytest.mark.equation("eq-primal-dual")
def test_the_library_run_of_the_chapter_matches_the_hand_loop(bandit_run):
    _, nus, costs = bandit_run

    def oracle(theta):
        return (
            bandit_objective_by_hand(theta, Q),
            bandit_gradient_by_hand(theta, Q),
            bandit_objective_by_hand(theta, C),
            bandit_gradient_by_hand(theta, C),
        )

    run = constrained.primal_dual(oracle, np.zeros(4), 0.0, BUDGET, 1.0, 10.0, num_steps=6000)
    np.testing.assert_allclose(run.multipliers, nus, atol=1e-8)
    np.testing.assert_allclose(run.cost_values, costs, atol=1e-10)


# ---------------------------------------------------------------------------------------------
# The two-step task
# ---------------------------------------------------------------------------------------------

CHAPTER = Path(__file__).resolve().parents[3] / "chapters" / "11_constrained_rl.md"
TRANSITION, REWARD, COST, TERMINAL, INITIAL = two_step_task()
INCIDENT_INDICATOR = np.zeros(TRANSITION.shape)
INCIDENT_INDICATOR[:, :, INCIDENT] = 1.0


def policy_of(a_triage, a_fix):
    policy = np.full((5, 3), 1 / 3)
    policy[TRIAGE], policy[FIX] = np.eye(3)[a_triage], np.eye(3)[a_fix]
    return policy


def values(policy):
    """(J_R, J_C, P(incident)) by linear solves."""
    return tuple(
        expected_total(TRANSITION, r, policy, INITIAL, 1.0, TERMINAL)
        for r in (REWARD, COST, INCIDENT_INDICATOR)
    )


def test_the_table_of_deterministic_policies():
    expected = {
        (0, 0): (0.55, 0.0, 0.0),
        (0, 1): (0.70, 1.0, 0.0),
        (0, 2): (0.83, 1.5, 0.05),
        (1, 0): (0.63, 1.0, 0.0),
        (1, 1): (0.78, 2.0, 0.0),
        (1, 2): (0.91, 2.5, 0.05),
        (2, 0): (0.8075, 1.5, 0.05),
        (2, 1): (0.86, 1.85, 0.05),
        (2, 2): (0.9055, 2.025, 0.0675),
    }
    for (a, b), row in expected.items():
        np.testing.assert_allclose(values(policy_of(a, b)), row, atol=1e-12)
    best = max(expected, key=lambda key: expected[key][0])
    assert best == (1, 2)  # read the logs and force-push: 0.91, cost 2.5, 5% incidents


def in_hull_of_others(points, i):
    """Whether point i is a convex combination of the other points (a feasibility LP)."""
    from scipy.optimize import linprog

    others = np.delete(points, i, axis=0)
    rows = np.vstack([others.T, np.ones(len(others))])
    result = linprog(
        np.zeros(len(others)), A_eq=rows, b_eq=[*points[i], 1.0], bounds=(0, None), method="highs"
    )
    return result.status == 0


def test_not_every_deterministic_policy_is_a_vertex_of_the_achievable_set():
    # Erratum: the chapter said the nine points are the vertices of the achievable set; three of
    # them lie inside it.
    keys = list(itertools.product(range(3), range(3)))
    points = np.array([values(policy_of(a, b))[1::-1] for a, b in keys])  # (J_C, J_R)
    inside = [key for i, key in enumerate(keys) if in_hull_of_others(points, i)]
    assert inside == [(0, 1), (2, 0), (2, 1)]  # sandbox + merge, hot-patch + PR or + merge
    text = " ".join(CHAPTER.read_text(encoding="utf-8").split())
    assert "points are the vertices of the set of achievable pairs" not in text
    assert "the cell finds six vertices, and the other three policies lie inside the set" in text


@pytest.fixture(scope="module")
def linear_program():
    return occupancy_lp_by_hand(TRANSITION, REWARD, [COST], [0.5], INITIAL, 1.0, TERMINAL)


@pytest.mark.slow
def test_the_constrained_optimum_of_the_two_step_task(linear_program):
    value, occupancy, duals = linear_program
    assert value == pytest.approx(0.64333, abs=5e-6)
    assert duals[0] == pytest.approx(0.28 / 1.5, abs=1e-9)  # 0.1867 per unit of cost
    policy = occupancy / occupancy.sum(axis=1, keepdims=True).clip(min=1e-300)
    np.testing.assert_allclose(policy[TRIAGE], [1.0, 0.0, 0.0], atol=1e-9)
    np.testing.assert_allclose(policy[FIX], [2 / 3, 0.0, 1 / 3], atol=1e-9)
    points = [values(p)[:2] for p in deterministic_policies(5, 3, TERMINAL)]
    assert best_mixture_of_two(points, 0.5) == pytest.approx(value, abs=1e-12)
    full = np.vstack([policy[:2], np.full((3, 3), 1 / 3)])
    assert values(full)[2] == pytest.approx(1 / 60, abs=1e-12)


@pytest.mark.slow
def test_the_optimum_randomizes_in_exactly_one_state(linear_program):
    _, occupancy, _ = linear_program
    mixed = [(occupancy[s] > 1e-9).sum() > 1 for s in (TRIAGE, FIX)]
    assert mixed == [False, True]


def exact_objective(logits, rewards):
    return softmax_objective_and_gradient(logits, TRANSITION, rewards, INITIAL, 1.0, TERMINAL)


@pytest.fixture(scope="module")
def agent_runs():
    """The chapter's two runs, 8001 iterates each, with a hand-written exact oracle."""

    def oracle(logits):
        return (*exact_objective(logits, REWARD), *exact_objective(logits, COST))

    runs = {}
    for order in ("multiplier_first", "simultaneous"):
        theta, nu = np.zeros((5, 3)), 0.0
        thetas, nus, rewards, costs = [], [], [], []
        for _ in range(8001):
            j_r, g_r, j_c, g_c = oracle(theta)
            thetas.append(theta)
            nus.append(nu)
            rewards.append(j_r)
            costs.append(j_c)
            new_nu = max(0.0, nu + (j_c - 0.5))
            used = new_nu if order == "multiplier_first" else nu
            theta, nu = theta + (g_r - used * g_c), new_nu
        runs[order] = tuple(np.array(x) for x in (thetas, nus, rewards, costs))
    return runs


@pytest.mark.slow
def test_the_trainers_order_converges_on_average(agent_runs, linear_program):
    value, occupancy, duals = linear_program
    thetas, nus, rewards, costs = agent_runs["multiplier_first"]
    tail = slice(4000, None)
    averaged = np.mean(
        [
            occupancy_by_hand(TRANSITION, softmax_rows(t), INITIAL, 1.0, TERMINAL)
            for t in thetas[tail]
        ],
        axis=0,
    )
    assert np.abs(averaged - occupancy).max() == pytest.approx(0.0057, abs=5e-5)
    assert rewards[tail].mean() == pytest.approx(0.6430, abs=5e-5)
    assert abs(rewards[tail].mean() - value) < 1e-3  # "match the optimum to three decimals"
    assert costs[tail].mean() == pytest.approx(0.4999, abs=5e-5)
    assert nus[tail].mean() == pytest.approx(0.1846, abs=5e-5) and duals[0] > nus[tail].mean()
    assert costs[tail].min() == pytest.approx(0.418, abs=5e-4)
    assert costs[tail].max() == pytest.approx(0.592, abs=5e-4)
    assert np.mean(nus[tail] == 0.0) == pytest.approx(0.04, abs=0.005)


@pytest.mark.slow
def test_the_simultaneous_order_stays_below_the_budget(agent_runs):
    _, nus, rewards, costs = agent_runs["simultaneous"]
    tail = slice(4000, None)
    assert rewards[tail].mean() == pytest.approx(0.6337, abs=5e-5)
    assert costs[tail].mean() == pytest.approx(0.4502, abs=5e-5)
    assert np.mean(nus[tail] == 0.0) == pytest.approx(0.46, abs=0.005)
    assert costs[tail].min() == pytest.approx(0.292, abs=5e-4)
    assert costs[tail].max() == pytest.approx(0.638, abs=5e-4)


# ---------------------------------------------------------------------------------------------
# The tail of the episode cost
# ---------------------------------------------------------------------------------------------


def lp_policy(budget, allowed=None):
    _, occupancy, _ = occupancy_lp_by_hand(
        TRANSITION, REWARD, [COST], [budget], INITIAL, 1.0, TERMINAL, allowed=allowed
    )
    visits = occupancy.sum(axis=1, keepdims=True)
    return np.where(visits > 1e-12, occupancy / np.where(visits > 0, visits, 1.0), 1 / 3)


def test_the_cost_distributions_printed_by_the_chapter():
    unconstrained = episode_distribution_by_hand(
        TRANSITION, COST, policy_of(1, 2), INITIAL, TERMINAL
    )
    assert unconstrained == pytest.approx({2.0: 0.95, 12.0: 0.05})
    constrained_dist = episode_distribution_by_hand(
        TRANSITION, COST, lp_policy(0.5), INITIAL, TERMINAL
    )
    assert constrained_dist == pytest.approx({0.0: 2 / 3, 1.0: 0.95 / 3, 11.0: 0.05 / 3})
    assert sum(c * p for c, p in constrained_dist.items()) == pytest.approx(0.5)


@pytest.mark.parametrize("budget", [0.1, 0.5, 1.0, 1.5])
def test_one_incident_per_30_units_of_budget_up_to_1_5(budget):
    assert values(lp_policy(budget))[2] == pytest.approx(budget / 30, abs=1e-9)


def test_the_incident_rate_is_not_monotone_in_the_budget():
    """fig-cost-tail: it peaks at 6.75% at C_max = 2.025, then falls to 5% at 2.5."""
    assert values(lp_policy(2.025))[2] == pytest.approx(0.0675, abs=1e-9)
    assert values(lp_policy(2.5))[2] == pytest.approx(0.05, abs=1e-9)
    grid = np.linspace(0.0, 2.5, 51)
    rates = [values(lp_policy(b))[2] for b in grid]
    assert max(rates) <= 0.0675 + 1e-9 and grid[int(np.argmax(rates))] in (2.0, 2.05)


# ---------------------------------------------------------------------------------------------
# Lexicographic choice and the filter
# ---------------------------------------------------------------------------------------------


def lexicographic(costs, utilities, tolerance=0.0):
    admissible = [i for i in range(len(costs)) if costs[i] <= min(costs) + tolerance]
    return max(admissible, key=lambda i: utilities[i])


def test_lexicographic_choice_on_the_bandit_ignores_the_scale():
    for scale in (1.0, 10.0):
        assert ACTIONS[lexicographic(C, scale * Q)] == "test"
        assert ACTIONS[lexicographic(C, scale * Q, 0.05)] == "direct"


def test_incidents_first_takes_both_shortcuts():
    table = {(a, b): values(policy_of(a, b)) for a, b in itertools.product(range(3), range(3))}
    keys = list(table)
    choice = keys[lexicographic([table[k][2] for k in keys], [table[k][0] for k in keys])]
    assert choice == (1, 1)  # read the logs, merge without review
    np.testing.assert_allclose(table[choice], (0.78, 2.0, 0.0), atol=1e-12)


def test_the_filter_costs_0_018_and_removes_every_incident():
    allowed = TRANSITION[:, :, INCIDENT] == 0.0
    filtered = lp_policy(0.5, allowed)
    np.testing.assert_allclose(filtered[FIX], [0.5, 0.5, 0.0], atol=1e-9)
    j_r, j_c, p = values(filtered)
    assert (j_r, j_c, p) == pytest.approx((0.625, 0.5, 0.0), abs=1e-9)
    loss = values(lp_policy(0.5))[0] - j_r
    assert loss == pytest.approx(0.0183, abs=5e-5) and loss / values(lp_policy(0.5))[0] < 0.03
    distribution = episode_distribution_by_hand(TRANSITION, COST, filtered, INITIAL, TERMINAL)
    assert max(distribution) == 1.0  # no episode costs 10 or more


def test_the_weighted_sums_of_the_comparison_table():
    table = {(a, b): values(policy_of(a, b)) for a, b in itertools.product(range(3), range(3))}
    for w, expected in [(0.1, (2, 2)), (0.5, (0, 0))]:
        assert max(table, key=lambda k, w=w: table[k][0] - w * table[k][1]) == expected
    np.testing.assert_allclose(table[(2, 2)], (0.9055, 2.025, 0.0675), atol=1e-12)


def test_force_pushing_earns_0_187_per_unit_of_cost():
    gain = values(policy_of(0, 2))[0] - values(policy_of(0, 0))[0]
    assert gain == pytest.approx(0.28) and gain / 1.5 == pytest.approx(0.18667, abs=5e-6)


# ---------------------------------------------------------------------------------------------
# Check for understanding
# ---------------------------------------------------------------------------------------------


def test_the_check_for_understanding():
    assert best_mixture_of_two(bandit_points(), 0.1) == pytest.approx(0.846875)
    m = (0.1 - 0.04) / (0.20 - 0.04)
    assert m == pytest.approx(0.375)
    assert (Q[3] - Q[2]) / (C[3] - C[2]) == pytest.approx(0.78125)


def test_the_hand_written_oracle_of_the_runs_matches_central_differences():
    logits = np.random.default_rng(5).normal(size=(5, 3))
    for rewards in (REWARD, COST):
        value, gradient = exact_objective(logits, rewards)
        assert value == pytest.approx(values_of_logits(logits, rewards), abs=1e-12)
        numeric = central_differences(lambda t, r=rewards: values_of_logits(t, r), logits)
        np.testing.assert_allclose(gradient, numeric, atol=1e-8)


def values_of_logits(logits, rewards):
    return expected_total(TRANSITION, rewards, softmax_rows(logits), INITIAL, 1.0, TERMINAL)
