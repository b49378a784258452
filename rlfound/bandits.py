"""Softmax policies on a one-state bandit: the objective, its exact gradient, and REINFORCE.

A bandit has K actions, each with a fixed expected reward q(a), given as ``action_rewards``
of shape (K,). A softmax policy with logits θ picks action a with probability π_θ(a), the
objective is J(θ) = Σ_a π_θ(a) q(a), and REINFORCE estimates its gradient from sampled
actions alone, with the score e_a - π_θ of :func:`rlfound.distributions.categorical_score`.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from rlfound._validation import (
    MAX_ARRAY_ENTRIES,
    MAX_ITERATIONS,
    as_float_array,
    check_choice,
    check_indices,
    check_last_axis,
    check_logits,
    check_positive_int,
    check_positive_real,
    check_rng,
    check_shape,
    check_size,
    finite_output,
    renamed_keywords,
)
from rlfound.distributions import categorical_score, softmax

__all__ = [
    "BASELINES",
    "bandit_objective",
    "exact_bandit_gradient",
    "reinforce_bandit",
    "reinforce_bandit_history",
    "reinforce_gradient_estimate",
]

#: Baselines accepted by :func:`reinforce_bandit_history`.
BASELINES = ("mean", "leave_one_out", "none")


def _check_logits_and_rewards(
    logits: ArrayLike, action_rewards: ArrayLike
) -> tuple[np.ndarray, np.ndarray]:
    """Logits and expected rewards: two 1-D arrays with one entry per action, K >= 1."""
    logits = check_logits(logits, ndim=1)
    action_rewards = as_float_array(action_rewards, "action_rewards", ndim=1)
    check_shape(
        action_rewards,
        "action_rewards",
        logits.shape,
        "one entry per action",
    )
    return logits, action_rewards


@finite_output()
def bandit_objective(logits: ArrayLike, action_rewards: ArrayLike) -> float:
    r"""Expected reward of a softmax policy in a one-state bandit.

        J(θ) = Σ_a π_θ(a) q(a).

    Parameters
    ----------
    logits : array_like, shape (K,)
        Logits θ.
    action_rewards : array_like, shape (K,)
        Expected reward q(a) of each action.

    Returns
    -------
    float
        J(θ).

    Raises
    ------
    ValueError
        If either input is not a finite 1-D array, or their lengths differ.

    Notes
    -----
    .. math::

       J(\boldsymbol{\theta}) = \sum_a \pi_{\boldsymbol{\theta}}(a)\, q(a)

    References
    ----------
    R. S. Sutton and A. G. Barto, *Reinforcement Learning: An Introduction*, 2nd ed.,
    MIT Press, 2018, section 2.8.

    Examples
    --------
    >>> bandit_objective([0.0, 0.0], [1.0, 3.0])
    2.0
    """
    logits, action_rewards = _check_logits_and_rewards(
        logits, action_rewards
    )

    return float(softmax(logits) @ action_rewards)


@finite_output()
def exact_bandit_gradient(
    logits: ArrayLike, action_rewards: ArrayLike
) -> np.ndarray:
    """Exact gradient of the bandit objective J(θ) = Σ_a π_θ(a) q(a).

    Averaging the score function over the policy gives

        ∂J/∂θ_a = Σ_b π(b) q(b) (e_b - π)_a = π(a) (q(a) - Σ_b π(b) q(b)),

    so a logit rises exactly when its action beats the policy's average reward.

    Book: equation (eq-bandit-gradient), chapter 1.

    Parameters
    ----------
    logits : array_like, shape (K,)
        Logits θ.
    action_rewards : array_like, shape (K,)
        Expected reward q(a) of each action.

    Returns
    -------
    numpy.ndarray, shape (K,)
        ∇_θ J(θ).

    Raises
    ------
    ValueError
        If either input is not a finite 1-D array, or their lengths differ.

    References
    ----------
    R. J. Williams, "Simple statistical gradient-following algorithms for connectionist
    reinforcement learning", *Machine Learning* 8, 229-256, 1992.
    R. S. Sutton and A. G. Barto, *Reinforcement Learning: An Introduction*, 2nd ed.,
    MIT Press, 2018, section 2.8.

    Examples
    --------
    >>> exact_bandit_gradient([0.0, 0.0], [1.0, 3.0])
    array([-0.5,  0.5])
    """
    logits, action_rewards = _check_logits_and_rewards(
        logits, action_rewards
    )

    probs = softmax(logits)
    average_reward = probs @ action_rewards
    return probs * (action_rewards - average_reward)


def _check_samples(
    actions: ArrayLike,
    rewards: ArrayLike,
    baseline: ArrayLike,
    num_actions: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """At least one sampled action, one reward each, and a scalar or per-sample baseline."""
    actions = check_indices(actions, "actions", num_actions, ndim=1)
    check_last_axis(actions, "actions", 1, "sampled action")
    rewards = as_float_array(rewards, "rewards", ndim=1)
    check_shape(rewards, "rewards", actions.shape, "one entry per action")
    baseline = as_float_array(baseline, "baseline")
    if baseline.ndim:
        check_shape(
            baseline,
            "baseline",
            actions.shape,
            "one entry per action (or no axes)",
        )
    return actions, rewards, baseline


@finite_output()
def reinforce_gradient_estimate(
    logits: ArrayLike,
    actions: ArrayLike,
    rewards: ArrayLike,
    baseline: ArrayLike = 0.0,
) -> np.ndarray:
    """REINFORCE (score-function) estimate of the bandit policy gradient from samples.

    For N actions a_i ~ π_θ with rewards r_i,

        ĝ = (1/N) Σ_i (r_i - b_i) (e_{a_i} - π_θ).

    With a baseline b_i that does not depend on a_i the estimate is unbiased for ∇_θ J,
    because the score has mean zero under π_θ; the baseline only changes the variance.

    Book: equation (eq-baseline), chapter 1.

    Parameters
    ----------
    logits : array_like, shape (K,)
        Logits θ of the policy that sampled the actions.
    actions : array_like of int, shape (N,)
        Sampled actions a_i in [0, K); N >= 1.
    rewards : array_like, shape (N,)
        Reward r_i observed for each sampled action.
    baseline : float or array_like, shape () or (N,), optional
        One baseline for all samples, or one per sample. Default 0 (no baseline).

    Returns
    -------
    numpy.ndarray, shape (K,)
        The gradient estimate ĝ.

    Raises
    ------
    ValueError
        If ``logits`` is not a finite 1-D array, ``actions`` is empty or holds anything but
        integers in [0, K), ``rewards`` does not have one entry per action, ``baseline`` is
        neither a scalar nor of shape (N,), or any input is non-finite.

    References
    ----------
    R. J. Williams, "Simple statistical gradient-following algorithms for connectionist
    reinforcement learning", *Machine Learning* 8, 229-256, 1992.
    E. Greensmith, P. L. Bartlett and J. Baxter, "Variance reduction techniques for gradient
    estimates in reinforcement learning", *JMLR* 5, 1471-1530, 2004.

    Examples
    --------
    >>> reinforce_gradient_estimate([0.0, 0.0], actions=[0, 1], rewards=[1.0, 3.0])
    array([-0.5,  0.5])
    >>> reinforce_gradient_estimate([0.0, 0.0], [0, 1], [1.0, 3.0], baseline=2.0)
    array([-0.5,  0.5])
    """
    logits = check_logits(logits, ndim=1)
    actions, rewards, baseline = _check_samples(
        actions, rewards, baseline, len(logits)
    )

    scores = categorical_score(logits, actions)  # row i: e_{a_i} - π
    return (rewards - baseline) @ scores / len(actions)


def _check_batch_size(batch_size: int, baseline: str) -> int:
    """Actions per step: at least 1, and at least 2 when each needs the others' mean."""
    batch_size = check_positive_int(batch_size, "batch_size")
    if baseline == "leave_one_out" and batch_size < 2:
        raise ValueError(
            f"batch_size must be at least 2 with baseline='leave_one_out'; got {batch_size}"
        )
    return batch_size


