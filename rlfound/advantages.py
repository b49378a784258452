"""Advantage estimates from rewards and a value function: TD errors, k-step, and GAE.

Shapes follow one convention throughout: ``rewards`` has shape (..., T) and ``values`` has
shape (..., T + 1), time on the last axis and any leading axes a batch. ``values[..., t]`` is
V(s_t) and the extra last entry ``values[..., T]`` is the bootstrap value V(s_T) of the state
reached after the last reward (0 if the episode truly terminated there).

:func:`packed_gae` is the exception: it handles a stream that packs several episodes back to
back along time, so it takes ``values`` and ``next_values`` of the same shape as ``rewards`` and
the masks ``terminated`` and ``truncated`` that say where the episodes end.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from rlfound import _scan
from rlfound._validation import (
    as_float_array,
    as_float_array_like,
    check_axis,
    check_bool,
    check_choice,
    check_episode_flags,
    check_nonnegative_int,
    check_nonnegative_real,
    check_optional_mask,
    check_positive_int,
    check_unit_interval,
    check_values_for_rewards,
    finite_output,
)
from rlfound.returns import discounted_cumsum

__all__ = [
    "gae_explicit",
    "gae_recursive",
    "k_step_advantages",
    "packed_gae",
    "td_errors",
    "whiten_advantages",
]


@finite_output()
def td_errors(
    rewards: ArrayLike, values: ArrayLike, gamma: float, *, axis: int = -1
) -> np.ndarray:
    """One-step temporal-difference errors.

        δ_t = r_t + γ V(s_{t+1}) - V(s_t),    t = 0, ..., T - 1.

    δ_t is the one-step advantage estimate: what the step earned plus the discounted value
    of where it led, minus what was expected before taking it.

    Book: equation (eq-td-error), chapter 1.

    Parameters
    ----------
    rewards : array_like, shape (..., T)
        Rewards r_t.
    values : array_like, shape (..., T + 1)
        Values V(s_0), ..., V(s_T); the last is the bootstrap value.
    gamma : float
        Discount factor γ in [0, 1].
    axis : int, optional
        The time axis, the last by default; ``values`` has one more entry along it. With
        ``axis=0`` a time-major (T, B) batch, as Stable-Baselines3 stores its rollouts, is
        read as it is (``values`` then has shape (T + 1, B)).

    Returns
    -------
    numpy.ndarray, shape (..., T)
        The TD errors δ_t, time on ``axis``.

    Raises
    ------
    ValueError
        If the shapes do not agree (``values`` needs one more entry along the time axis and
        the same shape on the others), an input is non-finite, ``gamma`` is outside [0, 1],
        or ``axis`` is not an axis of ``rewards``;
        starting ``"overflow in td_errors"``, if r + γ V' - V exceeds the float64 range
        (values of ±1e308, say).

    References
    ----------
    R. S. Sutton, "Learning to predict by the methods of temporal differences",
    *Machine Learning* 3, 9-44, 1988.
    R. S. Sutton and A. G. Barto, *Reinforcement Learning: An Introduction*, 2nd ed.,
    MIT Press, 2018, section 6.1.

    Examples
    --------
    >>> td_errors([1.0, 0.0], values=[0.5, 0.5, 0.0], gamma=0.9)
    array([ 0.95, -0.5 ])
    >>> td_errors([[1.0], [0.0]], values=[[0.5], [0.5], [0.0]], gamma=0.9, axis=0)
    array([[ 0.95],
           [-0.5 ]])
    """
    rewards, values, axis = _rewards_and_values(rewards, values, axis)
    gamma = check_unit_interval(gamma, "gamma")
    # Time on the last axis, as views: no data moves.
    rewards, values = (
        np.moveaxis(rewards, axis, -1),
        np.moveaxis(values, axis, -1),
    )

    deltas = rewards + gamma * values[..., 1:] - values[..., :-1]
    return np.moveaxis(deltas, -1, axis)


def _rewards_and_values(
    rewards: ArrayLike, values: ArrayLike, axis: int
) -> tuple[np.ndarray, np.ndarray, int]:
    """``(rewards, values, axis)`` checked, ``values`` one entry longer along ``axis``.

    With time last, the messages of ``check_values_for_rewards``; on another axis, the
    same checks named by that axis.

    Raises
    ------
    ValueError
        If an array is not finite and real with at least one dimension, ``axis`` is not an
        axis of ``rewards``, or the shapes do not agree exactly (no broadcasting).
    """
    rewards = as_float_array(rewards, "rewards", min_ndim=1)
    axis = check_axis(axis, rewards.shape)
    if axis == rewards.ndim - 1:
        return (*check_values_for_rewards(rewards, values), axis)
    values = as_float_array(values, "values", min_ndim=1)
    horizon = rewards.shape[axis]
    others = np.delete(rewards.shape, axis).tolist()
    if (
        values.ndim != rewards.ndim
        or np.delete(values.shape, axis).tolist() != others
    ):
        raise ValueError(
            f"values must have the shape of rewards, {rewards.shape}, on every axis but "
            f"axis {axis}; got shape {values.shape}"
        )
    if values.shape[axis] != horizon + 1:
        raise ValueError(
            f"values must have one more entry than rewards along axis {axis} "
            f"(T+1 = {horizon + 1}); got shape {values.shape}"
        )
    return rewards, values, axis


@finite_output()
def k_step_advantages(
    rewards: ArrayLike,
    values: ArrayLike,
    gamma: float,
    k: int,
    *,
    axis: int = -1,
) -> np.ndarray:
    """k-step advantage estimates: k rewards, then bootstrap from the value function.

        A_t^(k) = Σ_{l=0}^{n-1} γ^l r_{t+l} + γ^n V(s_{t+n}) - V(s_t),    n = min(k, T - t).

    Near the end of the array fewer than k rewards remain, so the estimate bootstraps from
    the last value V(s_T). k = 1 gives the TD errors; k >= T gives the Monte Carlo return
    (bootstrapped at T) minus V(s_t). Equivalently A_t^(k) = Σ_{l=0}^{n-1} γ^l δ_{t+l}.

    Book: equations (eq-k-step) and (eq-k-step-telescoping), chapter 1.

    Parameters
    ----------
    rewards : array_like, shape (..., T)
        Rewards r_t.
    values : array_like, shape (..., T + 1)
        Values V(s_0), ..., V(s_T); the last is the bootstrap value.
    gamma : float
        Discount factor γ in [0, 1].
    k : int
        Number of rewards before bootstrapping, >= 1.
    axis : int, optional
        The time axis, as in :func:`td_errors`.

    Returns
    -------
    numpy.ndarray, shape (..., T)
        The advantages A_t^(k), time on ``axis``.

    Raises
    ------
    ValueError
        As :func:`td_errors`, and if ``k`` is not a positive integer.

    References
    ----------
    R. S. Sutton and A. G. Barto, *Reinforcement Learning: An Introduction*, 2nd ed.,
    MIT Press, 2018, section 7.1.
    J. Schulman, P. Moritz, S. Levine, M. Jordan and P. Abbeel, "High-dimensional continuous
    control using generalized advantage estimation", ICLR, 2016.

    Examples
    --------
    >>> k_step_advantages([1.0, 0.0], values=[0.5, 0.5, 0.0], gamma=0.9, k=1)
    array([ 0.95, -0.5 ])
    >>> k_step_advantages([1.0, 0.0], values=[0.5, 0.5, 0.0], gamma=0.9, k=2)
    array([ 0.5, -0.5])
    """
    rewards, values, axis = _rewards_and_values(rewards, values, axis)
    gamma = check_unit_interval(gamma, "gamma")
    k = check_positive_int(k, "k")
    # Time on the last axis, as views: no data moves.
    rewards, values = (
        np.moveaxis(rewards, axis, -1),
        np.moveaxis(values, axis, -1),
    )

    horizon = rewards.shape[-1]
    advantages = np.empty_like(rewards)
    for t in range(horizon):
        n = min(k, horizon - t)
        discounts = gamma ** np.arange(n)  # γ^0 = 1 even when γ = 0
        advantages[..., t] = (
            rewards[..., t : t + n] @ discounts
            + gamma**n * values[..., t + n]
            - values[..., t]
        )
    return np.moveaxis(advantages, -1, axis)


@finite_output()
def gae_recursive(
    rewards: ArrayLike,
    values: ArrayLike,
    gamma: float,
    lam: float,
    *,
    axis: int = -1,
) -> np.ndarray:
    """Generalized advantage estimates by the backward recursion.

        A_t = δ_t + γ λ A_{t+1},    A_T = 0,

    with δ_t the TD errors: the backward scan :func:`rlfound.returns.discounted_cumsum` of
    the TD errors with factor γλ. One pass from the end of the trajectory, linear in T; this
    is how GAE is computed in practice. λ = 0 gives the TD errors and λ = 1 the discounted
    return (bootstrapped at T) minus V(s_t).

    Book: equation (eq-gae-recursion), chapter 1.

    Parameters
    ----------
    rewards : array_like, shape (..., T)
        Rewards r_t.
    values : array_like, shape (..., T + 1)
        Values V(s_0), ..., V(s_T); the last is the bootstrap value.
    gamma : float
        Discount factor γ in [0, 1].
    lam : float
        GAE parameter λ in [0, 1]: small trusts the value function, large the rewards.
    axis : int, optional
        The time axis, as in :func:`td_errors`: ``axis=0`` scans a time-major (T, B)
        batch as it is, with no transposed copy.

    Returns
    -------
    numpy.ndarray, shape (..., T)
        The advantages A_t, time on ``axis``.

    Raises
    ------
    ValueError
        As :func:`td_errors`, and if ``lam`` is outside [0, 1].

    References
    ----------
    J. Schulman, P. Moritz, S. Levine, M. Jordan and P. Abbeel, "High-dimensional continuous
    control using generalized advantage estimation", ICLR, 2016.

    Examples
    --------
    >>> gae_recursive([1.0, 0.0], values=[0.5, 0.5, 0.0], gamma=0.9, lam=0.5)
    array([ 0.725, -0.5  ])
    """
    rewards, values, axis = _rewards_and_values(rewards, values, axis)
    gamma = check_unit_interval(gamma, "gamma")
    lam = check_unit_interval(lam, "lam")

    deltas = td_errors(rewards, values, gamma, axis=axis)
    # A_t = δ_t + γλ A_{t+1}, A_T = 0
    return discounted_cumsum(deltas, gamma * lam, axis=axis)


@finite_output()
def gae_explicit(
    rewards: ArrayLike,
    values: ArrayLike,
    gamma: float,
    lam: float,
    *,
    axis: int = -1,
) -> np.ndarray:
    """Generalized advantage estimates by their definition, an explicit weighted sum.

        A_t = Σ_{l=0}^{T-1-t} (γ λ)^l δ_{t+l},

    written as A = W δ with the upper-triangular matrix W[t, s] = (γ λ)^(s - t) for s >= t.
    It costs O(T²), so it is the reference against which :func:`gae_recursive` is checked,
    not the form to use on long trajectories.

    Book: equation (eq-gae), chapter 1.

    Parameters
    ----------
    rewards : array_like, shape (..., T)
        Rewards r_t.
    values : array_like, shape (..., T + 1)
        Values V(s_0), ..., V(s_T); the last is the bootstrap value.
    gamma : float
        Discount factor γ in [0, 1].
    lam : float
        GAE parameter λ in [0, 1].
    axis : int, optional
        The time axis, as in :func:`td_errors`.

    Returns
    -------
    numpy.ndarray, shape (..., T)
        The advantages A_t, time on ``axis``.

    Raises
    ------
    ValueError
        As :func:`td_errors`, and if ``lam`` is outside [0, 1].

    References
    ----------
    J. Schulman, P. Moritz, S. Levine, M. Jordan and P. Abbeel, "High-dimensional continuous
    control using generalized advantage estimation", ICLR, 2016.

    Examples
    --------
    >>> gae_explicit([1.0, 0.0], values=[0.5, 0.5, 0.0], gamma=0.9, lam=0.5)
    array([ 0.725, -0.5  ])
    """
    rewards, values, axis = _rewards_and_values(rewards, values, axis)
    gamma = check_unit_interval(gamma, "gamma")
    lam = check_unit_interval(lam, "lam")

    # Time on the last axis, as a view: no data moves.
    deltas = np.moveaxis(
        td_errors(rewards, values, gamma, axis=axis), axis, -1
    )
    horizon = deltas.shape[-1]
    lag = (
        np.arange(horizon) - np.arange(horizon)[:, None]
    )  # lag[t, s] = s - t
    # (γλ)^0 = 1 on the diagonal even when γλ = 0; below it the weight is 0.
    weights = np.where(lag >= 0, (gamma * lam) ** np.maximum(lag, 0), 0.0)
    return np.moveaxis(deltas @ weights.T, -1, axis)


@finite_output(inputs=("rewards", "values", "next_values"))
def packed_gae(
    rewards: ArrayLike,
    values: ArrayLike,
    next_values: ArrayLike,
    terminated: ArrayLike,
    truncated: ArrayLike,
    gamma: float,
    lam: float,
    *,
    axis: int = -1,
    method: str = "auto",
) -> np.ndarray:
    """GAE over a stream that packs several episodes back to back, with timeouts handled.

        δ_t = r_t + γ (1 - terminated_t) V_next,t - V(s_t),
        A_t = δ_t + γ λ (1 - done_t) A_{t+1},
        done_t = terminated_t or truncated_t,

    and the chain also stops at the end of the stream. The two ways an episode can end are
    different mathematics. A true terminal state is worth 0, so the step never bootstraps.
    A truncation by a time limit (or the collector stopping at the array end) leaves a state
    with a future, so the step bootstraps from ``next_values[..., t]``, the value of the
    state it reached; only the λ-chain is cut, because the next entry belongs to another
    episode. Marking a timeout as terminal silently drops the γ V terms of that future.

    Within an episode ``next_values[..., t]`` should equal ``values[..., t + 1]``; then
    ``packed_gae(..., lam=1) + values`` equals
    :func:`rlfound.returns.packed_discounted_returns` with the same ``next_values``, and
    each episode segment agrees with :func:`gae_recursive` bootstrapped from the segment's
    last ``next_values`` (or 0 if it terminated).

    Book: equation (eq-gae-timeouts), chapter 4.

    Parameters
    ----------
    rewards : array_like, shape (..., T)
        Rewards r_t; leading axes are a batch of independent streams.
    values : array_like, shape (..., T)
        V(s_t) of the state each step started from.
    next_values : array_like, shape (..., T)
        V of the state each step reached; at a truncated step, the value of the cut
        episode's final observation. Ignored at terminated steps, where it may hold
        anything, NaN included.
    terminated : array_like of bool or 0/1, shape (..., T)
        True where step t entered a true terminal state.
    truncated : array_like of bool or 0/1, shape (..., T)
        True where the episode was cut by a time limit after step t.
    gamma : float
        Discount factor γ in [0, 1].
    lam : float
        GAE parameter λ in [0, 1].
    axis : int, optional
        The time axis, the last by default. Stable-Baselines3's rollout buffer is time-major,
        (buffer_size, n_envs): pass its arrays with ``axis=0``, as they are; no transposed
        copy is made (see :func:`rlfound.returns.discounted_cumsum`).
    method : {"auto", "loop", "banded"}, optional
        How the backward scan runs, as in :func:`rlfound.returns.discounted_cumsum`: the
        same advantages up to rounding, and by default the faster form for the shape.

    Returns
    -------
    numpy.ndarray, shape (..., T)
        The advantages A_t.

    Raises
    ------
    ValueError
        If ``rewards`` is a scalar, ``values``, ``next_values`` or a mask does not have the
        shape of ``rewards`` (or a mask is not 0/1), a step is both terminated and
        truncated (naming ``truncated``), ``gamma`` or ``lam`` is outside [0, 1], ``axis``
        is not an axis of ``rewards``, ``method`` is not one of the three names, or
        ``rewards``, ``values`` or ``next_values`` holds an inf or NaN where it is read
        (naming the first such argument and its first non-finite entry).

    References
    ----------
    J. Schulman, P. Moritz, S. Levine, M. Jordan and P. Abbeel, "High-dimensional continuous
    control using generalized advantage estimation", ICLR, 2016.
    F. Pardo, A. Tavakoli, V. Levdik and P. Kormushev, "Time limits in reinforcement
    learning", ICML, 2018.

    Examples
    --------
    One step that ends: terminated it earns only its reward; truncated it also earns the
    discounted value of the state it reached.

    >>> packed_gae([1.0], values=[0.5], next_values=[2.0], terminated=[True],
    ...            truncated=[False], gamma=0.9, lam=0.95)
    array([0.5])
    >>> packed_gae([1.0], values=[0.5], next_values=[2.0], terminated=[False],
    ...            truncated=[True], gamma=0.9, lam=0.95)
    array([2.3])

    A time-major buffer, (T, B) = (2, 3) as Stable-Baselines3 stores it, with ``axis=0``:

    >>> rewards = np.ones((2, 3))
    >>> values = next_values = np.zeros((2, 3))
    >>> ends = np.array([[False, True, False], [False, False, False]])
    >>> packed_gae(rewards, values, next_values, ends, np.zeros((2, 3), bool), gamma=0.5,
    ...            lam=1.0, axis=0)
    array([[1.5, 1. , 1.5],
           [1. , 1. , 1. ]])
    """
    # inf and NaN are looked for only if the result has one (see
    # finite_output).
    rewards = as_float_array(
        rewards, "rewards", min_ndim=1, check_finite=False
    )
    values = as_float_array_like(
        values, "values", rewards.shape, "rewards", check_finite=False
    )
    next_values = as_float_array_like(
        next_values,
        "next_values",
        rewards.shape,
        "rewards",
        check_finite=False,
    )
    terminated, truncated = check_episode_flags(
        terminated, truncated, rewards.shape
    )
    gamma = check_unit_interval(gamma, "gamma")
    lam = check_unit_interval(lam, "lam")
    axis = check_axis(axis, rewards.shape)

    ends = terminated | truncated
    if _scan.form(method, rewards.shape, axis) == "banded":  # fast path
        return _scan.scan(
            _scan.Terms(
                rewards, next_values, gamma, never=terminated, third=values
            ),
            gamma * lam,
            ends,
            axis,
        )
    # A true terminal state has no future value; every other step bootstraps.
    deltas = (
        rewards + gamma * np.where(terminated, 0.0, next_values) - values
    )
    # At an episode boundary the next entry belongs to another episode: cut
    # the λ-chain.
    discounts = np.where(ends, 0.0, gamma * lam)
    return discounted_cumsum(deltas, discounts, axis=axis, method="loop")


_WHITEN_EPS_FORMS = ("variance", "floor", "std")


@finite_output()
def whiten_advantages(
    advantages: ArrayLike,
    mask: ArrayLike | None = None,
    *,
    ddof: int = 0,
    eps: float = 1e-8,
    eps_form: str = "variance",
    shift_mean: bool = True,
) -> np.ndarray:
    r"""Whiten advantages with one mean and one spread taken over every valid token of a batch.

        μ = Σ m_j A_j / n,    σ² = Σ m_j (A_j - μ)² / (n - ddof),    n = Σ m_j,

        Â_j = (A_j - μ) / s,  s = sqrt(σ² + eps)     eps_form = "variance"
                              s = sqrt(max(σ², eps)) eps_form = "floor"
                              s = σ + eps            eps_form = "std"

    (plus μ again when ``shift_mean`` is False). The statistics are those of the batch, not
    of a group or a sequence: every valid token of every row counts once, so a long response
    weighs more in μ and σ than a short one. Positions outside ``mask`` (padding, prompt and
    tool-output tokens) neither enter the statistics nor receive a value: they come back 0.
    Whitening rescales the gradient by 1/s and, when it shifts the mean, adds a baseline μ/s
    to every token; the expected gradient changes only by that scale and that baseline.

    Parameters
    ----------
    advantages : array_like, shape (...)
        Advantage estimates; at least 1-D. Only the entries where ``mask`` is True are read
        (they must be finite); the others may hold anything, even inf or NaN.
    mask : array_like of bool or 0/1, shape (...), optional
        Which positions are valid tokens. Default: all.
    ddof : int, optional
        Delta degrees of freedom of σ²: 0 (default, the population variance) or 1 (Bessel's
        correction, ``torch.var``'s default); must be below the number of valid tokens.
    eps : float, optional
        Non-negative constant of the spread, placed as ``eps_form`` says; default 1e-8.
    eps_form : {"variance", "floor", "std"}, optional
        Where ``eps`` enters s: added to the variance (default), as a floor under the
        variance, or added to the standard deviation.
    shift_mean : bool, optional
        Whether the result keeps mean 0 (default) or has μ added back after scaling.

    Returns
    -------
    numpy.ndarray, shape of ``advantages``
        The whitened advantages, 0 outside ``mask``.

    Raises
    ------
    ValueError
        If ``advantages`` is a scalar or not finite where ``mask`` is True; ``mask`` does not
        have its shape or is not 0/1; ``ddof`` is not a non-negative integer below the number
        of valid tokens (so at least one valid token is needed); ``eps`` is negative or not
        finite, or 0 while the valid advantages are all equal (s would be 0); ``eps_form`` is
        not one of the three names; or ``shift_mean`` is not a bool.

    Notes
    -----
    .. math::

       \mu = \frac{1}{n} \sum_j m_j A_j, \qquad
       \sigma^2 = \frac{1}{n - \mathrm{ddof}} \sum_j m_j (A_j - \mu)^2, \qquad
       n = \sum_j m_j,

    .. math::

       \hat A_j = \frac{A_j - \mu}{s}, \qquad
       s = \begin{cases}
       \sqrt{\sigma^2 + \epsilon} & \text{eps\_form = "variance"} \\
       \sqrt{\max(\sigma^2, \epsilon)} & \text{eps\_form = "floor"} \\
       \sigma + \epsilon & \text{eps\_form = "std"}
       \end{cases}

    Checked in the trainers' code:

    - verl, ``masked_whiten`` in ``verl/utils/torch_functional.py`` (volcengine/verl at
      commit b178a3cd56f58b2d502255daba591e92833930a7): the masked mean and the masked
      variance with Bessel's correction (``masked_var(..., unbiased=True)``, which raises
      for a mask of one token), then ``rsqrt(var + 1e-8)``: ``ddof=1, eps=1e-8,
      eps_form="variance"``. Its GAE (``compute_gae_advantage_return``) and REINFORCE++
      (``compute_reinforce_plus_plus_outcome_advantage``) in
      ``verl/trainer/ppo/core_algos.py`` whiten over the whole batch's response mask.
    - OpenRLHF, ``compute_advantages_and_returns`` in
      ``openrlhf/trainer/ppo_utils/experience_maker.py`` (OpenRLHF/OpenRLHF at commit
      3c3be6234e0cb353e76bb8019947db9dfe99fca7), for the estimators ``gae``, ``reinforce``
      and ``reinforce_baseline``: the mean and the variance over every action token of all
      experiences (divided by their number, ddof 0) and ``var.clamp(min=1e-8).rsqrt()``:
      ``ddof=0, eps=1e-8, eps_form="floor"``; ``no_std_norm`` only subtracts the mean.
    - Stable-Baselines3, ``PPO.train`` in ``stable_baselines3/ppo/ppo.py``
      (DLR-RM/stable-baselines3 at commit e05d2dbe6eda0acd0ef2e316e3e4065677add3eb), and
      CleanRL, ``ppo.py`` (vwxyzjn/cleanrl at commit
      fe8d8a03c41a7ef5b523e2e354bd01c363e786bb): ``(A - mean) / (std + 1e-8)`` with
      ``torch``'s std (ddof 1), per minibatch, without a mask: ``ddof=1, eps=1e-8,
      eps_form="std"`` on each minibatch.

    References
    ----------
    M. Andrychowicz et al., "What matters in on-policy reinforcement learning? A large-scale
    empirical study", ICLR, 2021.

    Examples
    --------
    Two rows of 2 and 1 valid tokens: the three valid entries are whitened together.

    >>> whiten_advantages([[1.0, 3.0], [2.0, 99.0]], mask=[[1, 1], [1, 0]], eps=0.0)
    array([[-1.22474487,  1.22474487],
           [ 0.        ,  0.        ]])
    >>> whiten_advantages([[1.0, 3.0], [2.0, 99.0]], mask=[[1, 1], [1, 0]], ddof=1, eps=0.0)
    array([[-1.,  1.],
           [ 0.,  0.]])
    """
    advantages = as_float_array(
        advantages, "advantages", min_ndim=1, check_finite=False
    )
    mask = check_optional_mask(mask, "mask", advantages.shape)
    valid = advantages[mask]
    if not np.isfinite(valid).all():
        index = tuple(
            int(i) for i in np.argwhere(mask & ~np.isfinite(advantages))[0]
        )
        raise ValueError(
            "advantages must be finite where mask is True; got "
            f"{float(advantages[index])!r} at index {index}"
        )
    ddof = check_nonnegative_int(ddof, "ddof")
    if ddof >= valid.size:
        raise ValueError(
            "ddof must be smaller than the number of valid tokens "
            f"({valid.size}); got {ddof}"
        )
    eps = check_nonnegative_real(eps, "eps")
    eps_form = check_choice(eps_form, "eps_form", _WHITEN_EPS_FORMS)
    shift_mean = check_bool(shift_mean, "shift_mean")

    mean = valid.mean()
    variance = np.sum((valid - mean) ** 2) / (valid.size - ddof)
    if eps_form == "variance":
        spread = np.sqrt(variance + eps)
    elif eps_form == "floor":
        spread = np.sqrt(max(variance, eps))
    else:
        spread = np.sqrt(variance) + eps
    if spread == 0.0:
        raise ValueError(
            "eps must be > 0 when the valid advantages are all equal "
            "(their spread is 0); got eps = 0.0"
        )
    whitened = (valid - mean) / spread + (0.0 if shift_mean else mean)
    result = np.zeros_like(advantages)
    result[mask] = whitened
    return result
