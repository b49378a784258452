"""Tests of rlfound.constrained against independent computations.

References: explicit loops and sums for the weighted reward, the Pareto front and the
lexicographic choice; central differences (tests.oracles.central_differences) for every
gradient, including the gradients of the two losses a loss-minimizing trainer writes; the
linear program over occupancy measures written out with loops (tests.oracles.
occupancy_lp_by_hand) and brute force over deterministic policies and their mixtures for the
constrained optimum; the chapter's bandit and two-step task for the sign conventions and the
convergence of the averaged primal-dual iterates.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from rlfound import constrained
from tests.oracles import (
    DEPLOY_UTILITY,
    DEPLOY_VIOLATION,
    INCIDENT,
    bandit_gradient_by_hand,
    bandit_objective_by_hand,
    best_mixture_of_two,
    central_differences,
    deterministic_policies,
    expected_total,
    linear_solve_values,
    loss_minimizing_trainer,
    occupancy_by_hand,
    occupancy_lp_by_hand,
    random_mdp,
    softmax_rows,
    two_step_task,
)

finite = st.floats(-10.0, 10.0, allow_nan=False)


def bandit_oracle(action_rewards, action_costs):
    """An oracle for primal_dual from the hand-written bandit objective and gradient."""

    def oracle(logits):
        return (
            bandit_objective_by_hand(logits, action_rewards),
            bandit_gradient_by_hand(logits, action_rewards),
            bandit_objective_by_hand(logits, action_costs),
            bandit_gradient_by_hand(logits, action_costs),
        )

    return oracle


# --- scalarized_reward -------------------------------------------------------------------------


@pytest.mark.equation("eq-scalarized-reward")
def test_scalarized_reward_matches_an_explicit_sum():
    rng = np.random.default_rng(0)
    rewards = rng.normal(size=(4, 5))
    costs = rng.normal(size=(4, 5, 3))
    weights = np.array([0.5, 2.0, 0.1])
    expected = np.zeros((4, 5))
    for i, j in itertools.product(range(4), range(5)):
        expected[i, j] = 1.5 * rewards[i, j] - sum(weights[k] * costs[i, j, k] for k in range(3))
    got = constrained.scalarized_reward(rewards, costs, weights, reward_weight=1.5)
    np.testing.assert_allclose(got, expected, atol=1e-12)


def test_scalarized_reward_with_one_cost_equals_a_last_axis_of_one():
    rewards, costs = np.array([1.0, 0.0, 0.5]), np.array([0.2, 0.4, 0.0])
    np.testing.assert_allclose(
        constrained.scalarized_reward(rewards, costs, 3.0),
        constrained.scalarized_reward(rewards, costs[:, None], [3.0]),
        atol=1e-15,
    )


def test_scalarized_reward_of_the_chapter_example():
    # success 1, time 0.3 at weight 0.5, a violation at weight 2: 1 - 0.15 - 2 = -1.15
    assert constrained.scalarized_reward(1.0, [0.3, 1.0], [0.5, 2.0]) == pytest.approx(-1.15)
    assert type(constrained.scalarized_reward(1.0, 0.3, 0.5)) is float


def test_scalarized_reward_refuses_a_negative_cost_weight():
    with pytest.raises(ValueError, match=r"^cost_weights must be non-negative"):
        constrained.scalarized_reward([1.0], [[0.1, 0.2]], [0.5, -1.0])


# --- pareto_mask -------------------------------------------------------------------------------


def pareto_by_loops(points):
    points = np.asarray(points)
    keep = []
    for i in range(len(points)):
        dominated = any(
            all(points[j] >= points[i]) and any(points[j] > points[i])
            for j in range(len(points))
            if j != i
        )
        keep.append(not dominated)
    return np.array(keep)


@pytest.mark.equation("eq-pareto")
@pytest.mark.parametrize("seed", range(5))
def test_pareto_mask_matches_a_double_loop(seed):
    rng = np.random.default_rng(seed)
    points = rng.integers(0, 4, size=(12, 3)).astype(float)  # many ties on purpose
    np.testing.assert_array_equal(constrained.pareto_mask(points), pareto_by_loops(points))


def test_pareto_mask_of_the_deployment_bandit():
    objectives = np.stack([DEPLOY_UTILITY, -np.asarray(DEPLOY_VIOLATION)], axis=-1)
    np.testing.assert_array_equal(constrained.pareto_mask(objectives), [False, True, True, True])


def test_pareto_mask_keeps_both_of_two_equal_points():
    np.testing.assert_array_equal(
        constrained.pareto_mask([[1.0, 2.0], [1.0, 2.0], [0.0, 1.0]]), [True, True, False]
    )


@settings(max_examples=60, deadline=None)
@given(
    hnp.arrays(
        np.float64, st.tuples(st.integers(1, 8), st.integers(1, 3)), elements=st.integers(-5, 5)
    )
)
def test_pareto_mask_is_invariant_to_increasing_transforms_of_each_objective(points):
    transformed = np.exp(points / 3.0) * 3.0 + 1.0  # strictly increasing, exact on integers
    np.testing.assert_array_equal(
        constrained.pareto_mask(points), constrained.pareto_mask(transformed)
    )


@settings(max_examples=60, deadline=None)
@given(hnp.arrays(np.float64, st.tuples(st.integers(1, 8), st.integers(1, 3)), elements=finite))
def test_the_best_point_of_every_objective_is_pareto_optimal_up_to_ties(points):
    mask = constrained.pareto_mask(points)
    assert mask.any()
    for k in range(points.shape[1]):  # some point with the largest value of objective k survives
        assert (points[mask, k] == points[:, k].max()).any()


# --- the Lagrangian and its gradients ----------------------------------------------------------


def test_lagrangian_by_hand():
    assert constrained.lagrangian(0.8, 0.04, 2.0, 0.01) == pytest.approx(0.8 - 2.0 * 0.03)
    assert constrained.lagrangian(1.0, [0.5, 0.2], [2.0, 3.0], [0.4, 0.3]) == pytest.approx(
        1.0 - 2.0 * 0.1 - 3.0 * (-0.1)
    )


@settings(max_examples=60, deadline=None)
@given(
    reward=finite,
    slack=st.floats(0.0, 5.0),
    multiplier=st.floats(0.0, 50.0),
    budget=finite,
)
def test_lagrangian_bounds_the_reward_of_a_feasible_policy_from_above(
    reward, slack, multiplier, budget
):
    """Weak duality, point by point: J_C <= C_max and nu >= 0 give L >= J_R."""
    assert constrained.lagrangian(reward, budget - slack, multiplier, budget) >= reward - 1e-12


@pytest.mark.equation("eq-lagrangian-gradients")
@pytest.mark.parametrize("num_constraints", [None, 1, 3])
def test_lagrangian_gradients_match_central_differences(num_constraints):
    rng = np.random.default_rng(num_constraints or 0)
    q = rng.normal(size=5)
    costs = rng.uniform(size=(num_constraints or 1, 5))
    multiplier = rng.uniform(0, 3, size=num_constraints) if num_constraints else 1.7
    budget = rng.uniform(size=num_constraints) if num_constraints else 0.4
    logits = rng.normal(size=5)

    def objectives(theta):
        cost_values = np.array([bandit_objective_by_hand(theta, c) for c in costs])
        return bandit_objective_by_hand(theta, q), (
            cost_values if num_constraints else float(cost_values[0])
        )

    def lagrangian_at(theta):
        reward_value, cost_value = objectives(theta)
        return constrained.lagrangian(reward_value, cost_value, multiplier, budget)

    cost_gradient = np.array([bandit_gradient_by_hand(logits, c) for c in costs])
    grad_theta, grad_nu = constrained.lagrangian_gradients(
        bandit_gradient_by_hand(logits, q),
        cost_gradient if num_constraints else cost_gradient[0],
        objectives(logits)[1],
        multiplier,
        budget,
    )
    np.testing.assert_allclose(grad_theta, central_differences(lagrangian_at, logits), atol=1e-8)
    # dL/dnu by central differences in nu, at the current policy
    nu = np.atleast_1d(np.asarray(multiplier, dtype=float))
    reward_value, cost_value = objectives(logits)

    def in_nu(n):
        return constrained.lagrangian(
            reward_value, cost_value, n if num_constraints else float(n[0]), budget
        )

    numeric = central_differences(in_nu, nu + 1.0)  # + 1 keeps every nu - eps >= 0
    np.testing.assert_allclose(np.atleast_1d(grad_nu), numeric, atol=1e-8)
    assert (type(grad_nu) is float) == (num_constraints is None)


# --- multiplier_update -------------------------------------------------------------------------


@settings(max_examples=100, deadline=None)
@given(
    multiplier=st.floats(0.0, 20.0),
    cost=st.floats(0.0, 5.0),
    budget=st.floats(0.0, 5.0),
    lr=st.floats(0.0, 10.0),
)
def test_projected_update_is_the_clipped_descent_step_and_never_negative(
    multiplier, cost, budget, lr
):
    new = constrained.multiplier_update(multiplier, cost, budget, lr)
    assert new >= 0.0
    assert new == pytest.approx(max(0.0, multiplier + lr * (cost - budget)), abs=1e-12)
    if cost > budget:  # a violated constraint never lowers the multiplier
        assert new >= multiplier
    if cost < budget:  # a slack one never raises it
        assert new <= multiplier


@pytest.mark.parametrize("seed", range(3))
def test_log_update_is_sgd_on_the_multiplier_loss_in_log_space(seed):
    """Safe RLHF's form: SGD on log nu of l(log nu) = -exp(log nu) (J_C - C_max)."""
    rng = np.random.default_rng(seed)
    multiplier, cost, budget, lr = rng.uniform(0.1, 3.0), rng.uniform(), rng.uniform(), 0.7
    loss = lambda u: -np.exp(u[0]) * (cost - budget)  # noqa: E731
    log_nu = np.log(multiplier) - lr * central_differences(loss, [np.log(multiplier)])[0]
    got = constrained.multiplier_update(multiplier, cost, budget, lr, "log")
    assert got == pytest.approx(np.exp(log_nu), rel=1e-8)


