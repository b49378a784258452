"""Exercise ``group-advantages`` (chapter 7, two stars): group advantages with three scales.

A batch of groups holds the rewards R_1, ..., R_N of N responses to one prompt on its last
axis; leading axes index the prompts (shape (..., N), N >= 2). Implement four advantages:

* :func:`rloo_advantages`: R_i minus the mean of the *other* N - 1 rewards of its group;
* :func:`dr_grpo_advantages`: R_i minus the mean of its whole group (Dr. GRPO);
* :func:`grpo_advantages`: (R_i - group mean) / (group std + eps) (GRPO);
* :func:`batch_normalized_advantages`: (R_i - group mean) / (std of every reward of the
  batch + eps), the ``scale_rewards="batch"`` of TRL.

Each std removes ``ddof`` degrees of freedom (divisor: number of rewards - ddof). A group
whose rewards are all equal must get exactly 0 (not 1e-17 / eps). Bad input raises
``ValueError`` whose message starts with the argument's name: fewer than 2 members per group
or non-finite rewards (``rewards``), a negative ``eps``, a ``ddof`` that is not an integer
smaller than the number of rewards its std uses. Then prove the RLOO identity
R_i - mean of the others = N / (N - 1) (R_i - group mean).
"""

from __future__ import annotations

import numpy as np


def rloo_advantages(rewards):
    """Leave-one-out advantages R_i - (1 / (N - 1)) Σ_{k≠i} R_k.

    Parameters
    ----------
    rewards : array_like
        Shape (..., N), N >= 2: rewards of each group on the last axis.

    Returns
    -------
    numpy.ndarray
        Shape (..., N), float64.

    Raises
    ------
    ValueError
        If ``rewards`` has fewer than 2 members per group or is not finite.

    Examples
    --------
    >>> rloo_advantages([3.0, 1.0, 2.0]).tolist()
    [1.5, -1.5, 0.0]
    """
    ### BEGIN SOLUTION
    rewards = np.asarray(rewards, dtype=np.float64)
    if rewards.ndim == 0 or rewards.shape[-1] < 2:
        raise ValueError(f"rewards must have at least 2 members per group; got {rewards.shape}")
    if not np.all(np.isfinite(rewards)):
        raise ValueError("rewards must be finite; got a NaN or an infinity")
    size = rewards.shape[-1]
    others = (rewards.sum(axis=-1, keepdims=True) - rewards) / (size - 1)
    advantages = rewards - others
    # Equal rewards: exactly zero, whatever the rounding of the sums.
    constant = np.all(rewards == rewards[..., :1], axis=-1, keepdims=True)
    return np.where(constant, 0.0, advantages)
    ### END SOLUTION


def dr_grpo_advantages(rewards):
    """Centered rewards R_i - mean(R) of each group (Dr. GRPO).

    Parameters
    ----------
    rewards : array_like
        Shape (..., N), N >= 2.

    Returns
    -------
    numpy.ndarray
        Shape (..., N), float64.

    Raises
    ------
    ValueError
        If ``rewards`` has fewer than 2 members per group or is not finite.

    Examples
    --------
    >>> dr_grpo_advantages([3.0, 1.0, 2.0]).tolist()
    [1.0, -1.0, 0.0]
    """
    ### BEGIN SOLUTION
    rewards = np.asarray(rewards, dtype=np.float64)
    if rewards.ndim == 0 or rewards.shape[-1] < 2:
        raise ValueError(f"rewards must have at least 2 members per group; got {rewards.shape}")
    if not np.all(np.isfinite(rewards)):
        raise ValueError("rewards must be finite; got a NaN or an infinity")
    centered = rewards - rewards.mean(axis=-1, keepdims=True)
    constant = np.all(rewards == rewards[..., :1], axis=-1, keepdims=True)
    return np.where(constant, 0.0, centered)
    ### END SOLUTION


