"""The Lagrangian of a constrained objective, its multiplier update and the
primal-dual method.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from rlfound._validation import (
    MAX_ITERATIONS,
    as_float_array,
    as_float_array_like,
    check_bool,
    check_callable,
    check_choice,
    check_nonnegative_int,
    check_nonnegative_real,
    check_real,
    check_shape,
    check_size,
    finite_output,
    float_or_array,
)

from ._common import (
    _as_constraint_array,
    _check_constraints,
    _check_gradients,
)

#: The update orders of :func:`primal_dual_step` and :func:`primal_dual`.
ORDERS = ("multiplier_first", "simultaneous")
#: How :func:`multiplier_update` keeps the multiplier non-negative.
PARAMETERIZATIONS = ("projected", "log")


@finite_output()
def lagrangian(
    reward_value: float,
    cost_value: ArrayLike,
    multiplier: ArrayLike,
    budget: ArrayLike,
) -> float:
    """The Lagrangian of a constrained objective.

        J_ν(θ) = J_R(θ) - Σ_k ν_k (J_{C_k}(θ) - C_max,k),        ν_k >= 0.

    For a fixed ν it is the expected reward of the scalarized reward r - Σ_k ν_k c_k (up to
    the constant Σ_k ν_k C_max,k): a multiplier is a weight that the algorithm chooses. For
    every feasible policy (J_C <= C_max) and every ν >= 0, J_ν >= J_R, so
    max_θ J_ν(θ) bounds the constrained optimum from above (weak duality).

    Book: equation (eq-lagrangian), chapter 11.

    Parameters
    ----------
    reward_value : float
        J_R(θ).
    cost_value : float or array_like, shape (M,)
        J_C(θ), one entry per constraint.
    multiplier : float or array_like, shape (M,)
        ν >= 0, the shape of ``cost_value``.
    budget : float or array_like, shape (M,)
        C_max, the shape of ``cost_value``.

    Returns
    -------
    float
        J_ν(θ), the Lagrangian.

    Raises
    ------
    ValueError
        If an input is not finite and real, ``cost_value`` has more than one dimension,
        ``multiplier`` or ``budget`` does not have its shape, or a multiplier is negative.

    References
    ----------
    E. Altman, *Constrained Markov Decision Processes*, Chapman & Hall/CRC, 1999,
    section 3.3.

    Examples
    --------
    >>> lagrangian(0.8, 0.04, 2.0, 0.01)
    0.74
    """
    reward_value = check_real(reward_value, "reward_value")
    cost_value, multiplier, budget = _check_constraints(
        cost_value, multiplier, budget
    )

    return float(reward_value - np.sum(multiplier * (cost_value - budget)))


@finite_output()
def lagrangian_gradients(
    reward_gradient: ArrayLike,
    cost_gradient: ArrayLike,
    cost_value: ArrayLike,
    multiplier: ArrayLike,
    budget: ArrayLike,
) -> tuple[np.ndarray, float | np.ndarray]:
    """The two partial derivatives of the Lagrangian.

        ∇_θ J_ν = ∇J_R - Σ_k ν_k ∇J_{C_k},
        ∂J_ν/∂ν_k = -(J_{C_k} - C_max,k).

    The policy ascends J_ν in θ. The multiplier *descends* J_ν in ν: the step
    ν <- ν - η_ν ∂J_ν/∂ν = ν + η_ν (J_C - C_max) raises ν while the constraint is violated.
    In code that minimizes losses, the policy's loss is -J_ν (ν held fixed) and the
    multiplier's loss is +J_ν restricted to ν, i.e. -ν (J_C - C_max) with J_C held fixed; the
    second returned value is the gradient of that multiplier loss.

    Book: equations (eq-lagrangian-gradients) and (eq-loss-signs), chapter 11.

    Parameters
    ----------
    reward_gradient : array_like, shape (...)
        ∇_θ J_R, with the shape of the parameters θ.
    cost_gradient : array_like, shape (...) or (M, ...)
        ∇_θ J_C: the shape of ``reward_gradient`` for one constraint, with a leading axis of
        M for several.
    cost_value : float or array_like, shape (M,)
        J_C(θ).
    multiplier : float or array_like, shape (M,)
        ν >= 0.
    budget : float or array_like, shape (M,)
        C_max.

    Returns
    -------
    params_gradient : numpy.ndarray, shape (...)
        ∇_θ J_ν.
    multiplier_gradient : float or numpy.ndarray, shape (M,)
        ∂J_ν/∂ν = C_max - J_C.

    Raises
    ------
    ValueError
        As :func:`lagrangian`, and if ``reward_gradient`` is a scalar or ``cost_gradient``
        does not have the shape it implies.

    References
    ----------
    C. Tessler, D. J. Mankowitz and S. Mannor, "Reward constrained policy optimization",
    ICLR, 2019.

    Examples
    --------
    >>> grad_params, grad_multiplier = lagrangian_gradients(
    ...     [0.3, -0.3], [0.1, -0.1], cost_value=0.04, multiplier=2.0, budget=0.01)
    >>> grad_params, grad_multiplier
    (array([ 0.1, -0.1]), -0.03)
    """
    cost_value, multiplier, budget = _check_constraints(
        cost_value, multiplier, budget
    )
    reward_gradient, cost_gradient = _check_gradients(
        reward_gradient, cost_gradient, cost_value.shape
    )

    penalty = np.tensordot(
        multiplier, cost_gradient, axes=multiplier.ndim
    )  # Σ_k ν_k ∇J_Ck
    return reward_gradient - penalty, float_or_array(budget - cost_value)


@finite_output()
def multiplier_update(
    multiplier: ArrayLike,
    cost_value: ArrayLike,
    budget: ArrayLike,
    multiplier_lr: float,
    parameterization: str = "projected",
) -> float | np.ndarray:
    """One step of the multiplier: gradient descent on J_ν in ν, kept non-negative.

        projected:  ν <- max(0, ν + η_ν (J_C - C_max)),
        log:        log ν <- log ν + η_ν ν (J_C - C_max),
                    i.e.  ν <- ν exp(η_ν ν (J_C - C_max)).

    A violated constraint (J_C > C_max) raises the multiplier, a slack one lowers it. The
    projected form is gradient descent on J_ν in ν followed by the projection onto ν >= 0
    (OmniSafe's ``Lagrange`` minimizes the loss -ν (J_C - C_max) with a torch optimizer and
    clamps ν to [0, upper bound]). The log form is gradient descent on the same loss in the
    variable log ν (Safe RLHF's PPO-Lag trainer, with plain SGD on ``log_lambda``): ν stays
    positive without a projection and can only approach 0 geometrically, and its steps are
    scaled by ν.

    Book: equations (eq-primal-dual) and (eq-loss-signs), chapter 11.

    Parameters
    ----------
    multiplier : float or array_like, shape (M,)
        ν: >= 0 for ``"projected"``, > 0 for ``"log"``.
    cost_value : float or array_like, shape (M,)
        J_C(θ) of the current policy (estimated from its episodes).
    budget : float or array_like, shape (M,)
        C_max.
    multiplier_lr : float
        Step size η_ν >= 0 (0 freezes ν: a fixed penalty).
    parameterization : {"projected", "log"}, optional
        How ν is kept non-negative, as above.

    Returns
    -------
    float or numpy.ndarray, shape (M,)
        The new ν, >= 0.

    Raises
    ------
    ValueError
        As :func:`lagrangian` (a negative multiplier, or a zero one with ``"log"``), if
        ``multiplier_lr`` is negative or not finite, or if ``parameterization`` is unknown.

    Notes
    -----
    Checked in the trainers' code: OmniSafe, ``omnisafe/common/lagrange.py``
    (``Lagrange.compute_lambda_loss`` returns ``-lagrangian_multiplier * (mean_ep_cost -
    cost_limit)``; ``update_lagrange_multiplier`` steps the optimizer, then
    ``clamp_(0, upper_bound)``); Safe RLHF, ``safe_rlhf/algorithms/ppo_lag/trainer.py``
    (``PPOLagTrainer.rl_step``: ``lambda_loss = -(episode_cost - threshold) *
    log_lambda.exp()`` with ``torch.optim.SGD`` on ``log_lambda``, read in a copy of that
    file in the repository tcexeexe/SHTEC_RM_model).

    References
    ----------
    E. Altman, *Constrained Markov Decision Processes*, Chapman & Hall/CRC, 1999.
    J. Dai, X. Pan, R. Sun, J. Ji, X. Xu, M. Liu, Y. Wang and Y. Yang, "Safe RLHF: safe
    reinforcement learning from human feedback", ICLR, 2024.

    Examples
    --------
    The constraint is violated by 0.03, so the multiplier rises; a slack one would fall to 0.

    >>> multiplier_update(2.0, cost_value=0.04, budget=0.01, multiplier_lr=10.0)
    2.3
    >>> multiplier_update(0.1, cost_value=0.0, budget=0.01, multiplier_lr=100.0)
    0.0
    """
    parameterization = check_choice(
        parameterization, "parameterization", PARAMETERIZATIONS
    )
    cost_value, multiplier, budget = _check_constraints(
        cost_value, multiplier, budget, positive=parameterization == "log"
    )
    multiplier_lr = check_nonnegative_real(multiplier_lr, "multiplier_lr")

    violation = cost_value - budget  # = -∂J_ν/∂ν
    if parameterization == "projected":
        return float_or_array(
            np.maximum(0.0, multiplier + multiplier_lr * violation)
        )
    return float_or_array(
        multiplier * np.exp(multiplier_lr * multiplier * violation)
    )


@finite_output()
def primal_dual_step(
    params: ArrayLike,
    multiplier: ArrayLike,
    reward_gradient: ArrayLike,
    cost_gradient: ArrayLike,
    cost_value: ArrayLike,
    budget: ArrayLike,
    lr: float,
    multiplier_lr: float,
    order: str = "multiplier_first",
    normalize: bool = False,
    parameterization: str = "projected",
) -> tuple[np.ndarray, float | np.ndarray]:
    """One primal-dual step: policy ascent on J_ν, multiplier descent on J_ν.

        ν' = max(0, ν + η_ν (J_C(θ) - C_max)),
        θ' = θ + η (∇J_R(θ) - ν̃ ∇J_C(θ)) / s,

    with ν̃ = ν' (``order="multiplier_first"``) or ν̃ = ν (``"simultaneous"``), and
    s = 1 + Σ_k ν̃_k when ``normalize`` is True, else 1. Both orders use the gradients and
    the cost measured at θ, so one evaluation of the policy serves the whole step.

    The defaults follow the trainers: OmniSafe's ``PPOLag._update`` and Safe RLHF's
    ``PPOLagTrainer.rl_step`` first update the multiplier from the episode cost of the
    current policy and then take the policy step with the new multiplier
    (``"multiplier_first"``). Both divide the combined advantage by 1 + ν
    (``(adv_r - penalty * adv_c) / (1 + penalty)``; ``normalize=True``), which keeps the size
    of the policy step bounded as ν grows without changing its direction. ``"simultaneous"``
    is the textbook gradient descent-ascent; it oscillates more (chapter 11).

    Book: equation (eq-primal-dual), chapter 11.

    Parameters
    ----------
    params : array_like, shape (...)
        θ, the policy parameters (logits).
    multiplier : float or array_like, shape (M,)
        ν >= 0 (> 0 with ``parameterization="log"``).
    reward_gradient : array_like, shape (...)
        ∇J_R(θ), the shape of ``params``.
    cost_gradient : array_like, shape (...) or (M, ...)
        ∇J_C(θ).
    cost_value : float or array_like, shape (M,)
        J_C(θ).
    budget : float or array_like, shape (M,)
        C_max.
    lr : float
        Policy step size η >= 0.
    multiplier_lr : float
        Multiplier step size η_ν >= 0.
    order : {"multiplier_first", "simultaneous"}, optional
        Which multiplier the policy step uses, as above.
    normalize : bool, optional
        Divide the policy step by 1 + Σ_k ν̃_k.
    parameterization : {"projected", "log"}, optional
        The multiplier update of :func:`multiplier_update`.

    Returns
    -------
    params : numpy.ndarray, shape (...)
        θ'.
    multiplier : float or numpy.ndarray, shape (M,)
        ν'.

    Raises
    ------
    ValueError
        As :func:`lagrangian_gradients` and :func:`multiplier_update`, and if ``params``
        does not have the shape of ``reward_gradient``, ``lr`` is negative, ``order`` is
        unknown or ``normalize`` is not a bool.

    Notes
    -----
    Checked in the trainers' code: OmniSafe,
    ``omnisafe/algorithms/on_policy/naive_lagrange/ppo_lag.py`` (``PPOLag._update`` calls
    ``update_lagrange_multiplier(Jc)`` before ``super()._update()``;
    ``_compute_adv_surrogate`` returns ``(adv_r - penalty * adv_c) / (1 + penalty)``); Safe
    RLHF, ``safe_rlhf/algorithms/ppo_lag/trainer.py`` (``rl_step`` updates ``log_lambda``
    before the actor step; ``actor_loss_fn`` uses ``(reward_advantages - multiplier *
    cost_advantages) / (1.0 + multiplier)``).

    References
    ----------
    C. Tessler, D. J. Mankowitz and S. Mannor, "Reward constrained policy optimization",
    ICLR, 2019.
    A. Stooke, J. Achiam and P. Abbeel, "Responsive safety in reinforcement learning by PID
    Lagrangian methods", ICML, 2020.

    Examples
    --------
    >>> params, multiplier = primal_dual_step(
    ...     [0.0, 0.0], 1.0, reward_gradient=[0.1, -0.1], cost_gradient=[0.05, -0.05],
    ...     cost_value=0.5, budget=0.25, lr=1.0, multiplier_lr=2.0)
    >>> params, multiplier
    (array([ 0.025, -0.025]), 1.5)
    """
    order = check_choice(order, "order", ORDERS)
    normalize = check_bool(normalize, "normalize")
    new_multiplier = multiplier_update(
        multiplier, cost_value, budget, multiplier_lr, parameterization
    )
    cost_value, multiplier, budget = _check_constraints(
        cost_value, multiplier, budget
    )
    reward_gradient, cost_gradient = _check_gradients(
        reward_gradient, cost_gradient, cost_value.shape
    )
    params = as_float_array_like(
        params, "params", reward_gradient.shape, "reward_gradient"
    )
    lr = check_nonnegative_real(lr, "lr")

    used = (
        np.asarray(new_multiplier)
        if order == "multiplier_first"
        else multiplier
    )
    ascent, _ = lagrangian_gradients(
        reward_gradient, cost_gradient, cost_value, used, budget
    )
    scale = 1.0 + float(np.sum(used)) if normalize else 1.0
    return params + lr * ascent / scale, new_multiplier


class PrimalDualHistory(NamedTuple):
    """The iterates of :func:`primal_dual`; entry k belongs to iterate k (k = 0 is the start).

    Attributes
    ----------
    params : numpy.ndarray, shape (K + 1, ...)
        θ_0, ..., θ_K.
    multipliers : numpy.ndarray, shape (K + 1,) or (K + 1, M)
        ν_0, ..., ν_K.
    reward_values : numpy.ndarray, shape (K + 1,)
        J_R(θ_k).
    cost_values : numpy.ndarray, shape (K + 1,) or (K + 1, M)
        J_C(θ_k).
    """

    params: np.ndarray
    multipliers: np.ndarray
    reward_values: np.ndarray
    cost_values: np.ndarray


def _call_oracle(
    oracle: Callable, params: np.ndarray, constraints: tuple[int, ...]
):
    """(J_R, ∇J_R, J_C, ∇J_C) at ``params``, checked, with a message that names the oracle."""
    result = oracle(params.copy())
    if not isinstance(result, tuple) or len(result) != 4:
        raise ValueError(
            "oracle must return a tuple (reward_value, reward_gradient, "
            f"cost_value, cost_gradient); got {type(result).__name__}"
        )
    try:
        reward_value = check_real(result[0], "reward_value")
        cost_value = as_float_array_like(
            result[2], "cost_value", constraints, "multiplier"
        )
        reward_gradient, cost_gradient = _check_gradients(
            result[1], result[3], constraints
        )
        check_shape(
            reward_gradient,
            "reward_gradient",
            params.shape,
            "the shape of params",
        )
    except ValueError as error:
        raise ValueError(
            f"oracle must return valid values; got {error}"
        ) from None
    return reward_value, reward_gradient, cost_value, cost_gradient


@finite_output()
def primal_dual(
    oracle: Callable[[np.ndarray], tuple],
    params: ArrayLike,
    multiplier: ArrayLike,
    budget: ArrayLike,
    lr: float,
    multiplier_lr: float,
    num_steps: int,
    order: str = "multiplier_first",
    normalize: bool = False,
    parameterization: str = "projected",
) -> PrimalDualHistory:
    """Run :func:`primal_dual_step` for ``num_steps`` steps and return every iterate.

        for k = 0, ..., K - 1:  (J_R, ∇J_R, J_C, ∇J_C) = oracle(θ_k);
                                 (θ_{k+1}, ν_{k+1}) = primal_dual_step(θ_k, ν_k, ...).

    The oracle supplies the objectives and their gradients: exact ones
    (:func:`value_and_gradient`, :func:`rlfound.bandits.exact_bandit_gradient`) or estimates
    from sampled episodes (an oracle that draws from its own generator). With constant step
    sizes the last iterate of a constrained problem usually cycles around the saddle point;
    the average of the iterates' occupancy measures (the mixture of the iterates) is the
    quantity that approaches the constrained optimum.

    Book: equations (eq-primal-dual) and (eq-averaged-iterate), chapter 11.

    Parameters
    ----------
    oracle : callable
        ``oracle(params)`` returns ``(reward_value, reward_gradient, cost_value,
        cost_gradient)`` at ``params``, shaped as in :func:`primal_dual_step`.
    params : array_like, shape (...)
        θ_0.
    multiplier : float or array_like, shape (M,)
        ν_0 >= 0 (> 0 with ``parameterization="log"``).
    budget : float or array_like, shape (M,)
        C_max, the shape of ``multiplier``.
    lr, multiplier_lr : float
        Step sizes η, η_ν >= 0.
    num_steps : int
        K >= 0, the number of steps; the oracle is called K + 1 times.
    order, normalize, parameterization
        As in :func:`primal_dual_step`.

    Returns
    -------
    PrimalDualHistory
        θ_k, ν_k, J_R(θ_k) and J_C(θ_k) for k = 0, ..., K.

    Raises
    ------
    ValueError
        If ``oracle`` is not callable or returns malformed values (the message names the
        oracle), ``params`` is not a finite array, ``num_steps`` is not a non-negative
        integer, or another argument is invalid as in :func:`primal_dual_step`.

    References
    ----------
    C. Tessler, D. J. Mankowitz and S. Mannor, "Reward constrained policy optimization",
    ICLR, 2019.
    S. Paternain, L. F. O. Chamon, M. Calvo-Fullana and A. Ribeiro, "Constrained
    reinforcement learning has zero duality gap", NeurIPS, 2019.

    Examples
    --------
    A two-action bandit with rewards (0, 1) and costs (0, 1) under the budget 0.25:

    >>> from rlfound.bandits import bandit_objective, exact_bandit_gradient
    >>> def oracle(theta):
    ...     q, c = [0.0, 1.0], [0.0, 1.0]
    ...     return (bandit_objective(theta, q), exact_bandit_gradient(theta, q),
    ...             bandit_objective(theta, c), exact_bandit_gradient(theta, c))
    >>> history = primal_dual(oracle, [0.0, 0.0], 0.0, 0.25, lr=1.0, multiplier_lr=1.0,
    ...                       num_steps=2)
    >>> history.params.shape, np.round(history.multipliers, 4)
    ((3, 2), array([0.    , 0.25  , 0.5927]))
    """
    oracle = check_callable(oracle, "oracle")
    params = as_float_array(params, "params", min_ndim=1)
    order = check_choice(order, "order", ORDERS)
    normalize = check_bool(normalize, "normalize")
    parameterization = check_choice(
        parameterization, "parameterization", PARAMETERIZATIONS
    )
    multiplier = _as_constraint_array(multiplier, "multiplier")
    budget = as_float_array_like(
        budget, "budget", multiplier.shape, "multiplier"
    )
    # The multiplier's sign (and positivity for the log form), with the module's message.
    _check_constraints(
        budget, multiplier, budget, positive=parameterization == "log"
    )
    lr = check_nonnegative_real(lr, "lr")
    multiplier_lr = check_nonnegative_real(multiplier_lr, "multiplier_lr")
    num_steps = check_size(
        check_nonnegative_int(num_steps, "num_steps"),
        "num_steps",
        MAX_ITERATIONS,
        "steps",
    )

    thetas, multipliers, reward_values, cost_values = [], [], [], []
    for step in range(num_steps + 1):
        reward_value, reward_gradient, cost_value, cost_gradient = (
            _call_oracle(oracle, params, multiplier.shape)
        )
        thetas.append(params)
        multipliers.append(multiplier)
        reward_values.append(reward_value)
        cost_values.append(cost_value)
        if step == num_steps:
            break
        params, new_multiplier = primal_dual_step(
            params, multiplier, reward_gradient, cost_gradient, cost_value, budget, lr,
            multiplier_lr, order, normalize, parameterization,
        )  # fmt: skip
        multiplier = np.asarray(new_multiplier, dtype=np.float64)
    return PrimalDualHistory(
        np.array(thetas),
        np.array(multipliers),
        np.array(reward_values),
        np.array(cost_values),
    )