def test_log_update_refuses_a_zero_multiplier():
    with pytest.raises(ValueError, match=r"^multiplier must be positive \(the log"):
        constrained.multiplier_update(0.0, 0.5, 0.1, 1.0, "log")


def test_a_zero_step_size_freezes_the_multiplier():
    assert constrained.multiplier_update([1.5, 0.0], [9.0, 9.0], [0.0, 0.0], 0.0).tolist() == [
        1.5,
        0.0,
    ]


# --- primal_dual_step: the loss-minimizing trainer -----------------------------------------------


@pytest.mark.equation("eq-loss-signs")
@pytest.mark.parametrize("order", ["multiplier_first", "simultaneous"])
@pytest.mark.parametrize("normalize", [False, True])
def test_a_step_is_gradient_descent_on_the_two_losses_of_a_trainer(order, normalize):
    """eq-loss-signs: theta descends l_policy = -J_R + nu (J_C - C_max) (nu fixed), and nu
    descends l_mult = -nu (J_C - C_max) (J_C fixed), then is projected; both gradients by
    central differences."""
    q, c = np.array([0.3, 0.55, 0.8, 0.925]), np.array([0.0, 0.0, 0.04, 0.2])
    logits, nu, budget, lr, multiplier_lr = np.array([0.1, -0.4, 0.3, 0.2]), 2.0, 0.01, 0.5, 3.0
    cost_value = bandit_objective_by_hand(logits, c)

    def multiplier_loss(n):
        return -n[0] * (cost_value - budget)

    nu_new = max(0.0, nu - multiplier_lr * central_differences(multiplier_loss, [nu])[0])
    nu_used = nu_new if order == "multiplier_first" else nu

    def policy_loss(theta):
        return -bandit_objective_by_hand(theta, q) + nu_used * (
            bandit_objective_by_hand(theta, c) - budget
        )

    scale = 1.0 + nu_used if normalize else 1.0
    theta_new = logits - lr * central_differences(policy_loss, logits) / scale
    got_theta, got_nu = constrained.primal_dual_step(
        logits, nu, bandit_gradient_by_hand(logits, q), bandit_gradient_by_hand(logits, c),
        cost_value, budget, lr, multiplier_lr, order=order, normalize=normalize,
    )  # fmt: skip
    np.testing.assert_allclose(got_theta, theta_new, atol=1e-9)
    assert got_nu == pytest.approx(nu_new, abs=1e-9)


