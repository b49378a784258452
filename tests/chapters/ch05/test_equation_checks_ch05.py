"""Labeled equations of chapter 5 that no other test computes, checked on concrete numbers
(the rule: tests/chapters/test_equations.py)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.chapters._surrogates import random_problem
from tests.oracles import (
    central_differences,
    softmax_rows,
)


@pytest.mark.equation("eq-local-surrogate")
def test_the_local_surrogate_has_the_objective_s_gradient_at_the_current_policy():
    logits, policy, d, advantage, objective = random_problem(1)
    j_now = objective(logits)

    def surrogate(new_logits, weighted):
        new = softmax_rows(new_logits)
        if weighted:  # J + Σ_s d(s) E_{a ~ π}[ρ A]
            inner = (policy * (new / policy) * advantage).sum(axis=1)
        else:  # J + Σ_s d(s) Σ_a π'(a | s) A
            inner = (new * advantage).sum(axis=1)
        return j_now + d @ inner

    moved = logits + np.random.default_rng(2).normal(size=logits.shape)
    assert surrogate(moved, True) == pytest.approx(surrogate(moved, False), abs=1e-12)
    assert surrogate(logits, False) == pytest.approx(j_now, abs=1e-12)
    gradient = central_differences(objective, logits)
    np.testing.assert_allclose(
        central_differences(lambda x: surrogate(x, False), logits), gradient, atol=1e-7
    )