def _batch_baseline(rewards: np.ndarray, kind: str) -> np.ndarray | float:
    """Baseline for each reward of a sampled batch (see :func:`reinforce_bandit_history`)."""
    if kind == "mean":
        return float(rewards.mean())
    if kind == "leave_one_out":
        return (rewards.sum() - rewards) / (len(rewards) - 1)
    return 0.0


@finite_output("the REINFORCE updates")
@renamed_keywords(steps="num_steps", since="0.1.0")
def reinforce_bandit_history(
    action_rewards: ArrayLike,
    num_steps: int = 200,
    batch_size: int = 64,
    lr: float = 0.2,
    baseline: str = "mean",
    rng: np.random.Generator | int | None = None,
) -> np.ndarray:
    """Train a softmax policy on a one-state bandit with REINFORCE; return every iterate.

    Starting from θ = 0, each step samples N actions a_i ~ π_θ, observes their
    deterministic rewards r_i = q(a_i), and ascends the sampled gradient:

        θ ← θ + lr · (1/N) Σ_i (r_i - b_i) (e_{a_i} - π_θ).

    Baselines b_i:

    - ``"leave_one_out"``: b_i is the mean of the other N - 1 rewards; independent of a_i,
      hence unbiased (the RLOO baseline).
    - ``"mean"``: b_i is the batch mean r̄, which includes r_i itself. Per sample,
      r_i - r̄ = ((N - 1)/N)(r_i - b_i^LOO) exactly, so this is the leave-one-out estimator
      with its step scaled by (N - 1)/N: the same direction, a slightly smaller step.
    - ``"none"``: b_i = 0, plain REINFORCE.

    Since the rewards are deterministic, the only randomness is the sampling of actions,
    which isolates the noise of the gradient estimator itself.

    Book: equations (eq-bandit-gradient) and (eq-baseline), chapter 1.

    Parameters
    ----------
    action_rewards : array_like, shape (K,)
        Reward q(a) of each action.
    num_steps : int, optional
        Number of gradient steps, >= 1. (Its old name ``steps`` still works, with a
        ``DeprecationWarning``, until rlfound 0.3.0.)
    batch_size : int, optional
        Actions sampled per step, N >= 1 (>= 2 for ``"leave_one_out"``).
    lr : float, optional
        Step size, > 0.
    baseline : {"mean", "leave_one_out", "none"}, optional
        Baseline subtracted from the rewards.
    rng : numpy.random.Generator, int or None, optional
        Source of the sampled actions: a Generator, or a seed for a new one (None: fresh
        entropy).

    Returns
    -------
    numpy.ndarray, shape (num_steps + 1, K)
        The logits before the first step (row 0, all zeros) and after every step.

    Raises
    ------
    ValueError
        If ``action_rewards`` is not a finite non-empty 1-D array, ``num_steps`` or
        ``batch_size`` is not a positive integer, ``lr`` is not positive and finite,
        ``baseline`` is not one of the names above, ``batch_size`` is 1 with the
        ``"leave_one_out"`` baseline, or ``rng`` is not a Generator, a non-negative integer or
        None. Sizes are checked with exact integers before anything is allocated:
        ``num_steps`` at most ``MAX_ITERATIONS`` (10^7), ``batch_size`` and the history's
        (num_steps + 1) * K entries at most ``MAX_ARRAY_ENTRIES`` (10^8). Starting
        ``"overflow in the REINFORCE updates"``, if a batch mean, a gradient or the logits
        exceed the float64 range.

    References
    ----------
    R. J. Williams, "Simple statistical gradient-following algorithms for connectionist
    reinforcement learning", *Machine Learning* 8, 229-256, 1992.
    W. Kool, H. van Hoof and M. Welling, "Buy 4 REINFORCE samples, get a baseline for free!",
    ICLR Workshop, 2019.

    Examples
    --------
    >>> history = reinforce_bandit_history([0.2, 0.5, 1.0], num_steps=3, rng=0)
    >>> history.shape
    (4, 3)
    >>> history[0]
    array([0., 0., 0.])
    """
    action_rewards = check_last_axis(
        as_float_array(action_rewards, "action_rewards", ndim=1),
        "action_rewards",
        1,
        "action",
    )
    num_steps = check_positive_int(num_steps, "num_steps")
    batch_size = _check_batch_size(
        batch_size, check_choice(baseline, "baseline", BASELINES)
    )
    lr = check_positive_real(lr, "lr")
    rng = check_rng(rng)

    num_actions = len(action_rewards)
    check_size(num_steps, "num_steps", MAX_ITERATIONS, "updates")
    check_size(
        batch_size, "batch_size", MAX_ARRAY_ENTRIES, "actions per step"
    )
    check_size(
        (num_steps + 1) * num_actions,
        "num_steps",
        MAX_ARRAY_ENTRIES,
        "history entries",
    )
    history = np.zeros((num_steps + 1, num_actions))
    for step in range(num_steps):
        logits = history[step]
        actions = rng.choice(num_actions, size=batch_size, p=softmax(logits))
        rewards = action_rewards[actions]
        gradient = reinforce_gradient_estimate(
            logits,
            actions,
            rewards,
            baseline=_batch_baseline(rewards, baseline),
        )
        history[step + 1] = logits + lr * gradient
    return history