def grpo_advantages(rewards, eps, ddof):
    """GRPO advantages (R_i - group mean) / (group std + eps).

    Parameters
    ----------
    rewards : array_like
        Shape (..., N), N >= 2.
    eps : float
        Non-negative constant added to the std.
    ddof : int
        Degrees of freedom removed from the std (0: NumPy's default, 1: PyTorch's); < N.

    Returns
    -------
    numpy.ndarray
        Shape (..., N), float64; exactly 0 for a group of equal rewards.

    Raises
    ------
    ValueError
        For fewer than 2 members or non-finite ``rewards``, a negative ``eps``, or a
        ``ddof`` that is not an integer in [0, N).

    Examples
    --------
    >>> grpo_advantages([1.0, 3.0], eps=0.0, ddof=0).tolist()
    [-1.0, 1.0]
    """
    ### BEGIN SOLUTION
    rewards = np.asarray(rewards, dtype=np.float64)
    if rewards.ndim == 0 or rewards.shape[-1] < 2:
        raise ValueError(f"rewards must have at least 2 members per group; got {rewards.shape}")
    if not np.all(np.isfinite(rewards)):
        raise ValueError("rewards must be finite; got a NaN or an infinity")
    if not (np.isfinite(eps) and eps >= 0):
        raise ValueError(f"eps must be a non-negative finite number; got {eps}")
    size = rewards.shape[-1]
    if int(ddof) != ddof or not 0 <= ddof < size:
        raise ValueError(f"ddof must be an integer in [0, {size}); got {ddof}")
    centered = rewards - rewards.mean(axis=-1, keepdims=True)
    std = np.sqrt((centered**2).sum(axis=-1, keepdims=True) / (size - ddof))
    constant = np.all(rewards == rewards[..., :1], axis=-1, keepdims=True)
    # np.where evaluates both branches; the division by a zero std is discarded.
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(constant, 0.0, centered / (std + eps))
    ### END SOLUTION


def batch_normalized_advantages(rewards, eps, ddof):
    """(R_i - group mean) / (std of all rewards of the batch + eps).

    Parameters
    ----------
    rewards : array_like
        Shape (..., N), N >= 2; the std is taken over every entry.
    eps : float
        Non-negative constant added to the std.
    ddof : int
        Degrees of freedom removed from the batch std; smaller than the number of rewards.

    Returns
    -------
    numpy.ndarray
        Shape (..., N), float64; exactly 0 for a group of equal rewards.

    Raises
    ------
    ValueError
        For fewer than 2 members or non-finite ``rewards``, a negative ``eps``, or a
        ``ddof`` that is not an integer in [0, number of rewards).

    Examples
    --------
    >>> batch_normalized_advantages([[0.0, 2.0], [2.0, 4.0]], eps=0.0, ddof=0).round(4).tolist()
    [[-0.7071, 0.7071], [-0.7071, 0.7071]]
    """
    ### BEGIN SOLUTION
    rewards = np.asarray(rewards, dtype=np.float64)
    if rewards.ndim == 0 or rewards.shape[-1] < 2:
        raise ValueError(f"rewards must have at least 2 members per group; got {rewards.shape}")
    if not np.all(np.isfinite(rewards)):
        raise ValueError("rewards must be finite; got a NaN or an infinity")
    if not (np.isfinite(eps) and eps >= 0):
        raise ValueError(f"eps must be a non-negative finite number; got {eps}")
    if int(ddof) != ddof or not 0 <= ddof < rewards.size:
        raise ValueError(f"ddof must be an integer in [0, {rewards.size}); got {ddof}")
    centered = rewards - rewards.mean(axis=-1, keepdims=True)
    std = np.sqrt(((rewards - rewards.mean()) ** 2).sum() / (rewards.size - ddof))
    constant = np.all(rewards == rewards[..., :1], axis=-1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(constant, 0.0, centered / (std + eps))
    ### END SOLUTION
