"""Labeled equations of chapter 7 that no other test computes, checked on concrete numbers
(the rule: tests/chapters/test_equations.py)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from rlfound.groups import group_normalized_advantages, leave_one_out_advantages
from tests.oracles import (
    bandit_gradient_by_hand,
    group_expectation_by_hand,
    softmax_rows,
)

# ---------------------------------------------------------------------------------------------
# Chapter 7: groups
# ---------------------------------------------------------------------------------------------


@pytest.mark.equation("eq-dead-groups")
@pytest.mark.parametrize(("p", "size"), [(0.05, 4), (0.3, 6), (0.5, 8)])
def test_no_signal_exactly_when_every_outcome_of_the_group_is_equal(p, size):
    no_signal = 0.0
    for outcome in itertools.product((0.0, 1.0), repeat=size):
        advantage = group_normalized_advantages(np.array(outcome))
        if np.all(advantage == 0.0):
            no_signal += math.prod(p if r else 1 - p for r in outcome)
    assert no_signal == pytest.approx((1 - p) ** size + p**size, abs=1e-14)


@pytest.mark.equation("eq-difficulty-scale")
@pytest.mark.parametrize("p", [0.1, 0.5, 0.8])
def test_the_length_of_the_expected_update_by_difficulty(p):
    logits, rewards, size = np.log([p, 1 - p]), np.array([1.0, 0.0]), 5

    def rloo(group):
        return np.array([group[i] - np.delete(group, i).mean() for i in range(len(group))])

    def dr_grpo(group):
        return group - group.mean()

    norm_rloo = np.linalg.norm(group_expectation_by_hand(logits, rewards, size, rloo))
    norm_dr = np.linalg.norm(group_expectation_by_hand(logits, rewards, size, dr_grpo))
    assert norm_rloo == pytest.approx(math.sqrt(2) * p * (1 - p), abs=1e-12)
    assert norm_dr == pytest.approx((size - 1) / size * math.sqrt(2) * p * (1 - p), abs=1e-12)
    # GRPO (ddof 0, eps 0) for a large group, by the binomial sum over the number of successes.
    large = 4000
    first = 0.0  # first entry of E[(1/N) Σ_i A_i (e_{a_i} - π)]
    for k in range(1, large):
        weight = math.exp(
            math.lgamma(large + 1) - math.lgamma(k + 1) - math.lgamma(large - k + 1)
            + k * math.log(p) + (large - k) * math.log(1 - p)
        )  # fmt: skip
        mean, std = k / large, math.sqrt(k / large * (1 - k / large))
        success, failure = (1 - mean) / std, (0 - mean) / std
        first += weight * (k * success * (1 - p) + (large - k) * failure * (0 - p)) / large
    assert math.sqrt(2) * abs(first) == pytest.approx(math.sqrt(2 * p * (1 - p)), rel=2e-3)


@pytest.mark.equation("eq-grpo-decomposition")
def test_grpo_is_the_scaled_leave_one_out_advantage_over_the_group_std():
    rng = np.random.default_rng(12)
    for size in (2, 5, 9):
        rewards, eps = rng.normal(size=size), 0.01
        std = math.sqrt(sum((r - rewards.mean()) ** 2 for r in rewards) / size)
        loo = [rewards[i] - (rewards.sum() - rewards[i]) / (size - 1) for i in range(size)]
        expected = [(size - 1) / size * a / (std + eps) for a in loo]
        np.testing.assert_allclose(
            group_normalized_advantages(rewards, eps=eps), expected, atol=1e-12
        )
        np.testing.assert_allclose(leave_one_out_advantages(rewards), loo, atol=1e-12)


@pytest.mark.equation("eq-loo-normalized")
@pytest.mark.parametrize("eps", [1e-6, 0.1])
def test_leave_one_out_normalization_scales_the_gradient_by_the_mean_inverse_std(eps):
    logits, rewards, size = np.array([0.4, -0.2, 0.1]), np.array([0.2, 1.0, 0.5]), 4
    probs = softmax_rows(logits)

    def normalized(group):
        out = []
        for i in range(len(group)):
            others = np.delete(group, i)
            out.append((group[i] - others.mean()) / (others.std(ddof=1) + eps))
        return np.array(out)

    update = group_expectation_by_hand(logits, rewards, size, normalized)
    mean_inverse = sum(
        math.prod(probs[a] for a in others) / (np.std(rewards[list(others)], ddof=1) + eps)
        for others in itertools.product(range(3), repeat=size - 1)
    )
    np.testing.assert_allclose(
        update, mean_inverse * bandit_gradient_by_hand(logits, rewards), atol=1e-12
    )


@pytest.mark.equation("eq-group-moments")
@pytest.mark.parametrize("estimator", ["independent", "leave-one-out", "group-normalized"])
def test_the_variance_of_the_group_mean_splits_into_own_and_cross_terms(estimator):
    logits, rewards, size = np.array([0.3, -0.5, 0.1]), np.array([1.0, 0.0, 0.4]), 3
    probs = softmax_rows(logits)
    baseline = probs @ rewards
    advantage_of = {
        "independent": lambda group: group - baseline,  # a fixed baseline: independent terms
        "leave-one-out": leave_one_out_advantages,
        "group-normalized": lambda group: group_normalized_advantages(group, eps=0.1),
    }[estimator]
    weights, terms = [], []  # every group of actions, and its members' terms A_i ψ^(i)
    for group in itertools.product(range(3), repeat=size):
        advantage = advantage_of(rewards[list(group)])
        weights.append(math.prod(probs[a] for a in group))
        terms.append([advantage[i] * (np.eye(3)[a] - probs) for i, a in enumerate(group)])
    weights, terms = np.array(weights), np.array(terms)  # (groups,), (groups, N, K)
    mean_terms = np.einsum("g,gik->ik", weights, terms)
    centered = terms - mean_terms
    own = np.einsum("g,gk,gk->", weights, centered[:, 0], centered[:, 0])
    cross = np.einsum("g,gk,gk->", weights, centered[:, 0], centered[:, 1])
    batch = centered.mean(axis=1)
    batch_variance = np.einsum("g,gk,gk->", weights, batch, batch)
    assert batch_variance == pytest.approx(own / size + (size - 1) / size * cross, abs=1e-12)
    if estimator == "independent":
        assert cross == pytest.approx(0.0, abs=1e-12)
    else:
        assert abs(cross) > 1e-4
