"""Softmax policies, their score function, and policy gradients on bandits and tabular MDPs.

A softmax (categorical) policy over K actions has parameters θ, the logits, and
probabilities π_θ(a) = exp(θ_a) / Σ_b exp(θ_b). In a bandit each action a has a fixed
expected reward q(a), the objective is J(θ) = Σ_a π_θ(a) q(a), and REINFORCE estimates its
gradient from sampled actions alone.

In a tabular MDP (the format of :mod:`rlfound.mdp`) the policy has one row of logits per
state, ``logits`` of shape (S, A) with π(a | s) = softmax(logits[s])_a, and an episode is a
pair of arrays ``states`` (T + 1,) and ``actions`` (T,) as produced by
:func:`rlfound.mdp.sample_episodes`: steps after the episode ended carry action -1 and are
skipped.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

from rlfound._validation import (
    as_float_array,
    check_actions,
    check_nonnegative_int,
    check_positive_int,
    check_positive_real,
    check_unit_interval,
)
from rlfound.mdp import (
    _check_initial,
    _check_live_rows,
    _check_terminal_mask,
    _check_transition,
    state_values,
)

__all__ = [
    "BASELINES",
    "bandit_objective",
    "categorical_score",
    "enumerate_group_gradient",
    "exact_bandit_gradient",
    "expected_return",
    "log_softmax",
    "reinforce_bandit",
    "reinforce_bandit_history",
    "reinforce_gradient_estimate",
    "reinforce_trajectory_gradient",
    "softmax",
    "tabular_softmax_policy",
    "trajectory_log_probability",
    "trajectory_score",
]

#: Largest number of action tuples :func:`enumerate_group_gradient` will sum over.
MAX_ENUMERATION = 1_000_000

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


# --- tabular MDPs: one softmax per state ----------------------------------------------------


def _check_tabular_logits(logits: ArrayLike) -> np.ndarray:
    """Logits of shape (S, A) with S, A >= 1."""
    logits = as_float_array(logits, "logits", ndim=2)
    if logits.shape[0] < 1 or logits.shape[1] < 1:
        raise ValueError(
            f"logits must have shape (S, A) with S, A >= 1 (one row per state); "
            f"got shape {logits.shape}"
        )
    return logits


def _check_logits_for_transition(logits: np.ndarray, transition: np.ndarray) -> None:
    """The policy's (S, A) must be the MDP's."""
    if logits.shape != transition.shape[:2]:
        raise ValueError(
            f"logits must have shape (S, A) = {transition.shape[:2]} to match transition; "
            f"got shape {logits.shape}"
        )


def _check_episode(
    states: ArrayLike, actions: ArrayLike, num_states: int, num_actions: int
) -> tuple[np.ndarray, np.ndarray, int]:
    """An episode (states (T+1,), actions (T,)) and its length before any -1 padding."""
    actions = check_actions(actions, "actions", num_actions, ndim=1, minimum=-1)
    states = check_actions(states, "states", num_states, ndim=1, kind="state")
    if states.shape != (actions.size + 1,):
        raise ValueError(
            f"states must have one more entry than actions (T+1 = {actions.size + 1}), "
            f"s_0 to s_T; got shape {states.shape}"
        )
    padding = actions < 0
    length = int(np.argmax(padding)) if padding.any() else actions.size
    if not padding[length:].all():
        late = length + int(np.argmin(padding[length:]))
        raise ValueError(
            "actions must be -1 only after the episode ended (a trailing block of padding); "
            f"got action {int(actions[late])} at index {late} after -1 at index {length}"
        )
    return states, actions, length


def tabular_softmax_policy(logits: ArrayLike) -> np.ndarray:
    """The tabular softmax policy: one softmax over actions per state.

        π(a | s) = exp(θ[s, a]) / Σ_b exp(θ[s, b]).

    Book: equation (eq-trajectory-score), chapter 3.

    Parameters
    ----------
    logits : array_like, shape (S, A)
        Logits θ[s, a].

    Returns
    -------
    numpy.ndarray, shape (S, A)
        π(a | s); every row sums to 1.

    Raises
    ------
    ValueError
        If ``logits`` is not a finite 2-D array with at least one state and one action.

    References
    ----------
    R. S. Sutton and A. G. Barto, *Reinforcement Learning: An Introduction*, 2nd ed.,
    MIT Press, 2018, section 13.1.

    Examples
    --------
    >>> tabular_softmax_policy([[0.0, 0.0], [0.0, np.log(3.0)]])
    array([[0.5 , 0.5 ],
           [0.25, 0.75]])
    """
    logits = _check_tabular_logits(logits)
    return special.softmax(logits, axis=1)


def trajectory_log_probability(
    logits: ArrayLike,
    transition: ArrayLike,
    initial: ArrayLike,
    states: ArrayLike,
    actions: ArrayLike,
    terminal: ArrayLike | None = None,
) -> float:
    """Log-probability of an episode under a tabular softmax policy and the MDP's dynamics.

        log p_θ(τ) = log ρ0(s_0) + Σ_{t<T} [log π_θ(a_t | s_t) + log P(s_{t+1} | s_t, a_t)].

    Only the policy terms depend on θ, which is why the gradient
    (:func:`trajectory_score`) needs no model of the environment.

    Book: equation (eq-trajectory-probability), chapter 3.

    Parameters
    ----------
    logits : array_like, shape (S, A)
        Policy logits θ.
    transition : array_like, shape (S, A, S)
        transition[s, a, s'] = P(s' | s, a); every row a distribution.
    initial : array_like, shape (S,)
        Start distribution ρ0.
    states : array_like of int, shape (T + 1,)
        s_0, ..., s_T.
    actions : array_like of int, shape (T,)
        a_0, ..., a_{T-1}; a trailing block of -1 (steps after the episode ended) is
        skipped, together with the states after it.
    terminal : array_like of bool, shape (S,), optional
        Terminal states, as in :func:`rlfound.mdp.state_values`: the episode ends on
        entering one, so their rows of ``transition`` are ignored (they may be all zero).

    Returns
    -------
    float
        log p_θ(τ); ``-inf`` for an episode the start distribution or the dynamics cannot
        produce.

    Raises
    ------
    ValueError
        If ``logits`` is not (S, A) matching ``transition``, ``transition`` or ``initial``
        is not made of distributions (rows of terminal states excepted), ``states``/
        ``actions`` are not index arrays in range with T + 1 and T entries (-1 allowed only
        as trailing padding of actions), or an action is taken in a terminal state.

    References
    ----------
    R. J. Williams, "Simple statistical gradient-following algorithms for connectionist
    reinforcement learning", *Machine Learning* 8, 229-256, 1992.

    Examples
    --------
    >>> transition = np.zeros((2, 2, 2)); transition[:, :, 1] = 1.0
    >>> trajectory_log_probability(np.zeros((2, 2)), transition, [1.0, 0.0],
    ...                            states=[0, 1], actions=[1])
    -0.6931471805599453
    """
    logits = _check_tabular_logits(logits)
    transition = _check_transition(transition)
    _check_logits_for_transition(logits, transition)
    num_states, num_actions, _ = transition.shape
    terminal = _check_terminal_mask(terminal, num_states)
    _check_live_rows(transition, "transition", terminal)
    initial = _check_initial(initial, num_states)
    states, actions, length = _check_episode(states, actions, num_states, num_actions)
    acting_in_terminal = terminal[states[:length]]
    if acting_in_terminal.any():
        step = int(np.flatnonzero(acting_in_terminal)[0])
        raise ValueError(
            f"actions must end when a terminal state is entered (pad with -1); got action "
            f"{int(actions[step])} at step {step} in terminal state {int(states[step])}"
        )

    log_policy = special.log_softmax(logits, axis=1)
    here, chosen, there = states[:length], actions[:length], states[1 : length + 1]
    # log 0 = -inf is the right answer for an impossible episode, not a warning.
    with np.errstate(divide="ignore"):
        return float(
            np.log(initial[states[0]])
            + log_policy[here, chosen].sum()
            + np.log(transition[here, chosen, there]).sum()
        )


def trajectory_score(logits: ArrayLike, states: ArrayLike, actions: ArrayLike) -> np.ndarray:
    """Gradient of an episode's log-probability with respect to the policy logits.

        ∇_θ log p_θ(τ) = Σ_{t<T} ∇_θ log π_θ(a_t | s_t)
                       = Σ_{t<T} e_{s_t} ⊗ (e_{a_t} - π_θ(· | s_t)).

    The start distribution and the transition probabilities do not depend on θ and drop
    out, so the score needs only the visited states and the chosen actions: row s collects
    e_a - π(· | s) once for every visit to s.

    Book: equation (eq-trajectory-score), chapter 3.

    Parameters
    ----------
    logits : array_like, shape (S, A)
        Policy logits θ.
    states : array_like of int, shape (T + 1,)
        s_0, ..., s_T (s_T is not used: no action is taken there).
    actions : array_like of int, shape (T,)
        a_0, ..., a_{T-1}, with optional trailing -1 padding, which is skipped.

    Returns
    -------
    numpy.ndarray, shape (S, A)
        ∇_θ log p_θ(τ); rows of unvisited states are 0 and every row sums to 0.

    Raises
    ------
    ValueError
        If ``logits`` is not a finite (S, A) array, or ``states``/``actions`` are not index
        arrays in range with T + 1 and T entries (-1 only as trailing padding of actions).

    References
    ----------
    R. J. Williams, "Simple statistical gradient-following algorithms for connectionist
    reinforcement learning", *Machine Learning* 8, 229-256, 1992.

    Examples
    --------
    >>> trajectory_score(np.zeros((2, 2)), states=[0, 0, 1], actions=[1, 1])
    array([[-1.,  1.],
           [ 0.,  0.]])
    """
    logits = _check_tabular_logits(logits)
    states, actions, length = _check_episode(states, actions, *logits.shape)

    policy = special.softmax(logits, axis=1)
    score = np.zeros_like(logits)
    for t in range(length):  # the padded steps after the end carry no action
        score[states[t]] -= policy[states[t]]
        score[states[t], actions[t]] += 1.0
    return score


def expected_return(
    logits: ArrayLike,
    transition: ArrayLike,
    reward: ArrayLike,
    initial: ArrayLike,
    gamma: float,
    terminal: ArrayLike | None = None,
) -> float:
    """Expected discounted return of a tabular softmax policy, exactly.

        J(θ) = E[Σ_t γ^t r_t] = Σ_s ρ0(s) V^{π_θ}(s),

    with V^π from the Bellman expectation equation (:func:`rlfound.mdp.state_values`).
    The objective whose gradient REINFORCE estimates; differentiating this exact value by
    finite differences gives the reference gradient.

    Book: equation (eq-reinforce-total), chapter 3.

    Parameters
    ----------
    logits : array_like, shape (S, A)
        Policy logits θ.
    transition : array_like, shape (S, A, S)
        transition[s, a, s'] = P(s' | s, a).
    reward : array_like, shape (S, A, S)
        reward[s, a, s'] = R(s, a, s').
    initial : array_like, shape (S,)
        Start distribution ρ0.
    gamma : float
        Discount factor γ in [0, 1] (γ = 1 needs every state to reach a terminal state).
    terminal : array_like of bool, shape (S,), optional
        Terminal states (worth 0; their rows are ignored).

    Returns
    -------
    float
        J(θ).

    Raises
    ------
    ValueError
        If ``logits`` does not have the (S, A) of ``transition``, the MDP arrays or
        ``initial`` are malformed, or ``gamma`` is invalid (see
        :func:`rlfound.mdp.state_values`).

    References
    ----------
    R. S. Sutton, D. McAllester, S. Singh and Y. Mansour, "Policy gradient methods for
    reinforcement learning with function approximation", NeurIPS, 2000.

    Examples
    --------
    >>> transition = np.zeros((2, 2, 2)); transition[:, :, 1] = 1.0
    >>> reward = np.zeros((2, 2, 2)); reward[0, 1, 1] = 1.0
    >>> expected_return([[0.0, np.log(3.0)], [0.0, 0.0]], transition, reward, [1.0, 0.0],
    ...                 gamma=1.0, terminal=np.array([False, True]))
    0.75
    """
    logits = _check_tabular_logits(logits)
    transition = _check_transition(transition)
    _check_logits_for_transition(logits, transition)
    initial = _check_initial(initial, transition.shape[0])
    policy = special.softmax(logits, axis=1)
    values = state_values(transition, reward, policy, gamma, terminal=terminal)
    return float(initial @ values)


def reinforce_trajectory_gradient(
    logits: ArrayLike,
    states: ArrayLike,
    actions: ArrayLike,
    rewards: ArrayLike,
    gamma: float,
    reward_to_go: bool = True,
    baseline: ArrayLike | None = None,
) -> np.ndarray:
    """REINFORCE estimate of ∇J from one episode of a tabular softmax policy.

        ĝ = Σ_t w_t ∇_θ log π_θ(a_t | s_t),

    with weight w_t = G_0 = Σ_k γ^k r_k (the total return, ``reward_to_go=False``) or
    w_t = γ^t G_t with G_t = Σ_{k>=t} γ^(k-t) r_k (the reward to go, the default), and,
    when a baseline b(s) is given, w_t -= γ^t b(s_t) in either form. All these are
    unbiased for the gradient of J(θ) = E[Σ_t γ^t r_t]: rewards earned before a_t do not
    depend on it, and neither does b(s_t), so both average to zero against the score; the
    reward to go and the baseline only reduce the variance. γ = 1 is the usual setting for
    language-model agents.

    Book: equations (eq-reinforce-total) and (eq-reinforce-rtg), chapter 3.

    Parameters
    ----------
    logits : array_like, shape (S, A)
        Logits θ of the policy that generated the episode.
    states : array_like of int, shape (T + 1,)
        s_0, ..., s_T.
    actions : array_like of int, shape (T,)
        a_0, ..., a_{T-1}, with optional trailing -1 padding (steps after the episode
        ended), which is skipped.
    rewards : array_like, shape (T,)
        r_0, ..., r_{T-1}; 0 at padded steps.
    gamma : float
        Discount factor γ in [0, 1].
    reward_to_go : bool, optional
        Weight step t by γ^t G_t (True, default) or by G_0 (False).
    baseline : array_like, shape (S,), optional
        State-dependent baseline b(s). Default: none.

    Returns
    -------
    numpy.ndarray, shape (S, A)
        The one-episode estimate ĝ.

    Raises
    ------
    ValueError
        As :func:`trajectory_score`; and if ``rewards`` does not have one entry per step,
        is non-finite or non-zero at a padded step, ``gamma`` is outside [0, 1],
        ``reward_to_go`` is not a bool, or ``baseline`` is not a finite (S,) array.

    References
    ----------
    R. J. Williams, "Simple statistical gradient-following algorithms for connectionist
    reinforcement learning", *Machine Learning* 8, 229-256, 1992.
    E. Greensmith, P. L. Bartlett and J. Baxter, "Variance reduction techniques for gradient
    estimates in reinforcement learning", *JMLR* 5, 1471-1530, 2004.

    Examples
    --------
    Two steps in state 0 and a reward only for the first: with the total return the
    second action shares the credit (and here cancels the first's); with the reward to go
    it gets none.

    >>> reinforce_trajectory_gradient(np.zeros((1, 2)), [0, 0, 0], [0, 1], [1.0, 0.0],
    ...                               gamma=1.0, reward_to_go=False)
    array([[0., 0.]])
    >>> reinforce_trajectory_gradient(np.zeros((1, 2)), [0, 0, 0], [0, 1], [1.0, 0.0],
    ...                               gamma=1.0)
    array([[ 0.5, -0.5]])
    """
    logits = _check_tabular_logits(logits)
    states, actions, length = _check_episode(states, actions, *logits.shape)
    rewards = as_float_array(rewards, "rewards", ndim=1)
    if rewards.shape != actions.shape:
        raise ValueError(
            f"rewards must have one entry per action, shape {actions.shape}; "
            f"got shape {rewards.shape}"
        )
    if np.any(rewards[length:] != 0.0):
        late = length + int(np.flatnonzero(rewards[length:])[0])
        raise ValueError(
            "rewards must be 0 after the episode ended (where actions are -1); "
            f"got {float(rewards[late])!r} at index {late}"
        )
    gamma = check_unit_interval(gamma, "gamma")
    if not isinstance(reward_to_go, (bool, np.bool_)):
        raise ValueError(f"reward_to_go must be True or False; got {reward_to_go!r}")
    if baseline is not None:
        baseline = as_float_array(baseline, "baseline", ndim=1)
        if baseline.shape != (logits.shape[0],):
            raise ValueError(
                f"baseline must have one entry per state, shape ({logits.shape[0]},); "
                f"got shape {baseline.shape}"
            )

    rewards = rewards[:length]
    discounts = gamma ** np.arange(length)  # γ^0 = 1 even when γ = 0
    if reward_to_go:
        to_go = np.zeros(length)
        future = 0.0
        for t in reversed(range(length)):
            future = rewards[t] + gamma * future
            to_go[t] = future
        weights = discounts * to_go
    else:
        weights = np.full(length, discounts @ rewards)
    if baseline is not None:
        weights = weights - discounts * baseline[states[:length]]

    policy = special.softmax(logits, axis=1)
    gradient = np.zeros_like(logits)
    for t in range(length):
        score = -policy[states[t]]  # ∇ log π(a_t | s_t) lives in row s_t: e_{a_t} - π(· | s_t)
        score[actions[t]] += 1.0
        gradient[states[t]] += weights[t] * score
    return gradient


def enumerate_group_gradient(
    logits: ArrayLike,
    action_values: ArrayLike,
    group_size: int,
    advantage_fn: Callable[[np.ndarray], ArrayLike],
) -> np.ndarray:
    """Exact expectation of a group policy-gradient estimator on a bandit, by enumeration.

    A group of G actions a_1, ..., a_G is drawn independently from π_θ, each earns the
    deterministic reward q(a_i), the rewards are turned into advantages
    A = advantage_fn(q(a_1), ..., q(a_G)), and the estimator is

        ĝ = (1/G) Σ_i A_i (e_{a_i} - π_θ).

    Its expectation Σ_{(a_1..a_G)} Π_i π(a_i) ĝ is summed over all K^G tuples, with no
    sampling error, so a finite-sample baseline's bias is measured exactly: compare with
    :func:`exact_bandit_gradient`. A leave-one-out baseline is unbiased; a group mean that
    includes the sample itself scales the gradient by (G - 1)/G.

    Book: equation (eq-loo-baseline), chapter 3.

    Parameters
    ----------
    logits : array_like, shape (K,)
        Logits θ of the bandit policy.
    action_values : array_like, shape (K,)
        Deterministic reward q(a) of each action.
    group_size : int
        Group size G >= 1.
    advantage_fn : callable
        Maps the rewards of one group, a float64 array of shape (G,), to advantages of
        shape (G,), e.g. :func:`rlfound.groups.leave_one_out_advantages`.

    Returns
    -------
    numpy.ndarray, shape (K,)
        E[ĝ].

    Raises
    ------
    ValueError
        If ``logits`` and ``action_values`` are not finite 1-D arrays of equal length,
        ``group_size`` is not a positive integer or K^G exceeds one million (naming
        ``group_size``), or ``advantage_fn`` is not callable or returns something other
        than G finite numbers.

    References
    ----------
    W. Kool, H. van Hoof and M. Welling, "Buy 4 REINFORCE samples, get a baseline for free!",
    ICLR Workshop, 2019.
    A. Ahmadian, C. Cremer, M. Gallé, M. Fadaee, J. Kreutzer, O. Pietquin, A. Üstün and
    S. Hooker, "Back to basics: revisiting REINFORCE-style optimization for learning from
    human feedback in LLMs", ACL, 2024.

    Examples
    --------
    >>> def centred(rewards):
    ...     return rewards - rewards.mean()
    >>> enumerate_group_gradient([0.0, 0.0], [1.0, 3.0], group_size=2, advantage_fn=centred)
    array([-0.25,  0.25])
    >>> exact_bandit_gradient([0.0, 0.0], [1.0, 3.0])  # twice as large: (G - 1)/G = 1/2
    array([-0.5,  0.5])
    """
    logits, action_values = _check_logits_and_values(logits, action_values)
    group_size = check_positive_int(group_size, "group_size")
    num_actions = logits.shape[0]
    if num_actions**group_size > MAX_ENUMERATION:
        raise ValueError(
            f"group_size must keep K**group_size <= {MAX_ENUMERATION} action tuples; "
            f"got {num_actions}**{group_size} = {num_actions**group_size}"
        )
    if not callable(advantage_fn):
        raise ValueError(f"advantage_fn must be callable; got {advantage_fn!r}")

    policy = softmax(logits)
    identity = np.eye(num_actions)
    expectation = np.zeros(num_actions)
    for group in itertools.product(range(num_actions), repeat=group_size):
        group = np.array(group)
        advantages = _call_advantage_fn(advantage_fn, action_values[group].copy(), group_size)
        estimate = advantages @ (identity[group] - policy) / group_size
        expectation += np.prod(policy[group]) * estimate
    return expectation


def _call_advantage_fn(
    advantage_fn: Callable[[np.ndarray], ArrayLike], rewards: np.ndarray, group_size: int
) -> np.ndarray:
    """advantage_fn(rewards), checked to be G finite numbers."""
    try:
        advantages = np.asarray(advantage_fn(rewards), dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise ValueError(
            f"advantage_fn must map rewards of shape ({group_size},) to {group_size} numbers; "
            f"it raised {error!r}"
        ) from error
    if advantages.shape != (group_size,) or not np.all(np.isfinite(advantages)):
        raise ValueError(
            f"advantage_fn must return {group_size} finite numbers, shape ({group_size},); "
            f"got {advantages!r} for rewards {rewards!r}"
        )
    return advantages
