"""Exercise ``importance-sampling`` (chapter 1, two stars): the one-step importance-sampling value.

Logged actions come from a behavior policy ``mu``; we want the value of a target policy ``pi``
in a one-step problem where action ``a`` earns reward ``r(a)``. Importance sampling rewrites
the target expectation as an expectation under the behavior policy,

    E_{a ~ pi}[r(a)] = E_{a ~ mu}[rho(a) r(a)] = sum_a mu(a) rho(a) r(a),   rho(a) = pi(a) / mu(a).

Implement :func:`importance_sampling_value`, the exact right-hand side: an expectation over the
behavior distribution of the importance-weighted reward. (Returning ``sum_a pi(a) r(a)``
directly would give the same number but skip the point of the exercise.)

The identity needs support: every action the target policy can take must have ``mu(a) > 0``.
If ``mu(a) = 0`` while ``pi(a) > 0``, no logged sample can ever show that action and the
estimate is biased, so the function raises ``ValueError``.
"""

from __future__ import annotations

import numpy as np


def importance_sampling_value(target_probs, behavior_probs, rewards):
    """Exact value of the one-sample importance-sampling estimate, ``E_{a~mu}[pi(a)/mu(a) r(a)]``.

    Parameters
    ----------
    target_probs : array_like
        Shape (K,): the target policy ``pi``, non-negative and summing to 1.
    behavior_probs : array_like
        Shape (K,): the behavior policy ``mu`` that logged the data, non-negative and summing
        to 1.
    rewards : array_like
        Shape (K,): the reward ``r(a)`` of each action.

    Returns
    -------
    float
        ``sum_{a: mu(a) > 0} mu(a) * (pi(a) / mu(a)) * r(a)``.

    Raises
    ------
    ValueError
        If an argument is not a 1-D distribution (or reward vector) of the common length K,
        the message starts with its name; if ``mu(a) = 0`` for an action with ``pi(a) > 0``
        (no support), the message starts with ``behavior_probs``.

    Examples
    --------
    >>> importance_sampling_value([0.5, 0.5], [0.5, 0.5], [1.0, 3.0])  # on-policy: all ratios 1
    2.0
    """
    ### BEGIN SOLUTION
    target_probs = np.asarray(target_probs, dtype=np.float64)
    behavior_probs = np.asarray(behavior_probs, dtype=np.float64)
    rewards = np.asarray(rewards, dtype=np.float64)
    for name, probs in (("target_probs", target_probs), ("behavior_probs", behavior_probs)):
        if probs.ndim != 1 or np.any(probs < 0) or not np.isclose(probs.sum(), 1.0):
            raise ValueError(f"{name} must be a 1-D probability vector; got {probs}")
    if behavior_probs.shape != target_probs.shape:
        raise ValueError(
            f"behavior_probs must have the shape of target_probs {target_probs.shape}; "
            f"got {behavior_probs.shape}"
        )
    if rewards.shape != target_probs.shape:
        raise ValueError(f"rewards must have shape {target_probs.shape}; got {rewards.shape}")
    unsupported = (behavior_probs == 0) & (target_probs > 0)
    if np.any(unsupported):
        raise ValueError(
            "behavior_probs must be > 0 wherever target_probs > 0 (support); "
            f"got 0 at action(s) {np.flatnonzero(unsupported).tolist()}"
        )
    logged = behavior_probs > 0  # actions the behavior policy can actually log
    ratios = target_probs[logged] / behavior_probs[logged]
    return float(np.sum(behavior_probs[logged] * ratios * rewards[logged]))
    ### END SOLUTION
