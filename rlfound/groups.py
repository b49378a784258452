"""Group baselines: advantages computed from several samples of the same prompt or task.

A group is G responses sampled independently for one prompt; their rewards R_1, ..., R_G lie
on the last axis of ``rewards`` (shape (..., G)), and any leading axes index independent
groups. The other members of a group give a baseline without a learned critic. Whether that
baseline leaves the policy gradient unbiased depends on the details: a baseline built from
the *other* members is independent of sample i, one that includes R_i is not.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from rlfound._validation import as_float_array, check_nonnegative_int, check_nonnegative_real

__all__ = ["group_normalized_advantages", "leave_one_out_advantages"]


def _check_group_rewards(rewards: ArrayLike, minimum: int, why: str) -> np.ndarray:
    """Rewards of shape (..., G) with G >= minimum."""
    rewards = as_float_array(rewards, "rewards", min_ndim=1)
    if rewards.shape[-1] < minimum:
        raise ValueError(
            f"rewards must have at least {minimum} entries along the last axis (the group) "
            f"{why}; got shape {rewards.shape}"
        )
    return rewards


def leave_one_out_advantages(rewards: ArrayLike) -> np.ndarray:
    """Leave-one-out (RLOO) advantages: each reward minus the mean of the others in its group.

        A_i = R_i - (1 / (G - 1)) Σ_{k≠i} R_k = (G / (G - 1)) (R_i - mean(R)).

    The baseline of sample i uses only the other samples, which are independent of a_i, so
    E[A_i ∇ log π(a_i)] is exactly the policy gradient: the baseline costs no bias.

    Book: equation (eq-loo-baseline), chapter 3.

    Parameters
    ----------
    rewards : array_like, shape (..., G)
        Rewards of each group on the last axis; G >= 2.

    Returns
    -------
    numpy.ndarray, shape (..., G)
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
    rewards = _check_group_rewards(rewards, 2, "(a leave-one-out mean needs another member)")
    size = rewards.shape[-1]
    others_mean = (rewards.sum(axis=-1, keepdims=True) - rewards) / (size - 1)
    return rewards - others_mean


def group_normalized_advantages(
    rewards: ArrayLike, eps: float = 1e-6, ddof: int = 0, include_self: bool = True
) -> np.ndarray:
    """Group-normalised (GRPO-style) advantages: rewards standardised within their group.

        A_i = (R_i - mean) / (std + eps),

    with mean and std (``ddof`` degrees of freedom removed) taken over the whole group when
    ``include_self`` is True, or over the other G - 1 members when it is False. The result is
    unchanged by adding a constant to a group's rewards or by scaling them by a positive
    factor (up to ``eps``), and a group whose rewards are all equal gets exactly 0: it
    carries no learning signal.

    Both statistics depend on the samples, so unlike :func:`leave_one_out_advantages` this
    estimator is biased for the policy gradient at finite G; the division by the std also
    reweights groups (easy and hard prompts with small reward spread count more).
    Shao et al. (2024) introduced the normalisation in GRPO; Liu et al. (2025, "Dr. GRPO")
    drop the division by the std and keep only R_i - mean. Implementations differ in the
    std estimator: ``torch.Tensor.std``, which PyTorch code often calls, defaults to the
    unbiased ddof = 1, NumPy to ddof = 0.

    Book: equation (eq-loo-baseline), chapter 3.

    Parameters
    ----------
    rewards : array_like, shape (..., G)
        Rewards of each group on the last axis.
    eps : float, optional
        Non-negative constant added to the std; it keeps the division finite. With
        ``eps = 0`` a group of equal rewards still gets 0 (but with ``include_self=False``
        a sample whose other members are all equal to each other and not to it has no
        finite advantage, which raises).
    ddof : int, optional
        Delta degrees of freedom of the std: divisor n - ddof, where n = G (or G - 1 when
        ``include_self`` is False); must be < n.
    include_self : bool, optional
        Whether R_i enters the mean and std used for sample i.

    Returns
    -------
    numpy.ndarray, shape (..., G)
        The advantages.

    Raises
    ------
    ValueError
        If ``rewards`` is a scalar or non-finite, or has too few members per group (G >= 1,
        or G >= 2 without self); ``eps`` is negative or not finite, or 0 where a std is 0
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
    if not isinstance(include_self, (bool, np.bool_)):
        raise ValueError(f"include_self must be True or False; got {include_self!r}")
    minimum = 1 if include_self else 2
    rewards = _check_group_rewards(
        rewards, minimum, "" if include_self else "(include_self=False needs another member)"
    )
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
        centred_sq = ((rewards - mean) ** 2).sum(axis=-1, keepdims=True)
        variance = centred_sq / (members - ddof)
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
    centred = rewards - mean
    # A group of equal rewards must give exact zeros; rounding in the mean would otherwise
    # leave residues of order 1e-17 that eps = 0 would blow up.
    constant = np.all(rewards == rewards[..., :1], axis=-1, keepdims=True)
    centred = np.where(constant, 0.0, centred)
    scale = np.sqrt(variance) + eps
    undefined = (scale == 0.0) & (centred != 0.0)
    if undefined.any():
        index = tuple(int(i) for i in np.argwhere(undefined)[0])
        raise ValueError(
            "eps must be > 0 when a std is 0 (or underflows to 0) although the sample differs "
            f"from the mean: its advantage would be infinite; got eps = 0.0 at index {index}"
        )
    return np.divide(centred, scale, out=np.zeros_like(centred), where=centred != 0.0)
