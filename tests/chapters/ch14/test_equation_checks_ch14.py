"""Labeled equations of chapter 14 that no other test computes, checked on concrete numbers
(the rule: tests/chapters/test_equations.py)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from tests.chapters._surrogates import (
    random_problem,
    state_action_power_series,
)
from tests.oracles import (
    central_differences,
    linear_solve_values,
    random_mdp,
    softmax_rows,
)


@pytest.mark.equation("eq-epoch-mismatch")
def test_ppo_s_update_is_the_gradient_of_the_clipped_surrogate_of_the_old_batch():
    old_logits, old, d_old, a_old, objective = random_problem(3)
    low, high = 0.2, 0.2

    def clipped_objective(logits):
        ratio = softmax_rows(logits) / old
        clipped = np.clip(ratio, 1 - low, 1 + high)
        per_action = np.minimum(ratio * a_old, clipped * a_old)
        return float(d_old @ (old * per_action).sum(axis=1))

    def ppo_update(logits):
        """eq-epoch-mismatch term by term: ∂ℓ/∂log π is ρA inside the clip, 0 outside."""
        new = softmax_rows(logits)
        ratio = new / old
        update = np.zeros_like(logits)
        for s, a in itertools.product(range(len(old)), range(old.shape[1])):
            inside = ratio[s, a] < 1 + high if a_old[s, a] > 0 else ratio[s, a] > 1 - low
            weight = ratio[s, a] * a_old[s, a] if inside else 0.0
            update[s] += d_old[s] * old[s, a] * weight * (np.eye(old.shape[1])[a] - new[s])
        return update

    for step in (0.0, 0.15, 0.6):  # on-policy, a little off, far off (some terms clipped)
        logits = old_logits + step * np.random.default_rng(4).normal(size=old_logits.shape)
        np.testing.assert_allclose(
            ppo_update(logits), central_differences(clipped_objective, logits), atol=1e-7
        )
    gradient = central_differences(objective, old_logits)
    np.testing.assert_allclose(ppo_update(old_logits), gradient, atol=1e-7)  # only at θ_old


# ---------------------------------------------------------------------------------------------
# Chapter 14: category errors
# ---------------------------------------------------------------------------------------------


@pytest.mark.equation("eq-sample-baseline-value")
def test_a_sample_baseline_adds_the_value_minus_the_baseline_to_the_advantage():
    rng = np.random.default_rng(19)
    transition, reward, policy, terminal, _ = random_mdp(rng, 4, 2, num_terminal=1)
    gamma, baseline = 0.8, 0.37
    # E[G_t - b | s, a]: the expected discounted reward from (s, a), summed as a power series
    conditional = state_action_power_series(transition, reward, policy, terminal, gamma) - baseline
    # A_π and v_π from a linear solve and a one-step lookahead
    values, _ = linear_solve_values(transition, reward, policy, gamma, terminal)
    q = np.einsum("sap,sap->sa", transition, reward + gamma * values[None, None, :])
    expected = (q - values[:, None]) + (values[:, None] - baseline)
    np.testing.assert_allclose(conditional[~terminal], expected[~terminal], atol=1e-10)


@pytest.mark.equation("eq-privileged-critic-td")
def test_a_privileged_critic_s_td_error_adds_its_errors_given_the_history():
    rng = np.random.default_rng(21)
    # A hidden key (2 values) decides the observation after a0 and the final reward; gamma = 1.
    key_prior, policy0 = rng.dirichlet(np.ones(2)), rng.dirichlet(np.ones(2))
    obs = rng.dirichlet(np.ones(2), size=(2, 2))  # [key, a0] -> o
    policy1 = rng.dirichlet(np.ones(2), size=(2, 2))  # [a0, o] -> a1
    final = rng.normal(size=(2, 2, 2, 2))  # [key, a0, o, a1]
    critic0, critic1 = rng.normal(size=2), rng.normal(size=(2, 2, 2))  # V(h0, key), V(h1, key)

    def key_posterior(a0, o):
        joint = key_prior * obs[:, a0, o]
        return joint / joint.sum()

    def v1(a0, o):
        return sum(key_posterior(a0, o)[k] * policy1[a0, o] @ final[k, a0, o] for k in range(2))

    q0 = np.array(
        [
            sum(key_prior[k] * obs[k, a0, o] * v1(a0, o) for k in range(2) for o in range(2))
            for a0 in range(2)
        ]
    )
    v0 = policy0 @ q0
    for a0 in range(2):
        # E[δ_0 | h_0, a_0] with δ_0 = 0 + V(h̃_1) - V(h̃_0), by enumerating key and o
        mean_td = sum(
            key_prior[k] * obs[k, a0, o] * (critic1[a0, o, k] - critic0[k])
            for k in range(2)
            for o in range(2)
        )
        next_error = sum(
            key_prior[k] * obs[k, a0, o] * (critic1[a0, o, k] - v1(a0, o))
            for k in range(2)
            for o in range(2)
        )
        now_error = key_prior @ (critic0 - v0)
        assert mean_td == pytest.approx((q0[a0] - v0) + next_error - now_error, abs=1e-12)
    for a0, o, a1 in itertools.product(range(2), repeat=3):
        posterior = key_posterior(a0, o)
        mean_td = sum(posterior[k] * (final[k, a0, o, a1] - critic1[a0, o, k]) for k in range(2))
        q1 = posterior @ final[:, a0, o, a1]
        now_error = posterior @ (critic1[a0, o] - v1(a0, o))
        assert mean_td == pytest.approx((q1 - v1(a0, o)) + 0.0 - now_error, abs=1e-12)


@pytest.mark.equation("eq-variance-bias")
def test_the_mean_squared_error_is_squared_bias_plus_total_variance():
    rng = np.random.default_rng(23)
    estimates, probabilities = rng.normal(size=(12, 5)), rng.dirichlet(np.ones(12))
    target = rng.normal(size=5)
    mse = sum(p * np.sum((g - target) ** 2) for p, g in zip(probabilities, estimates, strict=True))
    mean = probabilities @ estimates
    total_variance = sum(
        p * np.sum((g - mean) ** 2) for p, g in zip(probabilities, estimates, strict=True)
    )
    assert mse == pytest.approx(np.sum((mean - target) ** 2) + total_variance, abs=1e-12)
