"""Softmax policies, their score function, and the policy gradient on a one-state bandit.

A softmax (categorical) policy over K actions has parameters θ, the logits, and
probabilities π_θ(a) = exp(θ_a) / Σ_b exp(θ_b). In a bandit each action a has a fixed
expected reward q(a), the objective is J(θ) = Σ_a π_θ(a) q(a), and REINFORCE estimates its
gradient from sampled actions alone.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

from rlfound._validation import (
    as_float_array,
    check_actions,
    check_nonnegative_int,
    check_positive_int,
    check_positive_real,
)

__all__ = [
    "BASELINES",
    "bandit_objective",
    "categorical_score",
    "exact_bandit_gradient",
    "log_softmax",
    "reinforce_bandit",
    "reinforce_bandit_history",
    "reinforce_gradient_estimate",
    "softmax",
]

#: Baselines accepted by :func:`reinforce_bandit_history`.
BASELINES = ("mean", "leave_one_out", "none")


def _check_logits(logits: ArrayLike, axis: int) -> np.ndarray:
    """Logits with at least one action along a valid ``axis``."""
    logits = as_float_array(logits, "logits", min_ndim=1)
    if isinstance(axis, (bool, np.bool_)) or not isinstance(axis, (int, np.integer)):
        raise ValueError(f"axis must be an integer; got {axis!r}")
    if not -logits.ndim <= axis < logits.ndim:
        raise ValueError(
            f"axis must be in [-{logits.ndim}, {logits.ndim}) for logits of shape "
            f"{logits.shape}; got {axis}"
        )
    if logits.shape[axis] == 0:
        raise ValueError(
            f"logits must have at least one action along axis {axis}; got shape {logits.shape}"
        )
    return logits


def _check_logit_vector(logits: ArrayLike) -> np.ndarray:
    """A 1-D vector of logits, one per action, with at least one action."""
    return _check_logits(as_float_array(logits, "logits", ndim=1), axis=-1)


def _check_logits_and_values(
    logits: ArrayLike, action_values: ArrayLike
) -> tuple[np.ndarray, np.ndarray]:
    """Logits and action values: two 1-D arrays with one entry per action."""
    logits = _check_logit_vector(logits)
    action_values = as_float_array(action_values, "action_values", ndim=1)
    if action_values.shape != logits.shape:
        raise ValueError(
            f"action_values must have one entry per action, shape {logits.shape}; "
            f"got shape {action_values.shape}"
        )
    return logits, action_values


def softmax(logits: ArrayLike, axis: int = -1) -> np.ndarray:
    """Softmax probabilities, computed stably.

        π(a) = exp(θ_a) / Σ_b exp(θ_b) = exp(θ_a - logsumexp(θ)).

    Subtracting the largest logit first (as SciPy does) avoids overflow, so logits of any
    finite size are safe.

    Parameters
    ----------
    logits : array_like, shape (..., K, ...)
        Logits θ; at least one dimension.
    axis : int, optional
        Axis holding the K actions. Default: the last.

    Returns
    -------
    numpy.ndarray
        Probabilities with the shape of ``logits``, summing to 1 along ``axis``.

    Raises
    ------
    ValueError
        If ``logits`` is a scalar or non-finite, or ``axis`` is out of range.

    References
    ----------
    J. S. Bridle, "Probabilistic interpretation of feedforward classification network
    outputs, with relationships to statistical pattern recognition", *Neurocomputing*, 1990.

    Examples
    --------
    >>> softmax([0.0, 0.0, np.log(2.0)])
    array([0.25, 0.25, 0.5 ])
    >>> softmax([1000.0, 1000.0])
    array([0.5, 0.5])
    """
    logits = _check_logits(logits, axis)
    return special.softmax(logits, axis=axis)


def log_softmax(logits: ArrayLike, axis: int = -1) -> np.ndarray:
    """Log-probabilities of a softmax policy, computed stably.

        log π(a) = θ_a - logsumexp(θ) = θ_a - log Σ_b exp(θ_b).

    This stays finite where ``log(softmax(logits))`` would underflow to ``-inf``.

    Parameters
    ----------
    logits : array_like, shape (..., K, ...)
        Logits θ; at least one dimension.
    axis : int, optional
        Axis holding the K actions. Default: the last.

    Returns
    -------
    numpy.ndarray
        Log-probabilities with the shape of ``logits``.

    Raises
    ------
    ValueError
        If ``logits`` is a scalar or non-finite, or ``axis`` is out of range.

    References
    ----------
    J. S. Bridle, "Probabilistic interpretation of feedforward classification network
    outputs, with relationships to statistical pattern recognition", *Neurocomputing*, 1990.

    Examples
    --------
    >>> log_softmax([0.0, 0.0])
    array([-0.69314718, -0.69314718])
    >>> log_softmax([0.0, 1000.0])
    array([-1000.,     0.])
    """
    logits = _check_logits(logits, axis)
    return special.log_softmax(logits, axis=axis)


def categorical_score(logits: ArrayLike, action: int) -> np.ndarray:
    """Score function of a softmax policy: the gradient of log π_θ(a) with respect to θ.

        ∇_θ log π_θ(a) = e_a - π_θ,

    where e_a is the one-hot vector of action a. Its expectation under π_θ is zero, which is
    why a baseline can be subtracted from the reward without biasing the policy gradient.

    Book: equation (eq-pg-trajectory), chapter 1.

    Parameters
    ----------
    logits : array_like, shape (K,)
        Logits θ.
    action : int
        The action a, in [0, K).

    Returns
    -------
    numpy.ndarray, shape (K,)
        The score e_a - π_θ.

    Raises
    ------
    ValueError
        If ``logits`` is not a finite 1-D array, or ``action`` is not an integer in [0, K).

    References
    ----------
    R. J. Williams, "Simple statistical gradient-following algorithms for connectionist
    reinforcement learning", *Machine Learning* 8, 229-256, 1992.

    Examples
    --------
    >>> categorical_score([0.0, 0.0], action=1)
    array([-0.5,  0.5])
    """
    logits = _check_logit_vector(logits)
    action = check_actions(action, "action", logits.shape[0], ndim=0)
    score = -softmax(logits)
    score[action] += 1.0
    return score


def bandit_objective(logits: ArrayLike, action_values: ArrayLike) -> float:
    """Expected reward of a softmax policy in a one-state bandit.

        J(θ) = Σ_a π_θ(a) q(a).

    Parameters
    ----------
    logits : array_like, shape (K,)
        Logits θ.
    action_values : array_like, shape (K,)
        Expected reward q(a) of each action.

    Returns
    -------
    float
        J(θ).

    Raises
    ------
    ValueError
        If either input is not a finite 1-D array, or their lengths differ.

    References
    ----------
    R. S. Sutton and A. G. Barto, *Reinforcement Learning: An Introduction*, 2nd ed.,
    MIT Press, 2018, section 2.8.

    Examples
    --------
    >>> bandit_objective([0.0, 0.0], [1.0, 3.0])
    2.0
    """
    logits, action_values = _check_logits_and_values(logits, action_values)
    return float(softmax(logits) @ action_values)


def exact_bandit_gradient(logits: ArrayLike, action_values: ArrayLike) -> np.ndarray:
    """Exact gradient of the bandit objective J(θ) = Σ_a π_θ(a) q(a).

    Averaging the score function over the policy gives

        ∂J/∂θ_a = Σ_b π(b) q(b) (e_b - π)_a = π(a) (q(a) - Σ_b π(b) q(b)),

    so a logit rises exactly when its action beats the policy's average reward.

    Book: equation (eq-bandit-gradient), chapter 1.

    Parameters
    ----------
    logits : array_like, shape (K,)
        Logits θ.
    action_values : array_like, shape (K,)
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
    logits, action_values = _check_logits_and_values(logits, action_values)
    probabilities = softmax(logits)
    average_reward = probabilities @ action_values
    return probabilities * (action_values - average_reward)