def test_the_correct_signs_meet_the_budget_on_average():
    _, costs = loss_minimizing_trainer(1.0, 1.0)
    assert costs[-1000:].mean() == pytest.approx(0.01, abs=0.002)


def test_a_flipped_multiplier_loss_violates_the_constraint():
    nus, costs = loss_minimizing_trainer(1.0, -1.0)
    assert np.all(nus[-1000:] == 0.0)
    assert costs[-1000:].mean() > 0.19  # the unconstrained optimum: override, 20 x the budget


def test_a_flipped_penalty_in_the_policy_loss_diverges():
    nus, costs = loss_minimizing_trainer(-1.0, 1.0)
    growth = np.diff(nus[-1000:])
    assert np.all(growth > 1.8) and nus[-1] > 5000  # unbounded: + 10 (0.2 - 0.01) per step
    assert costs[-1] > 0.199


def test_the_library_step_reproduces_the_trainer_loop():
    oracle = bandit_oracle(DEPLOY_UTILITY, DEPLOY_VIOLATION)
    history = constrained.primal_dual(oracle, np.zeros(4), 0.0, 0.01, 1.0, 10.0, num_steps=500)
    nus, costs = loss_minimizing_trainer(1.0, 1.0, num_steps=500)
    np.testing.assert_allclose(history.multipliers[1:], nus, atol=1e-9)
    np.testing.assert_allclose(history.cost_values[:-1], costs, atol=1e-12)


