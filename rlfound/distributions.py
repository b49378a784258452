"""Categorical distributions given by logits: softmax, log-softmax and the score e_a - π.

A categorical distribution over K outcomes (the actions of a bandit, the actions in one state
of a tabular policy, the tokens of a vocabulary) is parameterized by logits θ, with
probabilities π_θ(a) = exp(θ_a) / Σ_b exp(θ_b). Everything a policy-gradient method needs from
it is here: the probabilities, the log-probabilities, and the score ∇_θ log π_θ(a) = e_a - π_θ,
which is computed in this one place and reused by the bandit, trajectory, token and group
estimators of the other modules.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

from rlfound._validation import check_categories, check_logits, finite_output

__all__ = ["categorical_score", "log_softmax", "softmax"]


@finite_output()
def softmax(logits: ArrayLike, axis: int = -1) -> np.ndarray:
    """Softmax probabilities, computed stably.

        π(a) = exp(θ_a) / Σ_b exp(θ_b) = exp(θ_a - logsumexp(θ)).

    Subtracting the largest logit first (as SciPy does) avoids overflow, so logits of any
    finite size are safe. A 2-D array of logits of shape (S, A) gives the tabular softmax
    policy, one distribution π(· | s) per row.

    Book: equation (eq-softmax-policy), chapter 1.

    Parameters
    ----------
    logits : array_like, shape (..., K, ...)
        Logits θ; at least one dimension.
    axis : int, optional
        Axis holding the K categories. Default: the last.

    Returns
    -------
    numpy.ndarray
        Probabilities with the shape of ``logits``, summing to 1 along ``axis``.

    Raises
    ------
    ValueError
        If ``logits`` is a scalar, non-finite or empty along ``axis``, or ``axis`` is out of
        range.

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
    >>> softmax([[0.0, 0.0], [0.0, np.log(3.0)]])  # a tabular policy, one row per state
    array([[0.5 , 0.5 ],
           [0.25, 0.75]])
    """
    logits = check_logits(logits, axis=axis)
    return special.softmax(logits, axis=axis)


@finite_output()
def log_softmax(logits: ArrayLike, axis: int = -1) -> np.ndarray:
    """Log-probabilities of a softmax distribution, computed stably.

        log π(a) = θ_a - logsumexp(θ) = θ_a - log Σ_b exp(θ_b).

    This stays finite where ``log(softmax(logits))`` would underflow to ``-inf``.

    Book: equation (eq-softmax-policy), chapter 1.

    Parameters
    ----------
    logits : array_like, shape (..., K, ...)
        Logits θ; at least one dimension.
    axis : int, optional
        Axis holding the K categories. Default: the last.

    Returns
    -------
    numpy.ndarray
        Log-probabilities with the shape of ``logits``.

    Raises
    ------
    ValueError
        As :func:`softmax`.

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
    logits = check_logits(logits, axis=axis)
    return special.log_softmax(logits, axis=axis)


@finite_output()
def categorical_score(logits: ArrayLike, actions: ArrayLike) -> np.ndarray:
    """Score function of a softmax distribution: the gradient of log π_θ(a) with respect to θ.

        ∇_θ log π_θ(a) = e_a - π_θ,

    where e_a is the one-hot vector of a. Its expectation under π_θ is zero,
    Σ_a π_θ(a) (e_a - π_θ) = π_θ - π_θ = 0, which is why a baseline can be subtracted from the
    reward without biasing a policy gradient.

    One call scores many actions: ``logits`` of shape (..., K) hold one distribution per
    action, or a single distribution of shape (K,) scores every entry of ``actions``.

    Book: equation (eq-score-softmax), chapter 1.

    Parameters
    ----------
    logits : array_like, shape (K,) or (..., K)
        Logits θ; the leading shape, if any, must be that of ``actions``.
    actions : int or array_like of int, shape (...)
        Actions a in [0, K).

    Returns
    -------
    numpy.ndarray, shape (..., K)
        e_a - π_θ for each action; every row sums to 0.

    Raises
    ------
    ValueError
        If ``logits`` is not finite and at least 1-D with K >= 1, ``actions`` holds anything
        but integers in [0, K), or the leading shape of ``logits`` (when it has one) differs
        from the shape of ``actions``.

    References
    ----------
    R. J. Williams, "Simple statistical gradient-following algorithms for connectionist
    reinforcement learning", *Machine Learning* 8, 229-256, 1992.

    Examples
    --------
    >>> categorical_score([0.0, 0.0], 1)
    array([-0.5,  0.5])
    >>> categorical_score([0.0, 0.0], [1, 0, 1])  # one distribution, three sampled actions
    array([[-0.5,  0.5],
           [ 0.5, -0.5],
           [-0.5,  0.5]])
    """
    logits = check_logits(logits)
    actions = check_categories(actions, "actions", logits)

    onehot = np.eye(logits.shape[-1])[actions]
    return onehot - special.softmax(logits, axis=-1)