@finite_output("the REINFORCE updates")
@renamed_keywords(steps="num_steps", since="0.1.0")
def reinforce_bandit(
    action_rewards: ArrayLike,
    num_steps: int = 200,
    batch_size: int = 64,
    lr: float = 0.2,
    baseline: str = "mean",
    rng: np.random.Generator | int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Final logits and probabilities of a REINFORCE run on a one-state bandit.

    Runs :func:`reinforce_bandit_history` and keeps its last iterate, θ after ``num_steps`` steps.

    Book: equation (eq-bandit-gradient), chapter 1.

    Parameters
    ----------
    action_rewards : array_like, shape (K,)
        Reward q(a) of each action.
    num_steps, batch_size, lr, baseline, rng
        As in :func:`reinforce_bandit_history`.

    Returns
    -------
    logits : numpy.ndarray, shape (K,)
        θ after the last step.
    probs : numpy.ndarray, shape (K,)
        softmax(θ).

    Raises
    ------
    ValueError
        As :func:`reinforce_bandit_history`.

    References
    ----------
    R. J. Williams, "Simple statistical gradient-following algorithms for connectionist
    reinforcement learning", *Machine Learning* 8, 229-256, 1992.

    Examples
    --------
    >>> logits, probs = reinforce_bandit([0.2, 0.5, 1.0], rng=0)
    >>> bool(probs[2] > 0.94)
    True
    """
    history = reinforce_bandit_history(
        action_rewards, num_steps, batch_size, lr, baseline, rng
    )
    logits = history[-1]
    return logits, softmax(logits)