# --- primal_dual -------------------------------------------------------------------------------


@pytest.mark.equation("eq-primal-dual")
def test_primal_dual_history_is_the_sequence_of_steps():
    rng = np.random.default_rng(4)
    q, c = rng.normal(size=(2, 3)), rng.uniform(size=(2, 3))
    oracle = bandit_oracle(q[0], c[0])
    history = constrained.primal_dual(
        oracle, [0.2, 0.0, -0.1], 0.5, 0.3, 0.7, 2.0, num_steps=6, order="simultaneous",
        normalize=True,
    )  # fmt: skip
    theta, nu = np.array([0.2, 0.0, -0.1]), 0.5
    for k in range(7):
        np.testing.assert_allclose(history.params[k], theta, atol=1e-12)
        assert history.multipliers[k] == pytest.approx(nu)
        j_r, g_r, j_c, g_c = oracle(theta)
        assert history.reward_values[k] == pytest.approx(j_r)
        assert history.cost_values[k] == pytest.approx(j_c)
        theta, nu = (  # simultaneous, normalized: both from (theta_k, nu_k)
            theta + 0.7 * (g_r - nu * g_c) / (1.0 + nu),
            max(0.0, nu + 2.0 * (j_c - 0.3)),
        )


def test_primal_dual_with_zero_steps_returns_the_start():
    history = constrained.primal_dual(
        bandit_oracle([0.0, 1.0], [0.0, 1.0]), [0.0, 0.0], 0.0, 0.5, 1.0, 1.0, 0
    )
    assert history.params.shape == (1, 2) and history.multipliers.shape == (1,)
    assert history.cost_values.tolist() == [0.5]


@pytest.mark.slow
def test_primal_dual_handles_two_constraints():
    q = np.array([0.0, 1.0, 2.0])
    costs = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])

    def oracle(theta):
        return (
            bandit_objective_by_hand(theta, q),
            bandit_gradient_by_hand(theta, q),
            np.array([bandit_objective_by_hand(theta, c) for c in costs]),
            np.array([bandit_gradient_by_hand(theta, c) for c in costs]),
        )

    history = constrained.primal_dual(oracle, np.zeros(3), [0.0, 0.0], [0.3, 0.2], 1.0, 2.0, 4000)
    average = history.cost_values[2000:].mean(axis=0)
    np.testing.assert_allclose(average, [0.3, 0.2], atol=0.01)  # both budgets active at q's
    assert history.multipliers.shape == (4001, 2)


def test_primal_dual_names_the_oracle_when_it_returns_garbage():
    with pytest.raises(ValueError, match=r"^oracle must return a tuple"):
        constrained.primal_dual(lambda t: 1.0, [0.0], 0.0, 0.1, 1.0, 1.0, 2)
    bad_shape = (0.0, [1.0, 2.0], 0.0, [1.0, 2.0])  # gradients of shape (2,) for params (1,)
    with pytest.raises(ValueError, match=r"^oracle must return valid values; got reward_gradient"):
        constrained.primal_dual(lambda t: bad_shape, [0.0], 0.0, 0.1, 1.0, 1.0, 2)


