"""Group baselines: advantages computed from several samples of the same prompt or task.

A group is N responses sampled independently for one prompt; their rewards R_1, ..., R_N lie
on the last axis of ``rewards`` (shape (..., N)), and any leading axes index independent
groups. The other members of a group give a baseline without a learned critic. Whether that
baseline leaves the policy gradient unbiased depends on the details: a baseline built from
the *other* members is independent of sample i, one that includes R_i is not.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike

from rlfound._validation import (
    as_float_array,
    check_bool,
    check_callable,
    check_enumeration_size,
    check_last_axis,
    check_logits,
    check_nonnegative_int,
    check_nonnegative_real,
    check_positive_int,
    check_shape,
)
from rlfound.distributions import categorical_score, softmax

__all__ = ["enumerate_group_gradient", "group_normalized_advantages", "leave_one_out_advantages"]


def leave_one_out_advantages(rewards: ArrayLike) -> np.ndarray:
    """Leave-one-out (RLOO) advantages: each reward minus the mean of the others in its group.

        A_i = R_i - (1 / (N - 1)) Σ_{k≠i} R_k = (N / (N - 1)) (R_i - mean(R)).

    The baseline of sample i uses only the other samples, which are independent of a_i, so
    E[A_i ∇ log π(a_i)] is exactly the policy gradient: the baseline costs no bias.

    Book: equation (eq-loo-baseline), chapter 3.

    Parameters
    ----------
    rewards : array_like, shape (..., N)
        Rewards of each group on the last axis; N >= 2.

    Returns
    -------
    numpy.ndarray, shape (..., N)
        The advantages A_i; they sum to 0 within each group.

    Raises
    ------
    ValueError
        If ``rewards`` is a scalar, non-finite, or has fewer than 2 entries per group.

    References
    ----------
    W. Kool, H. van Hoof and M. Welling, "Buy 4 REINFORCE samples, get a baseline for free!",
    ICLR Workshop, 2019.
    A. Ahmadian, C. Cremer, M. Gallé, M. Fadaee, J. Kreutzer, O. Pietquin, A. Üstün and
    S. Hooker, "Back to basics: revisiting REINFORCE-style optimization for learning from
    human feedback in LLMs", ACL, 2024.

    Examples
    --------
    >>> leave_one_out_advantages([1.0, 0.0, 0.0, 1.0])
    array([ 0.66666667, -0.66666667, -0.66666667,  0.66666667])
    """
    rewards = as_float_array(rewards, "rewards", min_ndim=1)
    check_last_axis(rewards, "rewards", 2, "members per group on the last axis")

    size = rewards.shape[-1]
    others_mean = (rewards.sum(axis=-1, keepdims=True) - rewards) / (size - 1)
    return rewards - others_mean


def group_normalized_advantages(
    rewards: ArrayLike, eps: float = 1e-6, ddof: int = 0, include_self: bool = True
) -> np.ndarray:
    """Group-normalized (GRPO-style) advantages: rewards standardized within their group.

        A_i = (R_i - mean) / (std + eps),

    with mean and std (``ddof`` degrees of freedom removed) taken over the whole group when
    ``include_self`` is True, or over the other N - 1 members when it is False. The result is
    unchanged by adding a constant to a group's rewards or by scaling them by a positive
    factor (up to ``eps``), and a group whose rewards are all equal gets exactly 0: it
    carries no learning signal.

    Both statistics depend on the samples, so unlike :func:`leave_one_out_advantages` this
    estimator is biased for the policy gradient at finite N; the division by the std also
    reweights groups (easy and hard prompts with small reward spread count more).
    Shao et al. (2024) introduced the normalization in GRPO; Liu et al. (2025, "Dr. GRPO")
    drop the division by the std and keep only R_i - mean. Implementations differ in the
    std estimator: ``torch.Tensor.std``, which PyTorch code often calls, defaults to the
    unbiased ddof = 1, NumPy to ddof = 0.

    Book: equation (eq-loo-baseline), chapter 3.

    Parameters
    ----------
    rewards : array_like, shape (..., N)
        Rewards of each group on the last axis.
    eps : float, optional
        Non-negative constant added to the std; it keeps the division finite. With
        ``eps = 0`` a group of equal rewards still gets 0 (but with ``include_self=False``
        a sample whose other members are all equal to each other and not to it has no
        finite advantage, which raises).
    ddof : int, optional
        Delta degrees of freedom of the std: divisor n - ddof, where n = N (or N - 1 when
        ``include_self`` is False); must be < n.
    include_self : bool, optional
        Whether R_i enters the mean and std used for sample i.

    Returns
    -------
    numpy.ndarray, shape (..., N)
        The advantages.

    Raises
    ------
    ValueError
        If ``rewards`` is a scalar or non-finite, or has too few members per group (N >= 1,
        or N >= 2 without self); ``eps`` is negative or not finite, or 0 where a std is 0
        and the advantage would be infinite; ``ddof`` is not a
        non-negative integer below the number of members used; or ``include_self`` is not
        a bool.

    References
    ----------
    Z. Shao, P. Wang, Q. Zhu, R. Xu, J. Song, X. Bi, H. Zhang, M. Zhang, Y. K. Li, Y. Wu
    and D. Guo, "DeepSeekMath: pushing the limits of mathematical reasoning in open language
    models", arXiv:2402.03300, 2024.
    Z. Liu, C. Chen, W. Li, P. Qi, T. Pang, C. Du, W. S. Lee and M. Lin, "Understanding
    R1-Zero-like training: a critical perspective", arXiv:2503.20783, 2025.

    Examples
    --------
    >>> group_normalized_advantages([1.0, 0.0, 0.0, 1.0])
    array([ 0.999998, -0.999998, -0.999998,  0.999998])
    >>> group_normalized_advantages([[0.5, 0.5], [1.0, 3.0]], eps=0.0)
    array([[ 0.,  0.],
           [-1.,  1.]])
    """
    include_self = check_bool(include_self, "include_self")
    rewards = as_float_array(rewards, "rewards", min_ndim=1)
    if include_self:
        check_last_axis(rewards, "rewards", 1, "member per group on the last axis")
    else:
        check_last_axis(rewards, "rewards", 2, "members per group to leave one out")
    eps = check_nonnegative_real(eps, "eps")
    ddof = check_nonnegative_int(ddof, "ddof")
    size = rewards.shape[-1]
    members = size if include_self else size - 1
    if ddof >= members:
        raise ValueError(
            f"ddof must be smaller than the number of members in each statistic ({members}); "
            f"got {ddof}"
        )

    if include_self:
        mean = rewards.mean(axis=-1, keepdims=True)
        centered_sq = ((rewards - mean) ** 2).sum(axis=-1, keepdims=True)
        variance = centered_sq / (members - ddof)
    else:
        total = rewards.sum(axis=-1, keepdims=True)
        mean = (total - rewards) / members
        # Sum of squares of the others about their own mean, for each left-out i.
        others_sq = np.stack(
            [
                ((np.delete(rewards, i, axis=-1) - mean[..., i : i + 1]) ** 2).sum(axis=-1)
                for i in range(size)
            ],
            axis=-1,
        )
        variance = others_sq / (members - ddof)
    centered = rewards - mean
    # A group of equal rewards must give exact zeros; rounding in the mean would otherwise
    # leave residues of order 1e-17 that eps = 0 would blow up.
    constant = np.all(rewards == rewards[..., :1], axis=-1, keepdims=True)
    centered = np.where(constant, 0.0, centered)
    scale = np.sqrt(variance) + eps
    undefined = (scale == 0.0) & (centered != 0.0)
    if undefined.any():
        index = tuple(int(i) for i in np.argwhere(undefined)[0])
        raise ValueError(
            "eps must be > 0 when a std is 0 (or underflows to 0) although the sample differs "
            f"from the mean: its advantage would be infinite; got eps = 0.0 at index {index}"
        )
    return np.divide(centered, scale, out=np.zeros_like(centered), where=centered != 0.0)


def enumerate_group_gradient(
    logits: ArrayLike,
    action_rewards: ArrayLike,
    group_size: int,
    advantage_fn: Callable[[np.ndarray], ArrayLike],
) -> np.ndarray:
    """Exact expectation of a group policy-gradient estimator on a bandit, by enumeration.

    A group of N actions a_1, ..., a_N is drawn independently from π_θ, each earns the
    deterministic reward q(a_i), the rewards are turned into advantages
    A = advantage_fn(q(a_1), ..., q(a_N)), and the estimator is

        ĝ = (1/N) Σ_i A_i (e_{a_i} - π_θ).

    Its expectation Σ_{(a_1..a_N)} Π_i π(a_i) ĝ is summed over all K^N tuples, with no
    sampling error, so a finite-sample baseline's bias is measured exactly: compare with
    :func:`rlfound.bandits.exact_bandit_gradient`. A leave-one-out baseline is unbiased; a
    group mean that includes the sample itself scales the gradient by (N - 1)/N.

    Book: equation (eq-loo-baseline), chapter 3.

    Parameters
    ----------
    logits : array_like, shape (K,)
        Logits θ of the bandit policy.
    action_rewards : array_like, shape (K,)
        Deterministic reward q(a) of each action.
    group_size : int
        Group size N >= 1.
    advantage_fn : callable
        Maps the rewards of one group, a float64 array of shape (N,), to advantages of
        shape (N,), e.g. :func:`rlfound.groups.leave_one_out_advantages`.

    Returns
    -------
    numpy.ndarray, shape (K,)
        E[ĝ].

    Raises
    ------
    ValueError
        If ``logits`` and ``action_rewards`` are not finite 1-D arrays of equal length,
        ``group_size`` is not a positive integer or K^N exceeds one million (naming
        ``group_size``), or ``advantage_fn`` is not callable or returns something other
        than N finite numbers.

    References
    ----------
    W. Kool, H. van Hoof and M. Welling, "Buy 4 REINFORCE samples, get a baseline for free!",
    ICLR Workshop, 2019.
    A. Ahmadian, C. Cremer, M. Gallé, M. Fadaee, J. Kreutzer, O. Pietquin, A. Üstün and
    S. Hooker, "Back to basics: revisiting REINFORCE-style optimization for learning from
    human feedback in LLMs", ACL, 2024.

    Examples
    --------
    >>> def centered(rewards):
    ...     return rewards - rewards.mean()
    >>> enumerate_group_gradient([0.0, 0.0], [1.0, 3.0], group_size=2, advantage_fn=centered)
    array([-0.25,  0.25])
    >>> from rlfound.bandits import exact_bandit_gradient
    >>> exact_bandit_gradient([0.0, 0.0], [1.0, 3.0])  # twice as large: (N - 1)/N = 1/2
    array([-0.5,  0.5])
    """
    logits = check_logits(logits, ndim=1)
    action_rewards = as_float_array(action_rewards, "action_rewards", ndim=1)
    check_shape(action_rewards, "action_rewards", logits.shape, "one entry per action")
    group_size = check_positive_int(group_size, "group_size")
    count = len(logits) ** group_size
    check_enumeration_size(count, "group_size", f"K**N = {len(logits)}**{group_size} = {count}")
    advantage_fn = check_callable(advantage_fn, "advantage_fn")

    probs = softmax(logits)
    expectation = np.zeros(len(logits))
    for group in itertools.product(range(len(logits)), repeat=group_size):
        group = np.array(group)
        advantages = _call_advantage_fn(advantage_fn, action_rewards[group].copy(), group_size)
        estimate = advantages @ categorical_score(logits, group) / group_size
        expectation += np.prod(probs[group]) * estimate  # Pr(a_1, ..., a_N) = Π_i π(a_i)
    return expectation


def _call_advantage_fn(
    advantage_fn: Callable[[np.ndarray], ArrayLike], rewards: np.ndarray, group_size: int
) -> np.ndarray:
    """advantage_fn(rewards), checked to be N finite numbers."""
    try:
        advantages = np.asarray(advantage_fn(rewards), dtype=np.float64)
    except Exception as error:  # a broken callable, whatever it raised, is a bad argument
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
