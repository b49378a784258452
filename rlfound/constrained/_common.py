"""The input checks that the files of :mod:`rlfound.constrained` share."""

from __future__ import annotations

from typing import Any

import numpy as np

from rlfound._validation import (
    as_float_array,
    as_float_array_like,
    check_shape,
)


def _as_constraint_array(x: Any, name: str) -> np.ndarray:
    """A finite real scalar (one constraint) or a 1-D array (one entry per constraint)."""
    array = as_float_array(x, name)
    if array.ndim > 1:
        raise ValueError(
            f"{name} must be a real number (one constraint) or a 1-D array "
            f"(one entry per constraint); got shape {array.shape}"
        )
    return array


def _check_constraints(
    cost_value: Any, multiplier: Any, budget: Any, *, positive: bool = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """J_C, ν and C_max: three arrays of one shape, () or (M,), with ν >= 0 (> 0 if positive)."""
    cost_value = _as_constraint_array(cost_value, "cost_value")
    shape = cost_value.shape
    multiplier = as_float_array_like(
        multiplier, "multiplier", shape, "cost_value"
    )
    budget = as_float_array_like(budget, "budget", shape, "cost_value")
    bad = multiplier <= 0.0 if positive else multiplier < 0.0
    if bad.any():
        what = (
            "positive (the log parameterization)"
            if positive
            else "non-negative"
        )
        raise ValueError(
            f"multiplier must be {what}, a Lagrange multiplier of an "
            f"inequality constraint; got {float(multiplier[bad][0])!r}"
        )
    return cost_value, multiplier, budget


def _check_gradients(
    reward_gradient: Any, cost_gradient: Any, shape: tuple[int, ...]
):
    """∇J_R of any shape, and ∇J_C of that shape (one constraint) or (M,) + that shape."""
    reward_gradient = as_float_array(
        reward_gradient, "reward_gradient", min_ndim=1
    )
    expected = shape + reward_gradient.shape
    cost_gradient = as_float_array(cost_gradient, "cost_gradient")
    what = (
        "the shape of reward_gradient"
        if not shape
        else "(M,) + the shape of reward_gradient"
    )
    check_shape(cost_gradient, "cost_gradient", expected, what)
    return reward_gradient, cost_gradient