def _check_samples(
    actions: ArrayLike, rewards: ArrayLike, baseline: ArrayLike, num_actions: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sampled actions, one reward each, and a scalar or per-sample baseline."""
    actions = check_actions(actions, "actions", num_actions, ndim=1)
    if actions.size == 0:
        raise ValueError("actions must contain at least one sampled action; got shape (0,)")
    rewards = as_float_array(rewards, "rewards", ndim=1)
    if rewards.shape != actions.shape:
        raise ValueError(
            f"rewards must have one entry per action, shape {actions.shape}; "
            f"got shape {rewards.shape}"
        )
    baseline = as_float_array(baseline, "baseline")
    if baseline.shape not in ((), actions.shape):
        raise ValueError(
            f"baseline must be a scalar or have shape {actions.shape}; got shape {baseline.shape}"
        )
    return actions, rewards, baseline


def reinforce_gradient_estimate(
    logits: ArrayLike, actions: ArrayLike, rewards: ArrayLike, baseline: ArrayLike = 0.0
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
    logits = _check_logit_vector(logits)
    actions, rewards, baseline = _check_samples(actions, rewards, baseline, logits.shape[0])

    # Row i is the score e_{a_i} - π of sample i.
    scores = np.eye(logits.shape[0])[actions] - softmax(logits)
    return (rewards - baseline) @ scores / len(actions)


def _check_bandit_run(
    action_values: ArrayLike, steps: int, batch_size: int, lr: float, seed: int, baseline: str
) -> tuple[np.ndarray, int, int, float, int]:
    """All the arguments of :func:`reinforce_bandit_history`."""
    action_values = as_float_array(action_values, "action_values", ndim=1)
    if action_values.size == 0:
        raise ValueError("action_values must have at least one action; got shape (0,)")
    steps = check_positive_int(steps, "steps")
    batch_size = check_positive_int(batch_size, "batch_size")
    lr = check_positive_real(lr, "lr")
    seed = check_nonnegative_int(seed, "seed")
    if not isinstance(baseline, str) or baseline not in BASELINES:
        raise ValueError(f"baseline must be one of {BASELINES}; got {baseline!r}")
    if baseline == "leave_one_out" and batch_size < 2:
        raise ValueError(
            f"batch_size must be at least 2 with baseline='leave_one_out'; got {batch_size}"
        )
    return action_values, steps, batch_size, lr, seed


def _batch_baseline(rewards: np.ndarray, kind: str) -> np.ndarray | float:
    """Baseline for each reward of a sampled batch (see :func:`reinforce_bandit_history`)."""
    if kind == "mean":
        return float(rewards.mean())
    if kind == "leave_one_out":
        return (rewards.sum() - rewards) / (len(rewards) - 1)
    return 0.0


def reinforce_bandit_history(
    action_values: ArrayLike,
    steps: int = 200,
    batch_size: int = 64,
    lr: float = 0.2,
    seed: int = 0,
    baseline: str = "mean",
) -> np.ndarray:
    """Train a softmax policy on a one-state bandit with REINFORCE; return every iterate.

    Starting from θ = 0, each step samples N actions a_i ~ π_θ, observes their
    deterministic rewards r_i = q(a_i), and ascends the sampled gradient:

        θ ← θ + lr · (1/N) Σ_i (r_i - b_i) (e_{a_i} - π_θ).

    Baselines b_i:

    - ``"mean"``: the batch mean of the rewards. It includes r_i itself, which shrinks the
      expected update by the factor (N - 1)/N but does not change its direction.
    - ``"leave_one_out"``: the mean of the other N - 1 rewards; independent of a_i, hence
      unbiased (the RLOO baseline).
    - ``"none"``: b_i = 0, plain REINFORCE.

    Since the rewards are deterministic, the only randomness is the sampling of actions,
    which isolates the noise of the gradient estimator itself.

    Book: equations (eq-bandit-gradient) and (eq-baseline), chapter 1.

    Parameters
    ----------
    action_values : array_like, shape (K,)
        Reward q(a) of each action.
    steps : int, optional
        Number of gradient steps, >= 1.
    batch_size : int, optional
        Actions sampled per step, N >= 1 (>= 2 for ``"leave_one_out"``).
    lr : float, optional
        Step size, > 0.
    seed : int, optional
        Seed of the ``numpy.random.default_rng`` generator that samples the actions.
    baseline : {"mean", "leave_one_out", "none"}, optional
        Baseline subtracted from the rewards.

    Returns
    -------
    numpy.ndarray, shape (steps + 1, K)
        The logits before the first step (row 0, all zeros) and after every step.

    Raises
    ------
    ValueError
        If ``action_values`` is not a finite non-empty 1-D array, ``steps`` or ``batch_size``
        is not a positive integer, ``lr`` is not positive and finite, ``seed`` is not a
        non-negative integer, ``baseline`` is not one of the names above, or ``batch_size``
        is 1 with the ``"leave_one_out"`` baseline.

    References
    ----------
    R. J. Williams, "Simple statistical gradient-following algorithms for connectionist
    reinforcement learning", *Machine Learning* 8, 229-256, 1992.
    W. Kool, H. van Hoof and M. Welling, "Buy 4 REINFORCE samples, get a baseline for free!",
    ICLR Workshop, 2019.

    Examples
    --------
    >>> history = reinforce_bandit_history([0.2, 0.5, 1.0], steps=3)
    >>> history.shape
    (4, 3)
    >>> history[0]
    array([0., 0., 0.])
    """
    action_values, steps, batch_size, lr, seed = _check_bandit_run(
        action_values, steps, batch_size, lr, seed, baseline
    )
    num_actions = len(action_values)

    rng = np.random.default_rng(seed)
    history = np.zeros((steps + 1, num_actions))
    for step in range(steps):
        logits = history[step]
        actions = rng.choice(num_actions, size=batch_size, p=softmax(logits))
        rewards = action_values[actions]
        gradient = reinforce_gradient_estimate(
            logits, actions, rewards, baseline=_batch_baseline(rewards, baseline)
        )
        history[step + 1] = logits + lr * gradient
    return history


def reinforce_bandit(
    action_values: ArrayLike,
    steps: int = 200,
    batch_size: int = 64,
    lr: float = 0.2,
    seed: int = 0,
    baseline: str = "mean",
) -> tuple[np.ndarray, np.ndarray]:
    """Final logits and probabilities of a REINFORCE run on a one-state bandit.

    Runs :func:`reinforce_bandit_history` and keeps its last iterate θ_steps.

    Book: equation (eq-bandit-gradient), chapter 1.

    Parameters
    ----------
    action_values : array_like, shape (K,)
        Reward q(a) of each action.
    steps, batch_size, lr, seed, baseline
        As in :func:`reinforce_bandit_history`.

    Returns
    -------
    logits : numpy.ndarray, shape (K,)
        θ after the last step.
    probabilities : numpy.ndarray, shape (K,)
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
    >>> logits, probabilities = reinforce_bandit([0.2, 0.5, 1.0])
    >>> bool(probabilities[2] > 0.94)
    True
    """
    history = reinforce_bandit_history(action_values, steps, batch_size, lr, seed, baseline)
    logits = history[-1]
    return logits, softmax(logits)
