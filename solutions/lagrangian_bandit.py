"""Exercise ``lagrangian-bandit`` (chapter 11, two stars): the Lagrangian of a softmax bandit.

A softmax policy ``pi = softmax(logits)`` over K actions has the expected reward
J_R = sum_a pi(a) q(a) and the expected cost J_C = sum_a pi(a) c(a), with ``action_rewards``
q and ``action_costs`` c. For the constraint J_C <= C_max (``budget``) and a multiplier
nu >= 0 (``multiplier``), the Lagrangian is

    J_nu(theta) = J_R - nu (J_C - C_max),

its gradient in the logits is

    grad_theta J_nu = pi * (q - nu c - (J_R - nu J_C)),

and the projected multiplier step, gradient descent on J_nu in nu, is

    nu <- max(0, nu + eta_nu (J_C - C_max)).

Implement

* :func:`bandit_lagrangian` (a float) and :func:`bandit_lagrangian_gradient` (shape (K,)),
  numerically stable for logits of any size;
* :func:`projected_multiplier_update` (a float);
* :func:`test_bandit_lagrangian_gradient`, a test that checks the gradient by central finite
  differences of the Lagrangian.

Every function raises ``ValueError`` for bad input: a negative (or non-finite) multiplier or
step size, arrays of different lengths or of the wrong dimension, non-finite numbers, and a
budget or cost that is not a single finite number.
"""

from __future__ import annotations

import numpy as np


def bandit_lagrangian(logits, action_rewards, action_costs, multiplier, budget):
    """The Lagrangian J_nu = J_R - nu (J_C - C_max) of a softmax policy on a bandit.

    Parameters
    ----------
    logits : array_like
        Shape (K,), K >= 1: the policy's logits theta.
    action_rewards : array_like
        Shape (K,): the expected reward q(a) of each action.
    action_costs : array_like
        Shape (K,): the expected cost c(a) of each action.
    multiplier : float
        nu >= 0.
    budget : float
        C_max.

    Returns
    -------
    float
        J_nu(theta), the Lagrangian.

    Raises
    ------
    ValueError
        If an array is not a finite 1-D array of the length of ``logits``, ``multiplier`` is
        negative or not a finite number, or ``budget`` is not a finite number. The message
        starts with the argument's name.

    Examples
    --------
    Two actions at equal logits: J_R = 0.5, J_C = 0.5, so J_nu = 0.5 - 2 (0.5 - 0.25) = 0.

    >>> bandit_lagrangian([0.0, 0.0], [0.0, 1.0], [0.0, 1.0], multiplier=2.0, budget=0.25)
    0.0
    """
    ### BEGIN SOLUTION
    arrays = []
    for name, x in (
        ("logits", logits),
        ("action_rewards", action_rewards),
        ("action_costs", action_costs),
    ):
        array = np.asarray(x)
        if array.dtype.kind not in "iuf" or array.ndim != 1 or array.size == 0:
            raise ValueError(f"{name} must be a 1-D array of K >= 1 real numbers; got {x!r}")
        if not np.all(np.isfinite(array)):
            raise ValueError(f"{name} must be finite; got {x!r}")
        if arrays and array.shape != arrays[0].shape:
            raise ValueError(f"{name} must have the shape of logits {arrays[0].shape}; got {x!r}")
        arrays.append(array.astype(np.float64))
    scalars = {}
    for name, x in (("multiplier", multiplier), ("budget", budget)):
        value = np.asarray(x)  # a bool or a string has another dtype kind and is refused
        if value.dtype.kind not in "iuf" or value.ndim != 0 or not np.isfinite(value):
            raise ValueError(f"{name} must be a finite real number; got {x!r}")
        scalars[name] = float(value)
    if scalars["multiplier"] < 0.0:
        raise ValueError(f"multiplier must be non-negative; got {scalars['multiplier']!r}")

    theta, q, c = arrays
    z = np.exp(theta - theta.max())  # shifted: exp never overflows
    pi = z / z.sum()
    return float(pi @ q - scalars["multiplier"] * (pi @ c - scalars["budget"]))
    ### END SOLUTION


