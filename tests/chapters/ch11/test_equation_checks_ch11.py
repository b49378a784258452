"""Labeled equations of chapter 11 that no other test computes, checked on concrete numbers
(the rule: tests/chapters/test_equations.py)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.optimize import linprog

from tests.oracles import (
    softmax_rows,
)

# ---------------------------------------------------------------------------------------------
# Chapter 11: the averaged iterate and the dual function of the constrained bandit
# ---------------------------------------------------------------------------------------------

BANDIT_REWARD = np.array([0.35, 0.70, 0.85, 0.95])
BANDIT_COST = np.array([0.0, 0.0, 0.04, 0.20])
BANDIT_BUDGET = 0.05


@pytest.mark.equation("eq-averaged-iterate")
def test_the_values_of_the_averaged_policy_are_the_averaged_values():
    rng = np.random.default_rng(17)
    iterates = softmax_rows(rng.normal(size=(25, 4)) * 2)
    average = iterates.mean(axis=0)
    rewards_of_iterates = [
        sum(p * r for p, r in zip(pi, BANDIT_REWARD, strict=True)) for pi in iterates
    ]
    costs_of_iterates = [
        sum(p * c for p, c in zip(pi, BANDIT_COST, strict=True)) for pi in iterates
    ]
    assert average @ BANDIT_REWARD == pytest.approx(np.mean(rewards_of_iterates), abs=1e-14)
    assert average @ BANDIT_COST == pytest.approx(np.mean(costs_of_iterates), abs=1e-14)


@pytest.mark.equation("eq-dual-function")
def test_the_dual_function_is_the_maximized_lagrangian_and_its_minimum_the_optimum():
    def dual(nu):
        return nu * BANDIT_BUDGET + max(BANDIT_REWARD - nu * BANDIT_COST)

    for nu in np.linspace(0.0, 12.0, 25):
        # max over every mixed policy of the Lagrangian, a linear program over the simplex
        lagrangian = linprog(
            -(BANDIT_REWARD - nu * BANDIT_COST), A_eq=np.ones((1, 4)), b_eq=[1.0], bounds=(0, 1)
        )
        assert -lagrangian.fun + nu * BANDIT_BUDGET == pytest.approx(dual(nu), abs=1e-9)
    constrained = linprog(
        -BANDIT_REWARD, A_ub=BANDIT_COST[None], b_ub=[BANDIT_BUDGET], A_eq=np.ones((1, 4)),
        b_eq=[1.0], bounds=(0, 1),
    )  # fmt: skip
    # D is convex and piecewise linear: its minimum over nu >= 0 is at 0 or at a kink.
    kinks = [0.0] + [
        (BANDIT_REWARD[i] - BANDIT_REWARD[j]) / (BANDIT_COST[i] - BANDIT_COST[j])
        for i, j in itertools.combinations(range(4), 2)
        if BANDIT_COST[i] != BANDIT_COST[j]
    ]
    smallest = min(dual(nu) for nu in kinks if nu >= 0)
    assert smallest == pytest.approx(-constrained.fun, abs=1e-9)  # strong duality
    assert all(dual(nu) >= -constrained.fun - 1e-12 for nu in np.linspace(0, 50, 501))