@pytest.mark.slow
def test_primal_dual_converges_on_average_to_the_linear_program_on_the_two_step_task():
    """The chapter's claim: the tail-averaged occupancy measure of the trainers' order
    approaches the optimum of the occupancy LP written here with loops. The oracle is the
    library's exact value and gradient (tested above against a linear solve and central
    differences); the occupancies are recomputed by hand."""
    transition, reward, cost, terminal, initial = two_step_task()
    value, optimum, duals = occupancy_lp_by_hand(
        transition, reward, [cost], [0.5], initial, 1.0, terminal
    )

    def oracle(logits):
        j_r, g_r = constrained.value_and_gradient(
            logits, transition, reward, initial, 1.0, terminal
        )
        j_c, g_c = constrained.value_and_gradient(logits, transition, cost, initial, 1.0, terminal)
        return j_r, g_r, j_c, g_c

    history = constrained.primal_dual(oracle, np.zeros((5, 3)), 0.0, 0.5, 1.0, 1.0, 8000)
    tail = slice(4000, None)
    averaged = np.mean(
        [
            occupancy_by_hand(transition, softmax_rows(th), initial, 1.0, terminal)
            for th in history.params[tail]
        ],
        axis=0,
    )
    assert np.abs(averaged - optimum).max() < 0.01
    assert history.reward_values[tail].mean() == pytest.approx(value, abs=1e-3)
    assert history.cost_values[tail].mean() == pytest.approx(0.5, abs=1e-3)
    assert history.multipliers[tail].mean() == pytest.approx(duals[0], abs=0.005)
    # ... while the last iterate keeps cycling around the budget
    assert history.cost_values[tail].min() < 0.45 and history.cost_values[tail].max() > 0.55


# --- value_and_gradient ------------------------------------------------------------------------


@pytest.mark.equation("eq-cmdp-gradient")
@pytest.mark.parametrize("seed", range(3))
def test_value_and_gradient_match_a_linear_solve_and_central_differences(seed):
    rng = np.random.default_rng(seed)
    transition, reward, _, terminal, initial = random_mdp(rng, 5, 3, num_terminal=2)
    logits = rng.normal(size=(5, 3))
    gamma = 0.9 if seed else 1.0

    def j(theta):
        return expected_total(transition, reward, softmax_rows(theta), initial, gamma, terminal)

    value, gradient = constrained.value_and_gradient(
        logits, transition, reward, initial, gamma, terminal
    )
    assert value == pytest.approx(j(logits), abs=1e-12)
    np.testing.assert_allclose(gradient, central_differences(j, logits), atol=1e-7)
    assert np.all(gradient[terminal] == 0.0)


# --- occupancy_lp ------------------------------------------------------------------------------


def tiny_problem(seed, num_states=4, num_actions=2):
    rng = np.random.default_rng(seed)
    transition, reward, _, terminal, initial = random_mdp(rng, num_states, num_actions, 1)
    cost = rng.uniform(size=reward.shape)
    return transition, reward, cost, terminal, initial


def budget_between(transition, cost, terminal, initial, gamma, fraction):
    """A budget a fraction of the way from the cheapest deterministic policy's expected cost
    to the costliest's (the cheapest is the smallest achievable expected cost)."""
    num_states, num_actions, _ = transition.shape
    costs = [
        expected_total(transition, cost, policy, initial, gamma, terminal)
        for policy in deterministic_policies(num_states, num_actions, terminal)
    ]
    return min(costs) + fraction * (max(costs) - min(costs))


@pytest.mark.equation("eq-occupancy-lp")
@pytest.mark.parametrize("seed", range(6))
def test_occupancy_lp_matches_brute_force_over_deterministic_policies(seed):
    transition, reward, cost, terminal, initial = tiny_problem(seed)
    gamma = 0.8
    points = [
        (
            expected_total(transition, reward, policy, initial, gamma, terminal),
            expected_total(transition, cost, policy, initial, gamma, terminal),
        )
        for policy in deterministic_policies(4, 2, terminal)
    ]
    costs = sorted(c for _, c in points)
    budget = 0.5 * (costs[0] + costs[-1])  # between the cheapest and the costliest
    solution = constrained.occupancy_lp(transition, reward, cost, initial, gamma, budget, terminal)
    assert solution.reward_value == pytest.approx(best_mixture_of_two(points, budget), abs=1e-9)
    # the returned policy achieves the reported values
    assert expected_total(
        transition, reward, solution.policy, initial, gamma, terminal
    ) == pytest.approx(solution.reward_value, abs=1e-9)
    assert solution.cost_value <= budget + 1e-9


