"""Labeled equations of chapter 6 that no other test computes, checked on concrete numbers
(the rule: tests/chapters/test_equations.py)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.optimize import minimize

from rlfound.kl import kl_regularized_optimum
from tests.oracles import (
    central_differences,
    softmax_rows,
)

# ---------------------------------------------------------------------------------------------
# Chapter 6: the regularized optimum, found numerically
# ---------------------------------------------------------------------------------------------


@pytest.mark.equation("eq-dpo-reward")
def test_the_reward_is_beta_times_the_log_ratio_of_the_optimum_plus_beta_log_z():
    rng = np.random.default_rng(6)
    ref, rewards, beta = rng.dirichlet(np.ones(5)), rng.normal(size=5), 0.7

    def negative_objective(logits):
        pi = softmax_rows(logits)
        return -(pi @ rewards - beta * np.sum(pi * np.log(pi / ref)))

    found = softmax_rows(minimize(negative_objective, np.zeros(5), method="BFGS", tol=1e-12).x)
    log_z = math.log(sum(r * math.exp(x / beta) for r, x in zip(ref, rewards, strict=True)))
    np.testing.assert_allclose(beta * np.log(found / ref) + beta * log_z, rewards, atol=1e-5)
    optimum = kl_regularized_optimum(ref, rewards, beta)
    np.testing.assert_allclose(beta * np.log(optimum / ref) + beta * log_z, rewards, atol=1e-12)


def soft_task(seed):
    """Two turns: action a0 (2), observation o (2, drawn given a0), action a1 (3), reward."""
    rng = np.random.default_rng(seed)
    return {
        "ref0": rng.dirichlet(np.ones(2)),
        "ref1": rng.dirichlet(np.ones(3), size=(2, 2)),  # [a0, o]
        "obs": rng.dirichlet(np.ones(2), size=2),  # [a0, o]
        "reward": rng.normal(size=(2, 2, 3)),  # [a0, o, a1]
    }


def regularized_return(task, first, second, beta):
    """E[R] - β Σ_t E[KL(π(· | h_t) || π_ref(· | h_t))], by enumerating every trajectory."""
    total = 0.0
    for a0, o, a1 in itertools.product(range(2), range(2), range(3)):
        p = first[a0] * task["obs"][a0, o] * second[a0, o, a1]
        log_ratio = math.log(first[a0] / task["ref0"][a0])
        log_ratio += math.log(second[a0, o, a1] / task["ref1"][a0, o, a1])
        total += p * (task["reward"][a0, o, a1] - beta * log_ratio)
    return total


@pytest.mark.equation("eq-soft-bellman")
def test_soft_bellman_backward_induction_gives_the_regularized_optimum():
    task, beta = soft_task(8), 0.5
    q1 = task["reward"]  # the last turn's action values
    v1 = beta * np.log(np.sum(task["ref1"] * np.exp(q1 / beta), axis=-1))  # [a0, o]
    q0 = np.sum(task["obs"] * v1, axis=-1)  # E_o[V(h, a0, o)]
    v0 = beta * math.log(task["ref0"] @ np.exp(q0 / beta))
    first = task["ref0"] * np.exp((q0 - v0) / beta)
    second = task["ref1"] * np.exp((q1 - v1[..., None]) / beta)
    assert regularized_return(task, first, second, beta) == pytest.approx(v0, abs=1e-12)

    def objective_of_logits(flat):
        return regularized_return(
            task, softmax_rows(flat[:2]), softmax_rows(flat[2:].reshape(2, 2, 3)), beta
        )

    at_optimum = np.concatenate([np.log(first), np.log(second).ravel()])
    np.testing.assert_allclose(central_differences(objective_of_logits, at_optimum), 0, atol=1e-8)
    rng = np.random.default_rng(9)
    for _ in range(20):
        assert objective_of_logits(at_optimum + rng.normal(size=at_optimum.shape)) < v0