def bandit_lagrangian_gradient(logits, action_rewards, action_costs, multiplier, budget):
    """The gradient of :func:`bandit_lagrangian` with respect to the logits.

    Parameters
    ----------
    logits, action_rewards, action_costs, multiplier, budget
        As for :func:`bandit_lagrangian`.

    Returns
    -------
    numpy.ndarray
        Shape (K,), float64: ``pi * (q - nu c - (J_R - nu J_C))``. Its entries sum to 0
        (adding a constant to every logit changes nothing), and the budget does not enter.

    Raises
    ------
    ValueError
        As :func:`bandit_lagrangian`.

    Examples
    --------
    >>> bandit_lagrangian_gradient([0.0, 0.0], [0.0, 1.0], [0.0, 1.0], 2.0, 0.25).tolist()
    [0.25, -0.25]
    """
    ### BEGIN SOLUTION
    bandit_lagrangian(logits, action_rewards, action_costs, multiplier, budget)  # the checks
    theta = np.asarray(logits, dtype=np.float64)
    z = np.exp(theta - theta.max())
    pi = z / z.sum()
    # The reward of the weighted problem r - nu c; the budget is a constant and drops out.
    penalized = np.asarray(action_rewards, float) - float(multiplier) * np.asarray(action_costs)
    return pi * (penalized - pi @ penalized)
    ### END SOLUTION


def projected_multiplier_update(multiplier, cost_value, budget, multiplier_lr):
    """One projected step of the multiplier: max(0, nu + eta_nu (J_C - C_max)).

    Parameters
    ----------
    multiplier : float
        nu >= 0.
    cost_value : float
        J_C of the current policy.
    budget : float
        C_max.
    multiplier_lr : float
        The step size eta_nu >= 0.

    Returns
    -------
    float
        The new multiplier, >= 0.

    Raises
    ------
    ValueError
        If ``multiplier`` or ``multiplier_lr`` is negative, or an argument is not a finite
        number. The message starts with the argument's name.

    Examples
    --------
    >>> projected_multiplier_update(2.0, cost_value=0.04, budget=0.01, multiplier_lr=10.0)
    2.3
    >>> projected_multiplier_update(0.1, cost_value=0.0, budget=0.01, multiplier_lr=100.0)
    0.0
    """
    ### BEGIN SOLUTION
    values = {}
    for name, x in (
        ("multiplier", multiplier),
        ("cost_value", cost_value),
        ("budget", budget),
        ("multiplier_lr", multiplier_lr),
    ):
        value = np.asarray(x)  # a bool or a string has another dtype kind and is refused
        if value.dtype.kind not in "iuf" or value.ndim != 0 or not np.isfinite(value):
            raise ValueError(f"{name} must be a finite real number; got {x!r}")
        values[name] = float(value)
    for name in ("multiplier", "multiplier_lr"):
        if values[name] < 0.0:
            raise ValueError(f"{name} must be non-negative; got {values[name]!r}")
    step = values["multiplier_lr"] * (values["cost_value"] - values["budget"])
    return max(0.0, values["multiplier"] + step)
    ### END SOLUTION


def test_bandit_lagrangian_gradient():
    """:func:`bandit_lagrangian_gradient` agrees with central finite differences of
    :func:`bandit_lagrangian`.

    Random bandits with 1 to 6 actions, multipliers from 0 to 20, and logits large enough that
    an unshifted softmax would overflow.
    """
    ### BEGIN SOLUTION
    rng = np.random.default_rng(11)
    for size, scale, nu in [(1, 1.0, 0.0), (2, 1.0, 0.5), (4, 3.0, 6.25), (6, 400.0, 20.0)]:
        logits = scale * rng.normal(size=size)
        q, c = rng.normal(size=size), rng.uniform(size=size)
        budget = float(rng.uniform())
        analytic = bandit_lagrangian_gradient(logits, q, c, nu, budget)
        step = 1e-6
        numerical = np.zeros(size)
        for k in range(size):
            shift = np.zeros(size)
            shift[k] = step
            up = bandit_lagrangian(logits + shift, q, c, nu, budget)
            down = bandit_lagrangian(logits - shift, q, c, nu, budget)
            numerical[k] = (up - down) / (2 * step)
        np.testing.assert_allclose(analytic, numerical, rtol=1e-5, atol=1e-8)
        assert abs(analytic.sum()) < 1e-12
    ### END SOLUTION