@pytest.mark.equation("eq-occupancy-lp")
@pytest.mark.parametrize("seed", range(4))
def test_occupancy_lp_matches_a_hand_written_program_with_two_constraints(seed):
    transition, reward, cost, terminal, initial = tiny_problem(seed, 5, 3)
    second = np.random.default_rng(100 + seed).uniform(size=cost.shape)
    costs = np.stack([cost, second])
    budgets = [budget_between(transition, c, terminal, initial, 0.9, 0.6) for c in costs]
    value, occupancy, duals = occupancy_lp_by_hand(
        transition, reward, list(costs), budgets, initial, 0.9, terminal
    )
    solution = constrained.occupancy_lp(transition, reward, costs, initial, 0.9, budgets, terminal)
    assert solution.reward_value == pytest.approx(value, abs=1e-9)
    np.testing.assert_allclose(solution.occupancy, occupancy, atol=1e-7)
    np.testing.assert_allclose(solution.multiplier, duals, atol=1e-7)
    assert solution.multiplier.shape == (2,) and np.all(solution.multiplier >= 0)


@pytest.mark.parametrize("seed", range(4))
def test_occupancy_lp_policy_has_the_optimal_occupancy(seed):
    transition, reward, cost, terminal, initial = tiny_problem(seed, 5, 3)
    budget = budget_between(transition, cost, terminal, initial, 0.9, 0.3)
    solution = constrained.occupancy_lp(transition, reward, cost, initial, 0.9, budget, terminal)
    np.testing.assert_allclose(
        occupancy_by_hand(transition, solution.policy, initial, 0.9, terminal),
        solution.occupancy,
        atol=1e-8,
    )
    np.testing.assert_allclose(solution.policy.sum(axis=1), 1.0)


@pytest.mark.parametrize("seed", range(4))
def test_occupancy_lp_multiplier_is_the_slope_of_the_optimum_in_the_budget(seed):
    transition, reward, cost, terminal, initial = tiny_problem(seed)
    budget = budget_between(transition, cost, terminal, initial, 0.8, 0.3)

    def optimum(b):
        return constrained.occupancy_lp(
            transition, reward, cost, initial, 0.8, b, terminal
        ).reward_value

    solution = constrained.occupancy_lp(transition, reward, cost, initial, 0.8, budget, terminal)
    slope = (optimum(budget + 1e-6) - optimum(budget - 1e-6)) / 2e-6
    assert solution.multiplier == pytest.approx(slope, abs=1e-5)
    # complementary slackness: a positive multiplier only on an active constraint
    assert solution.multiplier * (budget - solution.cost_value) == pytest.approx(0.0, abs=1e-9)


def test_occupancy_lp_randomizes_in_at_most_one_state_with_one_constraint():
    for seed in range(8):
        transition, reward, cost, terminal, initial = tiny_problem(seed, 6, 3)
        budget = budget_between(transition, cost, terminal, initial, 0.9, 0.4)
        solution = constrained.occupancy_lp(
            transition, reward, cost, initial, 0.9, budget, terminal
        )
        visited = solution.occupancy.sum(axis=1) > 1e-9
        mixed = (solution.policy[visited] > 1e-7).sum(axis=1) > 1
        assert mixed.sum() <= 1, seed


def test_occupancy_lp_on_the_two_step_task():
    transition, reward, cost, terminal, initial = two_step_task()
    solution = constrained.occupancy_lp(transition, reward, cost, initial, 1.0, 0.5, terminal)
    points = [
        (
            expected_total(transition, reward, p, initial, 1.0, terminal),
            expected_total(transition, cost, p, initial, 1.0, terminal),
        )
        for p in deterministic_policies(5, 3, terminal)
    ]
    assert solution.reward_value == pytest.approx(best_mixture_of_two(points, 0.5), abs=1e-12)
    assert solution.reward_value == pytest.approx(0.55 + 0.28 / 1.5 * 0.5, abs=1e-12)
    assert solution.multiplier == pytest.approx(0.28 / 1.5, abs=1e-9)


def test_occupancy_lp_respects_the_allowed_actions():
    transition, reward, cost, terminal, initial = two_step_task()
    allowed = transition[:, :, INCIDENT] == 0.0
    solution = constrained.occupancy_lp(
        transition, reward, cost, initial, 1.0, 0.5, terminal, allowed=allowed.astype(int)
    )
    assert np.all(solution.policy[~terminal][~allowed[~terminal]] == 0.0)
    points = [
        (
            expected_total(transition, reward, p, initial, 1.0, terminal),
            expected_total(transition, cost, p, initial, 1.0, terminal),
        )
        for p in deterministic_policies(5, 3, terminal)
        if np.all(p[~terminal][~allowed[~terminal]] == 0.0)
    ]
    assert solution.reward_value == pytest.approx(best_mixture_of_two(points, 0.5), abs=1e-12)


def test_occupancy_lp_refuses_an_infeasible_budget():
    transition, reward, cost, terminal, initial = tiny_problem(0)
    cost = cost + 1.0  # every action costs at least 1
    with pytest.raises(ValueError, match=r"^budget must be at least the smallest expected cost"):
        constrained.occupancy_lp(transition, reward, cost, initial, 0.9, 0.5, terminal)


def test_occupancy_lp_refuses_an_unbounded_program():
    transition = np.zeros((2, 2, 2))
    transition[0, 0, 0] = 1.0  # action 0 loops forever, paying 1 per step
    transition[0, 1, 1] = 1.0
    reward = np.zeros((2, 2, 2))
    reward[0, 0, 0] = 1.0
    with pytest.raises(ValueError, match=r"^gamma must be < 1 unless"):
        constrained.occupancy_lp(
            transition, reward, np.zeros_like(reward), [1.0, 0.0], 1.0, 1.0, [False, True]
        )


# --- lexicographic_mask ------------------------------------------------------------------------


def lexicographic_by_loops(costs, utilities, tolerance):
    costs, utilities = np.asarray(costs), np.asarray(utilities)
    out = np.zeros(costs.shape, dtype=bool)
    for index in np.ndindex(costs.shape[:-1]):
        row_c, row_u = costs[index], utilities[index]
        admissible = [i for i in range(len(row_c)) if row_c[i] <= min(row_c) + tolerance]
        best = max(row_u[i] for i in admissible)
        for i in admissible:
            out[(*index, i)] = row_u[i] == best
    return out


@pytest.mark.equation("eq-lexicographic")
@pytest.mark.parametrize("tolerance", [0.0, 0.3, 10.0])
def test_lexicographic_mask_matches_loops(tolerance):
    rng = np.random.default_rng(1)
    costs = rng.integers(0, 3, size=(4, 3, 6)) / 2.0
    utilities = rng.integers(0, 4, size=(4, 3, 6)).astype(float)
    np.testing.assert_array_equal(
        constrained.lexicographic_mask(costs, utilities, tolerance),
        lexicographic_by_loops(costs, utilities, tolerance),
    )


def test_lexicographic_choice_on_the_deployment_bandit():
    names = np.array(["escalate", "test", "direct", "override"])
    mask = constrained.lexicographic_mask(DEPLOY_VIOLATION, DEPLOY_UTILITY)
    assert names[mask].tolist() == ["test"]
    mask = constrained.lexicographic_mask(DEPLOY_VIOLATION, DEPLOY_UTILITY, tolerance=0.05)
    assert names[mask].tolist() == ["direct"]


@settings(max_examples=60, deadline=None)
@given(
    hnp.arrays(np.float64, st.integers(1, 7), elements=st.floats(0, 1)),
    st.data(),
)
def test_lexicographic_mask_ignores_the_scale_of_the_utilities(costs, data):
    utilities = data.draw(hnp.arrays(np.float64, costs.shape, elements=st.integers(-5, 5)))
    factor = data.draw(st.floats(0.1, 100.0))
    base = constrained.lexicographic_mask(costs, utilities, 0.1)
    np.testing.assert_array_equal(
        constrained.lexicographic_mask(costs, np.exp(utilities / 3.0) * factor, 0.1), base
    )
    assert base.any() and np.all(costs[base] <= costs.min() + 0.1)


# --- a few values with the chapter's numbers ---------------------------------------------------


def test_value_and_gradient_on_the_two_step_task_at_uniform_logits():
    transition, reward, _, terminal, initial = two_step_task()
    values, _ = linear_solve_values(transition, reward, np.full((5, 3), 1 / 3), 1.0, terminal)
    j, _ = constrained.value_and_gradient(np.zeros((5, 3)), transition, reward, initial, 1.0,
                                          terminal)  # fmt: skip
    assert j == pytest.approx(values[0], abs=1e-12)
